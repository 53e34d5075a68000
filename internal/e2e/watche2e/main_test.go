// Package watche2e holds the end-to-end tests of watches and of the
// object lifecycle they observe: watch streams (encodings, resumption,
// compaction, shutdown), periodic bookmarks, graceful and propagated
// deletion, kubectl get -w, rollout status and delete --wait, concurrent
// applies, and the golden patch and apply results (testdata/golden).
package watche2e

import (
	"testing"

	"github.com/kpipe/kpipe/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

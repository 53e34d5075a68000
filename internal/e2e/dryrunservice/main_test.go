// Package dryrunservice holds the end-to-end tests of Service dry runs
// (dryRun=All): the cluster IP and node ports kube's dry-run allocators
// show, kube's errors, and nothing written to the allocation bitmaps,
// through client-go and the real kubectl.
package dryrunservice

import (
	"testing"

	"github.com/kpipe/kpipe/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

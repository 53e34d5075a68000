// Package e2e holds end-to-end tests: the whole server in-process, on
// real TLS, HTTP/2 and etcd, driven by client-go and the real kubectl.
package e2e

import (
	"testing"

	"github.com/kpipe/kpipe/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

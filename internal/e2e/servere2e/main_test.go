// Package servere2e holds the end-to-end tests of the server itself:
// TLS, HTTP/2 and health endpoints, startup, readiness, post-start and
// pre-shutdown hooks, graceful shutdown, bootstrap fixtures and replicas,
// hot reload of the pipeline and of admission plugins, the request stages,
// profiling and tracing.
package servere2e

import (
	"testing"

	"github.com/kpipe/kpipe/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

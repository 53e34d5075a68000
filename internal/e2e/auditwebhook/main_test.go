// Package auditwebhook holds the end-to-end tests of the audit stage's
// webhook backend: a real HTTPS receiver on 127.0.0.1 named by a
// kubeconfig, fed by requests from client-go and the real kubectl.
package auditwebhook

import (
	"testing"

	"github.com/kpipe/kpipe/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

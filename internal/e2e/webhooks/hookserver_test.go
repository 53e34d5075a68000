package webhooks

import (
	"testing"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
)

type hookServer = e2eutil.HookServer

// The Services of the service-reference cases.
var serviceDNSNames = []string{"wh-svc.webhook-svc.svc", "wh-slice.webhook-svc.svc"}

func startHookServer(t *testing.T) *hookServer {
	t.Helper()
	return e2eutil.StartHookServer(t, serviceDNSNames...)
}

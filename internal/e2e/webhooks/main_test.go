// Package webhooks holds the end-to-end tests of MutatingAdmissionWebhook
// and ValidatingAdmissionWebhook: the whole server in-process with client-go,
// calling a real HTTPS webhook server on 127.0.0.1 with its own CA.
package webhooks

import (
	"testing"

	"github.com/kpipe/kpipe/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

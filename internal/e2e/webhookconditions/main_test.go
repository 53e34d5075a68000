// Package webhookconditions holds the end-to-end tests of admission
// webhooks' matchConditions: compiled when a configuration is written,
// with kube's 422, and the `authorizer` variable, evaluated for the
// request's user.
package webhookconditions

import (
	"testing"

	"github.com/kpipe/kpipe/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

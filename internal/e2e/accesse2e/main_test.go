// Package accesse2e holds the end-to-end tests of access control, as
// kube groups it: authentication (client certificates, tokens, service
// accounts), authorization (RBAC, bootstrap roles, aggregation, access
// reviews), impersonation, audit, the built-in admission plugins, and
// the security of resource paths and secrets.
package accesse2e

import (
	"testing"

	"github.com/kpipe/kpipe/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

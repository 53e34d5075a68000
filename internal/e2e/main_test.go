// Package e2e holds the end-to-end tests of the core API: the whole server
// in-process, on real TLS, HTTP/2 and etcd, driven by client-go and the
// real kubectl. CRUD of every kind, lists and pagination, patches and
// server-side apply, defaults, kubectl workflows and hostile input.
// Other features have their own packages below (accesse2e, servere2e,
// storagee2e, watche2e, ...), each with its own shared etcd; e2eutil holds
// the helpers they share.
package e2e

import (
	"testing"

	"github.com/kpipe/kpipe/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

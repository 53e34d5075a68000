// Package storagee2e holds the end-to-end tests of storage: the watch
// cache answering as etcd does, the server through an etcd outage, the
// embedded etcd endpoint file, and encryption at rest.
package storagee2e

import (
	"testing"

	"github.com/kpipe/kpipe/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

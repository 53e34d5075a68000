// Package podsecurity holds the end-to-end tests of the PodSecurity
// admission plugin: the whole server, client-go, real TLS and etcd.
package podsecurity

import (
	"testing"

	"github.com/kpipe/kpipe/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

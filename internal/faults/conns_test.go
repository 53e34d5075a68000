package faults

import (
	"crypto/tls"
	"net"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kpipe/kpipe/internal/testserver"
)

// rawTLS is the admin's TLS config for hand-made connections, HTTP/1.1.
func rawTLS(t *testing.T, ts *testserver.TestServer) *tls.Config {
	t.Helper()
	cfg, err := rest.TLSConfigFor(ts.Config)
	if err != nil {
		t.Fatal(err)
	}
	cfg.NextProtos = []string{"http/1.1"}
	host, _, _ := net.SplitHostPort(ts.URL()[len("https://"):])
	cfg.ServerName = host
	return cfg
}

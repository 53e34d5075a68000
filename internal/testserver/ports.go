package testserver

import (
	"net"
	"testing"
)

// FreePorts returns n distinct free loopback ports, held together while
// chosen so they differ, then released for the caller to bind.
func FreePorts(t testing.TB, n int) []string {
	t.Helper()
	var out []string
	var lns []net.Listener
	for i := 0; i < n; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		_, p, _ := net.SplitHostPort(ln.Addr().String())
		out = append(out, p)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return out
}

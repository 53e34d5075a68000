package etcdwriter

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A handler writing to a client that reads nothing is cut once a write
// has waited for the timeout; one that only sits idle between writes is
// not.
func TestStallGuard(t *testing.T) {
	const timeout = 300 * time.Millisecond
	type result struct {
		stalled bool
		err     error
	}
	results := make(chan result, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		g := newStallGuard(rc, timeout)
		defer g.stop()
		chunk := []byte(strings.Repeat("x", 64<<10))
		if r.URL.Path == "/idle" {
			g.begin()
			w.Write([]byte("hello\n"))
			rc.Flush()
			g.end()
			time.Sleep(4 * timeout) // idle: no write waits
			g.begin()
			_, err := w.Write([]byte("still here\n"))
			if err == nil {
				err = rc.Flush()
			}
			g.end()
			results <- result{g.stalled(), err}
			return
		}
		for start := time.Now(); time.Since(start) < 20*time.Second; {
			g.begin()
			if _, err := w.Write(chunk); err != nil {
				results <- result{g.stalled(), err}
				return
			}
			g.end()
		}
		results <- result{g.stalled(), nil}
	}))
	defer srv.Close()

	t.Run("client that reads nothing", func(t *testing.T) {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "GET /stall HTTP/1.1\r\nHost: x\r\n\r\n")
		start := time.Now()
		select {
		case res := <-results:
			if !res.stalled || res.err == nil {
				t.Fatalf("stalled=%v err=%v", res.stalled, res.err)
			}
			if d := time.Since(start); d > 10*timeout+2*time.Second {
				t.Fatalf("cut after %v", d)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("the stuck write was never cut")
		}
	})
	t.Run("idle between writes", func(t *testing.T) {
		resp, err := http.Get(srv.URL + "/idle")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		for _, want := range []string{"hello\n", "still here\n"} {
			if line, err := br.ReadString('\n'); line != want {
				t.Fatalf("read %q %v, want %q", line, err, want)
			}
		}
		if res := <-results; res.stalled || res.err != nil {
			t.Fatalf("an idle watch was cut: stalled=%v err=%v", res.stalled, res.err)
		}
	})
}

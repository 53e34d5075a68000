package e2e

import (
	"context"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/client-go/rest"

	"github.com/kpipe/kpipe/internal/testserver"
)

// kubectl runs the real kubectl against ts with the admin kubeconfig. It
// skips the test where kubectl is not installed, and says so.
func kubectl(t *testing.T, ts *testserver.TestServer, args ...string) (string, error) {
	t.Helper()
	path, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on PATH; this test needs the real kubectl")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, append([]string{"--kubeconfig", ts.Kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// get fetches path with the admin client and returns status and body.
func get(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func mustContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s does not contain %q:\n%s", what, sub, s)
		}
	}
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// get2 makes one GET /readyz with cfg and reports the code.
func get2(cfg *rest.Config) (int, error) {
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return 0, err
	}
	resp, err := c.Get(cfg.Host + "/readyz")
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func mustLoopbackClient(t *testing.T, ts *testserver.TestServer) *http.Client {
	t.Helper()
	c, err := rest.HTTPClientFor(ts.Loopback())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func clientLease(id int64) clientv3.LeaseID { return clientv3.LeaseID(id) }

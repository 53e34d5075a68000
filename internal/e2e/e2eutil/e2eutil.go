// Package e2eutil holds the helpers the end-to-end test packages under
// internal/e2e share: kubectl and HTTP against a testserver, polling, and
// the small objects most tests create. It is imported only by tests.
package e2eutil

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kpipe/kpipe/internal/testserver"
)

// Kubectl runs the real kubectl against ts with the admin kubeconfig. It
// skips the test where kubectl is not installed, and says so.
func Kubectl(t *testing.T, ts *testserver.TestServer, args ...string) (string, error) {
	t.Helper()
	return KubectlAs(t, ts.Kubeconfig, args...)
}

// Get fetches url with c and returns status and body.
func Get(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, body := GetAs(t, c, url, "")
	return resp.StatusCode, string(body)
}

// GetAs fetches url with c asking for accept (none when empty) and returns
// the response, its body already read and closed.
func GetAs(t *testing.T, c *http.Client, url, accept string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// MustContain reports an error for each of subs that s, named what, lacks.
func MustContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s does not contain %q:\n%s", what, sub, s)
		}
	}
}

// Eventually polls cond until it holds or the timeout passes.
func Eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// MustLoopbackClient is an HTTP client with the server's own loopback
// credentials.
func MustLoopbackClient(t *testing.T, ts *testserver.TestServer) *http.Client {
	t.Helper()
	c, err := rest.HTTPClientFor(ts.Loopback())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// KubectlStep is one kubectl run, the text its output must hold and
// whether it must fail.
type KubectlStep struct {
	Args    []string
	Want    []string
	WantErr bool
}

// KubectlSteps runs steps in order against ts, stopping at the first run
// whose failure is not as the step says.
func KubectlSteps(t *testing.T, ts *testserver.TestServer, steps []KubectlStep) {
	t.Helper()
	for _, s := range steps {
		what := "kubectl " + strings.Join(s.Args, " ")
		out, err := Kubectl(t, ts, s.Args...)
		if (err != nil) != s.WantErr {
			t.Fatalf("%s: err=%v (want error: %v)\n%s", what, err, s.WantErr, out)
		}
		MustContain(t, what, out, s.Want...)
	}
}

package bench

import (
	"bytes"
	"context"
	"crypto/tls"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The floor child serves what the create and get workloads send, over
// TLS 1.2+ and HTTP/2 with its own CA, and goes away with its data dir
// when stopped.
func TestFloorServer(t *testing.T) {
	ctx := context.Background()
	f, err := startFloor(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			f.stop()
		}
	}()
	if !strings.HasPrefix(f.url, "https://127.0.0.1:") || f.config.Insecure || len(f.config.CAData) == 0 {
		t.Fatalf("floor config: url %q, %+v", f.url, f.config.TLSClientConfig)
	}
	c, err := newClient(f.config, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()

	// HTTP/2 over TLS 1.2 or later, verified against the floor's CA.
	resp, err := c.hc().Get(f.url + "/api/v1/namespaces/none")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 || resp.TLS == nil || resp.TLS.Version < tls.VersionTLS12 || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET: proto %s, TLS %+v, code %d", resp.Proto, resp.TLS, resp.StatusCode)
	}

	// ^C goes to the whole process group: the child leaves it to its parent.
	if err := f.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := c.ensureNamespace(ctx, "ns"); err != nil {
		t.Fatalf("ensureNamespace: %v", err)
	}
	if _, err := c.do(ctx, "GET", "/api/v1/namespaces/ns", nil, http.StatusOK); err != nil {
		t.Fatal(err)
	}

	path := configMapsPath("ns")
	body := configMap("ns", "a", "run1", "", payload(64), "")
	got, err := c.do(ctx, "POST", path, body, http.StatusCreated)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("create: %v, answer %s", err, got)
	}
	if _, err := c.do(ctx, "POST", path, body, http.StatusCreated); err == nil || !strings.Contains(err.Error(), "409 "+path+"/a already exists") {
		t.Errorf("second create: %v, want 409 AlreadyExists", err)
	}
	if _, err := c.do(ctx, "POST", path, []byte(`{"metadata":{}}`), http.StatusCreated); err == nil || !strings.Contains(err.Error(), ": 422 ") {
		t.Errorf("create without a name: %v, want 422", err)
	}
	got, err = c.do(ctx, "GET", path+"/a", nil, http.StatusOK)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("get: %v, answer %s", err, got)
	}
	if _, err := c.do(ctx, "PUT", path+"/a", body, http.StatusOK); err == nil || !strings.Contains(err.Error(), ": 405 ") {
		t.Errorf("PUT: %v, want 405", err)
	}
	if _, err := c.do(ctx, "DELETE", path+"/a", nil, http.StatusOK); err != nil {
		t.Fatal(err)
	}
	if _, err := c.do(ctx, "GET", path+"/a", nil, http.StatusNotFound); err != nil {
		t.Errorf("get after delete: %v", err)
	}
	// The name is free again in etcd too.
	if _, err := c.do(ctx, "POST", path, body, http.StatusCreated); err != nil {
		t.Fatalf("create after delete: %v", err)
	}
	// Cleanup's delete of the collection removes every object under it.
	if _, err := c.do(ctx, "POST", path, configMap("ns", "b", "run1", "", "x", ""), http.StatusCreated); err != nil {
		t.Fatal(err)
	}
	if err := c.deleteRun(ctx, "ns", "run1"); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b"} {
		if _, err := c.do(ctx, "GET", path+"/"+n, nil, http.StatusNotFound); err != nil {
			t.Errorf("get %s after deleting the collection: %v", n, err)
		}
	}
	if _, err := c.do(ctx, "GET", "/api/v1/namespaces/ns", nil, http.StatusOK); err != nil {
		t.Errorf("the namespace went with its configmaps: %v", err)
	}

	// stop ends the child cleanly (exit 0 on its closed stdin, not killed)
	// and removes the data dir.
	if _, err := os.Stat(f.dir); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	f.stop()
	stopped = true
	if st := f.cmd.ProcessState; st == nil || !st.Success() {
		t.Errorf("child after stop: %v", st)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("stop took %v", d)
	}
	if _, err := os.Stat(f.dir); !os.IsNotExist(err) {
		t.Errorf("data dir %s after stop: %v", f.dir, err)
	}
}

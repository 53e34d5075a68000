package e2eutil

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kpipe/kpipe/internal/server/certs"
	"github.com/kpipe/kpipe/internal/testserver"
)

// APIServer starts a server with default options, stopped when the test
// ends, and returns it with an admin clientset. Tests sharing the
// package's etcd each work in their own namespace.
func APIServer(t *testing.T) (*testserver.TestServer, kubernetes.Interface) {
	t.Helper()
	ts := testserver.Start(t, testserver.Options{})
	return ts, kubernetes.NewForConfigOrDie(ts.Config)
}

// Clientset makes a clientset from cfg or fails the test.
func Clientset(t *testing.T, cfg *rest.Config) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// RawClient trusts the server's CA and presents cert, if any.
func RawClient(t *testing.T, ts *testserver.TestServer, cert *tls.Certificate) *http.Client {
	t.Helper()
	caPEM, err := os.ReadFile(filepath.Join(ts.StateDir, "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("ca.crt holds no certificate")
	}
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	tr := &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// Do sends GET path to ts with c and an optional bearer token, and
// returns status and body.
func Do(t *testing.T, c *http.Client, ts *testserver.TestServer, path, token string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", ts.URL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	buf, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, buf
}

// IssueClientCert has ca issue a client certificate for user cn in
// groups orgs, valid for an hour.
func IssueClientCert(t *testing.T, ca *certs.Authority, cn string, orgs ...string) *tls.Certificate {
	t.Helper()
	certPEM, keyPEM, err := ca.IssueClient(cn, orgs, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return &pair
}

// Warnings collects the Warning headers (299) a client sees; set it as
// a rest.Config's WarningHandler.
type Warnings struct {
	mu   sync.Mutex
	msgs []string
}

// HandleWarningHeader implements rest.WarningHandler.
func (w *Warnings) HandleWarningHeader(code int, _ string, text string) {
	if code != 299 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

// Take returns the warnings seen since the last Take.
func (w *Warnings) Take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.msgs
	w.msgs = nil
	return out
}

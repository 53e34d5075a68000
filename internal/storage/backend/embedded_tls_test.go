package backend

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
)

// The embedded etcd's ports are open to every local process, so they must
// let in only holders of a certificate from its own etcd CA: a plain
// client, a TLS client without a certificate and one with a certificate of
// another CA are all refused, on the client port and on the peer port.
func TestEmbeddedRequiresClientCert(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	b := openEmbeddedT(t, filepath.Join(base, "etcd"))
	own := b.ClientTLS
	other := newPKI(t, t.TempDir()) // a CA of someone else, with a client cert
	clientAddr := b.etcd.Clients[0].Addr().String()
	peerAddr := b.etcd.Peers[0].Addr().String()
	peerCert := filepath.Join(base, "etcd-pki", "etcd-peer.crt")
	peerKey := filepath.Join(base, "etcd-pki", "etcd-peer.key")

	tests := []struct {
		name       string
		url        string
		cert, key  string
		wantStatus int // 0: refused
	}{
		{"client port, plain", "http://" + clientAddr + "/health", "", "", 0},
		{"client port, TLS without client cert", "https://" + clientAddr + "/health", "", "", 0},
		{"client port, client cert of another CA", "https://" + clientAddr + "/health", other.clientCert, other.clientKey, 0},
		{"client port, etcd-client cert", "https://" + clientAddr + "/health", own.CertFile, own.KeyFile, http.StatusOK},
		{"peer port, plain", "http://" + peerAddr + "/members", "", "", 0},
		{"peer port, TLS without client cert", "https://" + peerAddr + "/members", "", "", 0},
		{"peer port, client cert of another CA", "https://" + peerAddr + "/members", other.clientCert, other.clientKey, 0},
		{"peer port, etcd-peer cert", "https://" + peerAddr + "/members", peerCert, peerKey, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tlsGet(t, tt.url, own.CAFile, tt.cert, tt.key); got != tt.wantStatus {
				t.Errorf("GET %s: status %d, want %d (0: refused)", tt.url, got, tt.wantStatus)
			}
		})
	}

	// etcd's own client, as the bench baseline and etcdctl use it.
	grpcTests := []struct {
		name     string
		endpoint string
		cfg      Config
		wantErr  bool
	}{
		{"plain", "http://" + clientAddr, Config{}, true},
		{"TLS without client cert", "https://" + clientAddr, Config{CAFile: own.CAFile}, true},
		{"etcd-client cert", "https://" + clientAddr, Config{CAFile: own.CAFile, CertFile: own.CertFile, KeyFile: own.KeyFile}, false},
	}
	for _, tt := range grpcTests {
		t.Run("etcd client, "+tt.name, func(t *testing.T) {
			t.Parallel()
			tt.cfg.Endpoints = []string{tt.endpoint}
			tt.cfg.DialTimeout = 2 * time.Second
			ext, err := Open(context.Background(), tt.cfg, zap.NewNop())
			if err == nil {
				defer ext.Close()
			}
			if tt.wantErr && err == nil {
				t.Fatal("a client reached the embedded etcd")
			}
			if !tt.wantErr && err != nil {
				t.Fatalf("Open: %v", err)
			}
		})
	}
}

// tlsGet returns the status of a GET, or 0 when the connection is refused.
// A certificate given is always sent, even when the server's list of
// acceptable CAs does not name its issuer (Go's client would send none).
func tlsGet(t *testing.T, url, caFile, cert, key string) int {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	tc := &tls.Config{RootCAs: x509.NewCertPool(), MinVersion: tls.VersionTLS12}
	tc.RootCAs.AppendCertsFromPEM(pem)
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			t.Fatal(err)
		}
		tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }
	}
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}
	resp, err := c.Get(url)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// Whatever needs the embedded etcd from outside the process finds its CA
// and client certificate under the PKI dir, readable by the server's user
// alone.
func TestEmbeddedClientFiles(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	pki := filepath.Join(base, "pki")
	b, err := Open(context.Background(), Config{DataDir: filepath.Join(base, "etcd"), PKIDir: pki}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	want := ClientFiles{
		CAFile:   filepath.Join(pki, "etcd-ca.crt"),
		CertFile: filepath.Join(pki, "etcd-client.crt"),
		KeyFile:  filepath.Join(pki, "etcd-client.key"),
	}
	if b.ClientTLS != want {
		t.Errorf("ClientTLS = %+v, want %+v", b.ClientTLS, want)
	}
	fi, err := os.Stat(pki)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o700 {
		t.Errorf("%s: mode %v, want 0700", pki, got)
	}
	for _, f := range []string{want.CAFile, want.CertFile, want.KeyFile} {
		t.Run(filepath.Base(f), func(t *testing.T) {
			fi, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != 0o600 {
				t.Errorf("mode %v, want 0600", got)
			}
		})
	}
}

package x509

import (
	"crypto/tls"
	stdx509 "crypto/x509"
	"encoding/pem"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/pipeline/pipelinetest"
	"github.com/kpipe/kpipe/internal/server/certs"
)

func newCA(t *testing.T) *certs.Authority {
	t.Helper()
	ca, err := certs.LoadOrCreateCA(t.TempDir(), "ca", "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func clientCert(t *testing.T, ca *certs.Authority, cn string, orgs []string, validity time.Duration) *stdx509.Certificate {
	t.Helper()
	certPEM, _, err := ca.IssueClient(cn, orgs, validity)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(certPEM)
	c, err := stdx509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestAuthenticateRequest(t *testing.T) {
	trusted, other := newCA(t), newCA(t)
	pool := stdx509.NewCertPool()
	pool.AddCert(trusted.Cert)
	admin := clientCert(t, trusted, "kubernetes-admin", []string{"system:masters", "devs"}, time.Hour)
	foreign := clientCert(t, other, "mallory", []string{"system:masters"}, time.Hour)
	later := func() time.Time { return time.Now().Add(2 * time.Hour) }

	tests := []struct {
		name       string
		peers      []*stdx509.Certificate
		noTLS      bool
		now        func() time.Time
		noPool     bool
		wantOK     bool
		wantErr    string
		wantUser   string
		wantGroups []string
	}{
		{name: "good", peers: []*stdx509.Certificate{admin}, wantOK: true, wantUser: "kubernetes-admin", wantGroups: []string{"devs", "system:masters"}},
		{name: "unknown CA", peers: []*stdx509.Certificate{foreign}, wantErr: "unknown authority"},
		{name: "expired", peers: []*stdx509.Certificate{admin}, now: later, wantErr: "expired"},
		{name: "no cert", peers: nil},
		{name: "plain HTTP", noTLS: true},
		{name: "no CA pool", peers: []*stdx509.Certificate{admin}, noPool: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pool
			if tt.noPool {
				p = nil
			}
			a := &Authenticator{roots: func() *stdx509.CertPool { return p }, now: tt.now}
			r := httptest.NewRequest("GET", "/version", nil)
			if tt.noTLS {
				r.TLS = nil
			} else {
				r.TLS = &tls.ConnectionState{PeerCertificates: tt.peers}
			}
			u, ok, err := a.AuthenticateRequest(r)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				if ok || u != nil {
					t.Fatalf("ok = %v, user = %v with an error", ok, u)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if !ok {
				return
			}
			if u.Name != tt.wantUser || !slices.Equal(u.Groups, tt.wantGroups) {
				t.Errorf("user = %q %v, want %q %v", u.Name, u.Groups, tt.wantUser, tt.wantGroups)
			}
			if id := u.Extra[CredentialIDKey]; len(id) != 1 || !strings.HasPrefix(id[0], "X509SHA256=") {
				t.Errorf("credential id = %v", id)
			}
		})
	}
}

func TestRegister(t *testing.T) {
	in, err := pipelinetest.Build(t, Register, pipeline.KindAuthenticator, Name, nil)
	pipelinetest.WantFieldError(t, err, "")
	if _, ok := in.Value.(*Authenticator); !ok {
		t.Fatalf("built %T", in.Value)
	}
	_, err = pipelinetest.Build(t, Register, pipeline.KindAuthenticator, Name, map[string]any{"x": 1})
	pipelinetest.WantFieldError(t, err, "pipeline[0] (x509).config")
}

func TestProvisionNeedsClientCA(t *testing.T) {
	a := &Authenticator{}
	if err := a.Provision(&pipeline.Env{Shared: &pipeline.Shared{}}); err == nil {
		t.Fatal("Provision without a client CA succeeded")
	}
}

// TestVerifiedCache: a chain verified once is not verified again while the
// pool and the time window hold; a new pool (a reloaded bundle), the end of
// the window, or a change to the returned user never leak through it.
func TestVerifiedCache(t *testing.T) {
	trusted, other := newCA(t), newCA(t)
	poolA := stdx509.NewCertPool()
	poolA.AddCert(trusted.Cert)
	poolB := stdx509.NewCertPool()
	poolB.AddCert(other.Cert)
	admin := clientCert(t, trusted, "kubernetes-admin", []string{"system:masters"}, time.Hour)
	cur := poolA
	clock := time.Now()
	a := &Authenticator{roots: func() *stdx509.CertPool { return cur }, now: func() time.Time { return clock }}
	auth := func() (string, error) {
		r := httptest.NewRequest("GET", "/version", nil)
		r.TLS = &tls.ConnectionState{PeerCertificates: []*stdx509.Certificate{admin}}
		u, ok, err := a.AuthenticateRequest(r)
		if err != nil || !ok {
			return "", err
		}
		name := u.Name
		// A later stage changing the user must not change the cache.
		u.Name, u.Groups[0] = "mallory", "evil"
		u.Extra[CredentialIDKey][0] = "x"
		return name, nil
	}
	for i := 0; i < 3; i++ {
		if name, err := auth(); err != nil || name != "kubernetes-admin" {
			t.Fatalf("request %d: %q, %v", i, name, err)
		}
	}
	if n := len(a.verified.entries); n != 1 {
		t.Fatalf("%d cache entries, want 1", n)
	}
	r := httptest.NewRequest("GET", "/version", nil)
	r.TLS = &tls.ConnectionState{PeerCertificates: []*stdx509.Certificate{admin}}
	if u, _, _ := a.AuthenticateRequest(r); u == nil || u.Groups[0] != "system:masters" || u.Extra[CredentialIDKey][0] == "x" {
		t.Fatalf("cached user changed: %+v", u)
	}
	// The bundle is reloaded without the admin's CA: refused at once.
	cur = poolB
	if _, err := auth(); err == nil || !strings.Contains(err.Error(), "unknown authority") {
		t.Fatalf("after the CA reload: %v, want unknown authority", err)
	}
	cur = poolA
	if _, err := auth(); err != nil {
		t.Fatal(err)
	}
	// Past NotAfter the cached result is not used.
	clock = clock.Add(2 * time.Hour)
	if _, err := auth(); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("after expiry: %v, want expired", err)
	}
}

func BenchmarkAuthenticateRequest(b *testing.B) {
	ca, err := certs.LoadOrCreateCA(b.TempDir(), "ca", "test-ca")
	if err != nil {
		b.Fatal(err)
	}
	pool := stdx509.NewCertPool()
	pool.AddCert(ca.Cert)
	certPEM, _, err := ca.IssueClient("kubernetes-admin", []string{"system:masters"}, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	block, _ := pem.Decode(certPEM)
	c, err := stdx509.ParseCertificate(block.Bytes)
	if err != nil {
		b.Fatal(err)
	}
	a := &Authenticator{roots: func() *stdx509.CertPool { return pool }}
	r := httptest.NewRequest("GET", "/version", nil)
	r.TLS = &tls.ConnectionState{PeerCertificates: []*stdx509.Certificate{c}}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := a.AuthenticateRequest(r); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

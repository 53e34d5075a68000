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

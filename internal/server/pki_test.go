package server

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/server/certs"
)

// TestClientCAPoolPerBundle: the client CA pool is one pool per loaded
// bundle (the x509 authenticator caches verified chains per pool), and a
// reloaded bundle gives a new pool that trusts only what it holds.
func TestClientCAPoolPerBundle(t *testing.T) {
	dir := t.TempDir()
	ca1, err := certs.LoadOrCreateCA(dir, "one", "one")
	if err != nil {
		t.Fatal(err)
	}
	ca2, err := certs.LoadOrCreateCA(dir, "two", "two")
	if err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(dir, "bundle.crt")
	if err := os.WriteFile(bundle, ca1.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.StateDir = filepath.Join(dir, "state")
	cfg.TLS.ClientCAFile = bundle
	p, err := setupPKI(cfg, net.ParseIP("127.0.0.1"), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	client := func(a *certs.Authority) *x509.Certificate {
		certPEM, _, err := a.IssueClient("u", nil, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := pem.Decode(certPEM)
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	trusts := func(pool *x509.CertPool, c *x509.Certificate) bool {
		_, err := c.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		return err == nil
	}
	alice, bob, admin := client(ca1), client(ca2), client(p.clientCA)
	first := p.clientCAs()
	if p.clientCAs() != first {
		t.Fatal("two pools for one bundle")
	}
	if !trusts(first, alice) || trusts(first, bob) || !trusts(first, admin) {
		t.Fatal("the first pool trusts the wrong clients")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, run := range p.runners {
		go run(ctx)
	}
	time.Sleep(100 * time.Millisecond)
	if err := os.WriteFile(bundle, ca2.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for p.clientCAs() == first {
		if time.Now().After(deadline) {
			t.Fatal("the bundle was not reloaded")
		}
		time.Sleep(20 * time.Millisecond)
	}
	second := p.clientCAs()
	if trusts(second, alice) || !trusts(second, bob) || !trusts(second, admin) {
		t.Fatal("the reloaded pool trusts the wrong clients")
	}
}

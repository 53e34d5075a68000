package certs

import (
	"bytes"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
)

func TestEnsureEmbeddedEtcd(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	f, err := EnsureEmbeddedEtcd(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := []string{f.CA, filepath.Join(dir, "etcd-ca.key"), f.ServerCert, f.ServerKey, f.PeerCert, f.PeerKey, f.ClientCert, f.ClientKey}
	before := map[string][]byte{}
	t.Run("modes", func(t *testing.T) {
		wantMode(t, dir, 0o700)
		for _, p := range files {
			wantMode(t, p, 0o600)
		}
	})
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		before[p] = b
	}

	ca := readCert(t, f.CA)
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	tests := []struct {
		name   string
		cert   string
		host   string
		usages []x509.ExtKeyUsage
	}{
		// etcd's gRPC gateway dials the client port with the serving cert.
		{"server serves loopback", f.ServerCert, "127.0.0.1", []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}},
		{"server is a client too", f.ServerCert, "", []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
		{"peer serves loopback", f.PeerCert, "127.0.0.1", []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}},
		{"peer is a client too", f.PeerCert, "", []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
		{"client", f.ClientCert, "", []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := readCert(t, tt.cert)
			if _, err := c.Verify(x509.VerifyOptions{Roots: roots, DNSName: tt.host, KeyUsages: tt.usages}); err != nil {
				t.Errorf("verify: %v", err)
			}
		})
	}

	t.Run("second call reuses and tightens", func(t *testing.T) {
		// A looser mode left by hand (or an older version) is put back.
		if err := os.Chmod(f.CA, 0o644); err != nil {
			t.Fatal(err)
		}
		again, err := EnsureEmbeddedEtcd(dir)
		if err != nil {
			t.Fatal(err)
		}
		if again != f {
			t.Errorf("files %+v, want %+v", again, f)
		}
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, before[p]) {
				t.Errorf("%s was rewritten", p)
			}
			wantMode(t, p, 0o600)
		}
	})
}

package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func newCA(t *testing.T) *Authority {
	t.Helper()
	a, err := LoadOrCreateCA(t.TempDir(), "ca", "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := parseCertPEM(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c
}

func wantMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s: mode %v, want %v", path, got, want)
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// pairPEM encodes an in-memory pair as the files EnsureServing writes.
func pairPEM(t *testing.T, pair tls.Certificate) (certPEM, keyPEM []byte) {
	t.Helper()
	keyPEM, err := encodeKey(pair.PrivateKey.(crypto.Signer))
	if err != nil {
		t.Fatal(err)
	}
	return encodeCert(pair.Certificate[0]), keyPEM
}

func servingPEM(t *testing.T, a *Authority, hosts []string, validity time.Duration) (certPEM, keyPEM []byte) {
	t.Helper()
	pair, err := a.IssueServing(hosts, validity)
	if err != nil {
		t.Fatal(err)
	}
	return pairPEM(t, pair)
}

func TestLoadOrCreateCACreatesThenReuses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	a1, err := LoadOrCreateCA(dir, "ca", "kpipe-ca")
	if err != nil {
		t.Fatal(err)
	}
	a2, err := LoadOrCreateCA(dir, "ca", "ignored-on-reuse")
	if err != nil {
		t.Fatal(err)
	}
	if a1.Cert.SerialNumber.Cmp(a2.Cert.SerialNumber) != 0 {
		t.Errorf("serial changed on reuse: %v then %v", a1.Cert.SerialNumber, a2.Cert.SerialNumber)
	}
	if string(a1.CertPEM) != string(a2.CertPEM) {
		t.Error("CertPEM changed on reuse")
	}
	c := a2.Cert
	if !c.IsCA || c.Subject.CommonName != "kpipe-ca" {
		t.Errorf("IsCA=%v CN=%q", c.IsCA, c.Subject.CommonName)
	}
	if pub, ok := c.PublicKey.(*ecdsa.PublicKey); !ok || pub.Curve != elliptic.P256() {
		t.Errorf("public key %T, want ECDSA P-256", c.PublicKey)
	}
	if life := time.Until(c.NotAfter); life < 9*365*24*time.Hour || life > 11*365*24*time.Hour {
		t.Errorf("CA lifetime %v, want about 10 years", life)
	}
	wantMode(t, dir, 0o700)
	wantMode(t, filepath.Join(dir, "ca.key"), 0o600)
	wantMode(t, filepath.Join(dir, "ca.crt"), 0o644)
}

func TestLoadOrCreateCAErrors(t *testing.T) {
	otherKey, err := encodeKey(newCA(t).Key)
	if err != nil {
		t.Fatal(err)
	}
	// Each case damages a valid pair and returns the path the error must name.
	cases := []struct {
		name   string
		damage func(t *testing.T, certFile, keyFile string) string
	}{
		{"cert without key", func(t *testing.T, certFile, keyFile string) string {
			os.Remove(keyFile)
			return keyFile
		}},
		{"key without cert", func(t *testing.T, certFile, keyFile string) string {
			os.Remove(certFile)
			return certFile
		}},
		{"garbage cert", func(t *testing.T, certFile, keyFile string) string {
			writeFile(t, certFile, []byte("not a certificate"))
			return certFile
		}},
		{"garbage key", func(t *testing.T, certFile, keyFile string) string {
			writeFile(t, keyFile, []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"))
			return keyFile
		}},
		{"key of another CA", func(t *testing.T, certFile, keyFile string) string {
			writeFile(t, keyFile, otherKey)
			return keyFile
		}},
		{"cert unreadable", func(t *testing.T, certFile, keyFile string) string {
			// A directory in its place fails to read even for root.
			os.Remove(certFile)
			if err := os.Mkdir(certFile, 0o700); err != nil {
				t.Fatal(err)
			}
			return certFile
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := LoadOrCreateCA(dir, "ca", "test-ca"); err != nil {
				t.Fatal(err)
			}
			want := tc.damage(t, filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key"))
			_, err := LoadOrCreateCA(dir, "ca", "test-ca")
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %s", err, want)
			}
		})
	}
}

func TestEnsureServing(t *testing.T) {
	a := newCA(t)
	other := newCA(t)
	hosts := HostsFor("node-1.example.com", net.ParseIP("10.0.0.5"), net.ParseIP("10.96.0.1"))

	cases := []struct {
		name string
		// prepare puts something at dir/serving.{crt,key} beforehand.
		prepare func(t *testing.T, dir string)
		wantGen bool
	}{
		{"no files", func(*testing.T, string) {}, true},
		{"valid files reused", func(t *testing.T, dir string) {
			ensureServing(t, a, dir, hosts)
		}, false},
		{"host added", func(t *testing.T, dir string) {
			ensureServing(t, a, dir, hosts[:len(hosts)-1])
		}, true},
		{"signed by another CA", func(t *testing.T, dir string) {
			ensureServing(t, other, dir, hosts)
		}, true},
		{"expires within 30 days", func(t *testing.T, dir string) {
			c, k := servingPEM(t, a, hosts, 10*24*time.Hour)
			writeFile(t, filepath.Join(dir, "serving.crt"), c)
			writeFile(t, filepath.Join(dir, "serving.key"), k)
		}, true},
		{"key does not match cert", func(t *testing.T, dir string) {
			c, _ := servingPEM(t, a, hosts, time.Hour*24*365)
			_, k := servingPEM(t, a, hosts, time.Hour*24*365)
			writeFile(t, filepath.Join(dir, "serving.crt"), c)
			writeFile(t, filepath.Join(dir, "serving.key"), k)
		}, true},
		{"garbage files", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "serving.crt"), []byte("garbage"))
			writeFile(t, filepath.Join(dir, "serving.key"), []byte("garbage"))
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.prepare(t, dir)
			var before *x509.Certificate
			if _, err := os.Stat(filepath.Join(dir, "serving.crt")); err == nil {
				before, _ = parseCertPEM(must(os.ReadFile(filepath.Join(dir, "serving.crt"))))
			}

			certFile, keyFile, gen, err := a.EnsureServing(dir, "serving", hosts)
			if err != nil {
				t.Fatal(err)
			}
			if gen != tc.wantGen {
				t.Errorf("generated = %v, want %v", gen, tc.wantGen)
			}
			if certFile != filepath.Join(dir, "serving.crt") || keyFile != filepath.Join(dir, "serving.key") {
				t.Errorf("paths %s, %s", certFile, keyFile)
			}
			got := readCert(t, certFile)
			if !gen && (before == nil || got.SerialNumber.Cmp(before.SerialNumber) != 0) {
				t.Error("reused files were rewritten")
			}
			for _, h := range hosts {
				_, err := got.Verify(x509.VerifyOptions{
					DNSName:   h,
					Roots:     a.pool(),
					KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
				})
				if err != nil {
					t.Errorf("verify for %s: %v", h, err)
				}
			}
			if _, err := tls.LoadX509KeyPair(certFile, keyFile); err != nil {
				t.Errorf("files are not a keypair: %v", err)
			}
			wantMode(t, keyFile, 0o600)
			wantMode(t, certFile, 0o644)

			// Whatever was there before, a second call must now reuse.
			if _, _, gen, err := a.EnsureServing(dir, "serving", hosts); err != nil || gen {
				t.Errorf("second call: generated=%v err=%v", gen, err)
			}
		})
	}
}

func ensureServing(t *testing.T, a *Authority, dir string, hosts []string) {
	t.Helper()
	if _, _, _, err := a.EnsureServing(dir, "serving", hosts); err != nil {
		t.Fatal(err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestIssueServing(t *testing.T) {
	a := newCA(t)
	cases := []struct {
		name     string
		hosts    []string
		validity time.Duration
		wantSANs int // 0: expect an error
	}{
		{"mixed hosts", []string{"api.local", "192.0.2.1", "2001:db8::1", "API.local", ""}, time.Hour, 3},
		{"ip only", []string{"127.0.0.1"}, time.Hour, 1},
		{"no hosts", []string{""}, time.Hour, 0},
		{"zero validity", []string{"api.local"}, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pair, err := a.IssueServing(tc.hosts, tc.validity)
			if tc.wantSANs == 0 {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if pair.Leaf == nil || pair.PrivateKey == nil {
				t.Fatal("Leaf or PrivateKey not set")
			}
			if n := len(pair.Leaf.DNSNames) + len(pair.Leaf.IPAddresses); n != tc.wantSANs {
				t.Errorf("%d SANs for hosts %q: %v %v", n, tc.hosts, pair.Leaf.DNSNames, pair.Leaf.IPAddresses)
			}
			for _, h := range tc.hosts {
				if h == "" {
					continue
				}
				if _, err := pair.Leaf.Verify(x509.VerifyOptions{DNSName: h, Roots: a.pool()}); err != nil {
					t.Errorf("verify for %s: %v", h, err)
				}
			}
			if time.Until(pair.Leaf.NotAfter) > tc.validity {
				t.Errorf("NotAfter %v beyond validity %v", pair.Leaf.NotAfter, tc.validity)
			}
		})
	}
}

func TestIssueClient(t *testing.T) {
	a := newCA(t)
	certPEM, keyPEM, err := a.IssueClient("alice", []string{"system:masters", "devs"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatalf("not a keypair: %v", err)
	}
	c, err := parseCertPEM(certPEM)
	if err != nil {
		t.Fatal(err)
	}
	// DER sorts the O values, so compare them as a set.
	if c.Subject.CommonName != "alice" || !slices.Equal(slices.Sorted(slices.Values(c.Subject.Organization)), []string{"devs", "system:masters"}) {
		t.Errorf("subject %v", c.Subject)
	}
	if _, err := c.Verify(x509.VerifyOptions{Roots: a.pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("verify as client: %v", err)
	}
	if _, err := c.Verify(x509.VerifyOptions{Roots: a.pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err == nil {
		t.Error("client certificate also verifies as a server certificate")
	}
	if _, _, err := a.IssueClient("", nil, time.Hour); err == nil {
		t.Error("empty CN accepted")
	}
}

func TestEnsureClientFiles(t *testing.T) {
	a := newCA(t)
	other := newCA(t)
	orgs := []string{"system:masters", "ops"}
	cases := []struct {
		name      string
		prepare   func(t *testing.T, dir string)
		wantReuse bool
	}{
		{"no files", func(*testing.T, string) {}, false},
		{"same subject reused", func(t *testing.T, dir string) {
			ensureClient(t, a, dir, "admin", orgs)
		}, true},
		{"orgs reordered reused", func(t *testing.T, dir string) {
			ensureClient(t, a, dir, "admin", []string{"ops", "system:masters"})
		}, true},
		{"other CN", func(t *testing.T, dir string) {
			ensureClient(t, a, dir, "someone", orgs)
		}, false},
		{"org dropped", func(t *testing.T, dir string) {
			ensureClient(t, a, dir, "admin", orgs[:1])
		}, false},
		{"signed by another CA", func(t *testing.T, dir string) {
			ensureClient(t, other, dir, "admin", orgs)
		}, false},
		{"expires within 30 days", func(t *testing.T, dir string) {
			c, k, err := a.IssueClient("admin", orgs, 24*time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, "admin.crt"), c)
			writeFile(t, filepath.Join(dir, "admin.key"), k)
		}, false},
		{"serving cert in place", func(t *testing.T, dir string) {
			c, k := servingPEM(t, a, []string{"admin"}, 365*24*time.Hour)
			writeFile(t, filepath.Join(dir, "admin.crt"), c)
			writeFile(t, filepath.Join(dir, "admin.key"), k)
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.prepare(t, dir)
			before, _ := os.ReadFile(filepath.Join(dir, "admin.crt"))

			certFile, keyFile, err := a.EnsureClientFiles(dir, "admin", "admin", orgs)
			if err != nil {
				t.Fatal(err)
			}
			after := must(os.ReadFile(certFile))
			if reused := string(before) == string(after); reused != tc.wantReuse {
				t.Errorf("reused = %v, want %v", reused, tc.wantReuse)
			}
			c := readCert(t, certFile)
			if c.Subject.CommonName != "admin" || !slices.Equal(slices.Sorted(slices.Values(c.Subject.Organization)), []string{"ops", "system:masters"}) {
				t.Errorf("subject %v", c.Subject)
			}
			if _, err := c.Verify(x509.VerifyOptions{Roots: a.pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
				t.Errorf("verify: %v", err)
			}
			if _, err := tls.LoadX509KeyPair(certFile, keyFile); err != nil {
				t.Errorf("files are not a keypair: %v", err)
			}
			wantMode(t, keyFile, 0o600)
		})
	}
}

func ensureClient(t *testing.T, a *Authority, dir, cn string, orgs []string) {
	t.Helper()
	if _, _, err := a.EnsureClientFiles(dir, "admin", cn, orgs); err != nil {
		t.Fatal(err)
	}
}

func TestHostsFor(t *testing.T) {
	std := []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
	loop := []string{"localhost", "127.0.0.1", "::1"}
	cases := []struct {
		name      string
		hostname  string
		advertise net.IP
		serviceIP net.IP
		want      []string
	}{
		{"all set", "Node-1", net.ParseIP("10.0.0.5"), net.ParseIP("10.96.0.1"),
			slices.Concat(loop, []string{"node-1", "10.0.0.5"}, std, []string{"10.96.0.1"})},
		{"nothing set", "", nil, nil, slices.Concat(loop, std)},
		{"unspecified advertise", "", net.IPv4zero, net.ParseIP("10.96.0.1"),
			slices.Concat(loop, std, []string{"10.96.0.1"})},
		{"duplicates dropped", "localhost", net.ParseIP("127.0.0.1"), net.ParseIP("::1"), slices.Concat(loop, std)},
		{"service IP equals advertise", "h", net.ParseIP("10.0.0.5"), net.ParseIP("10.0.0.5"),
			slices.Concat(loop, []string{"h", "10.0.0.5"}, std)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := HostsFor(tc.hostname, tc.advertise, tc.serviceIP); !slices.Equal(got, tc.want) {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

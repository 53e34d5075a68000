package backend

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"
)

func openEmbeddedT(t *testing.T, dir string) *Backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := Open(ctx, Config{DataDir: dir}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("Open embedded: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func put(t *testing.T, c *clientv3.Client, k, v string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Put(ctx, k, v); err != nil {
		t.Fatalf("Put %s: %v", k, err)
	}
}

func get(t *testing.T, c *clientv3.Client, k string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := c.Get(ctx, k)
	if err != nil {
		t.Fatalf("Get %s: %v", k, err)
	}
	if len(resp.Kvs) == 0 {
		return ""
	}
	return string(resp.Kvs[0].Value)
}

// freeAddr returns a loopback address that nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

func TestEmbedded(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "etcd")
	b := openEmbeddedT(t, dir)

	if !b.Embedded {
		t.Error("Embedded = false")
	}
	if len(b.Endpoints) != 1 || !strings.HasPrefix(b.Endpoints[0], "https://127.0.0.1:") || strings.HasSuffix(b.Endpoints[0], ":0") {
		t.Errorf("Endpoints = %v, want one real loopback address", b.Endpoints)
	}
	put(t, b.Client, "/k", "v")
	if got := get(t, b.Client, "/k"); got != "v" {
		t.Errorf("Get = %q, want v", got)
	}
	if err := b.Check(context.Background()); err != nil {
		t.Errorf("Check: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "member")); err != nil {
		t.Errorf("data not written to data dir: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestEmbeddedSideBySide(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	a := openEmbeddedT(t, filepath.Join(base, "a"))
	b := openEmbeddedT(t, filepath.Join(base, "b"))

	if a.Endpoints[0] == b.Endpoints[0] {
		t.Fatalf("both backends on %s", a.Endpoints[0])
	}
	put(t, a.Client, "/k", "from-a")
	put(t, b.Client, "/k", "from-b")
	if got := get(t, a.Client, "/k"); got != "from-a" {
		t.Errorf("a: Get = %q, want from-a", got)
	}
	if got := get(t, b.Client, "/k"); got != "from-b" {
		t.Errorf("b: Get = %q, want from-b", got)
	}
}

func TestEmbeddedRestartKeepsData(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "etcd")
	first := openEmbeddedT(t, dir)
	put(t, first.Client, "/k", "kept")
	if err := first.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	second := openEmbeddedT(t, dir)
	if got := get(t, second.Client, "/k"); got != "kept" {
		t.Errorf("after restart Get = %q, want kept", got)
	}
}

func TestEmbeddedDataDirErrors(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		dir     string
		wantErr string
	}{
		{"empty", "", "needs a data dir"},
		{"parent is a file", filepath.Join(file, "etcd"), filepath.Join(file, "etcd")},
		{"dir is a file", file, file},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Open(context.Background(), Config{DataDir: tt.dir}, zap.NewNop())
			if err == nil {
				_ = b.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not mention %q", err, tt.wantErr)
			}
		})
	}
}

func TestExternalUnreachable(t *testing.T) {
	t.Parallel()
	ep := "http://" + freeAddr(t)
	start := time.Now()
	b, err := Open(context.Background(), Config{Endpoints: []string{ep}, DialTimeout: time.Second}, zaptest.NewLogger(t))
	if err == nil {
		_ = b.Close()
		t.Fatal("Open succeeded against a closed port")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Open took %v, want about the dial timeout", d)
	}
	want := "cannot reach etcd at [" + ep + "]: context deadline exceeded"
	if err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

func TestExternalAgainstEmbedded(t *testing.T) {
	t.Parallel()
	emb := openEmbeddedT(t, filepath.Join(t.TempDir(), "etcd"))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tc := emb.ClientTLS
	ext, err := Open(ctx, Config{Endpoints: emb.Endpoints, CAFile: tc.CAFile, CertFile: tc.CertFile, KeyFile: tc.KeyFile}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("Open external: %v", err)
	}
	defer func() { _ = ext.Close() }()

	if ext.Embedded {
		t.Error("Embedded = true for external backend")
	}
	if err := ext.Check(ctx); err != nil {
		t.Errorf("Check: %v", err)
	}
	put(t, ext.Client, "/k", "via-external")
	if got := get(t, emb.Client, "/k"); got != "via-external" {
		t.Errorf("Get = %q, want via-external", got)
	}
	// Closing an external backend must leave the server it talks to running.
	if err := ext.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := emb.Check(ctx); err != nil {
		t.Errorf("embedded Check after external Close: %v", err)
	}
}

func TestCheckFails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		breakIt func(b *Backend) context.Context
	}{
		{"cancelled ctx", func(*Backend) context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}},
		{"embedded server closed", func(b *Backend) context.Context {
			b.etcdClosing.Store(true)
			b.etcd.Close()
			b.etcd = nil                // embed.Etcd.Close must not run twice
			return context.Background() // Check bounds it by the dial timeout
		}},
		{"backend closed", func(b *Backend) context.Context {
			_ = b.Close()
			return context.Background()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			b, err := Open(ctx, Config{DataDir: filepath.Join(t.TempDir(), "etcd"), DialTimeout: time.Second}, zaptest.NewLogger(t))
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer func() { _ = b.Close() }()

			cctx := tt.breakIt(b)
			start := time.Now()
			err = b.Check(cctx)
			if err == nil {
				t.Fatal("Check succeeded")
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Check took %v", d)
			}
			if !strings.Contains(err.Error(), "etcd at "+b.Endpoints[0]) && !strings.Contains(err.Error(), "etcd at ["+b.Endpoints[0]+"]") {
				t.Errorf("error %q does not name the endpoint", err)
			}
		})
	}
}

// pki writes a CA, a server cert for 127.0.0.1 and a client cert to dir.
type pki struct{ ca, serverCert, serverKey, clientCert, clientKey string }

func newPKI(t *testing.T, dir string) pki {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "test-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	leaf := func(name string, serial int64, usage x509.ExtKeyUsage) (string, string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: name},
			NotBefore:    time.Now().Add(-time.Hour),
			NotAfter:     time.Now().Add(time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
			IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return write(name+".crt", "CERTIFICATE", der), write(name+".key", "EC PRIVATE KEY", keyDER)
	}
	p := pki{ca: write("ca.crt", "CERTIFICATE", caDER)}
	p.serverCert, p.serverKey = leaf("server", 2, x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey = leaf("client", 3, x509.ExtKeyUsageClientAuth)
	return p
}

// startTLSEtcd runs an etcd that requires client certificates, standing in
// for an external production cluster.
func startTLSEtcd(t *testing.T, p pki) string {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = t.TempDir()
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	client := url.URL{Scheme: "https", Host: "127.0.0.1:0"}
	peer := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.ClientTLSInfo.CertFile = p.serverCert
	cfg.ClientTLSInfo.KeyFile = p.serverKey
	cfg.ClientTLSInfo.TrustedCAFile = p.ca
	cfg.ClientTLSInfo.ClientCertAuth = true
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		t.Fatal("TLS etcd not ready")
	}
	return "https://" + e.Clients[0].Addr().String()
}

func TestExternalTLS(t *testing.T) {
	t.Parallel()
	p := newPKI(t, t.TempDir())
	ep := startTLSEtcd(t, p)

	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"client cert", Config{CAFile: p.ca, CertFile: p.clientCert, KeyFile: p.clientKey}, ""},
		{"no client cert", Config{CAFile: p.ca}, "cannot reach etcd at [" + ep + "]"},
		{"untrusted server", Config{CertFile: p.clientCert, KeyFile: p.clientKey}, "cannot reach etcd at [" + ep + "]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.cfg.Endpoints = []string{ep}
			tt.cfg.DialTimeout = time.Second
			b, err := Open(context.Background(), tt.cfg, zaptest.NewLogger(t))
			if tt.wantErr != "" {
				if err == nil {
					_ = b.Close()
					t.Fatal("Open succeeded")
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %q does not contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer func() { _ = b.Close() }()
			put(t, b.Client, "/tls", "ok")
			if got := get(t, b.Client, "/tls"); got != "ok" {
				t.Errorf("Get = %q", got)
			}
		})
	}
}

func TestClientTLSFileErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := newPKI(t, dir)
	junk := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(junk, []byte("not pem"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")

	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"missing CA", Config{CAFile: missing}, missing},
		{"CA without PEM", Config{CAFile: junk}, junk},
		{"cert without key", Config{CertFile: p.clientCert}, "must be set together"},
		{"key without cert", Config{KeyFile: p.clientKey}, "must be set together"},
		{"missing cert", Config{CertFile: missing, KeyFile: p.clientKey}, missing},
		{"missing key", Config{CertFile: p.clientCert, KeyFile: missing}, missing},
		{"junk cert", Config{CertFile: junk, KeyFile: p.clientKey}, junk},
		{"mismatched key", Config{CertFile: p.clientCert, KeyFile: p.serverKey}, p.serverKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Endpoints = []string{"https://127.0.0.1:1"}
			b, err := Open(context.Background(), tt.cfg, zap.NewNop())
			if err == nil {
				_ = b.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestNoiseFilter(t *testing.T) {
	tests := []struct {
		name    string
		level   zapcore.Level
		msg     string
		closing bool
		logged  bool
	}{
		{"real warning", zapcore.WarnLevel, "slow fdatasync", false, true},
		{"benign startup warning", zapcore.WarnLevel, "simple token is not cryptographically signed", false, false},
		{"error while running", zapcore.ErrorLevel, "setting up serving from embedded etcd failed.", false, true},
		{"error while closing", zapcore.ErrorLevel, "setting up serving from embedded etcd failed.", true, false},
		{"info", zapcore.InfoLevel, "starting", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core, logs := observer.New(zapcore.WarnLevel)
			closing := new(atomic.Bool)
			closing.Store(tt.closing)
			log := zap.New(noiseFilter{Core: core, closing: closing}).With(zap.String("k", "v"))
			if ce := log.Check(tt.level, tt.msg); ce != nil {
				ce.Write()
			}
			if got := logs.Len() == 1; got != tt.logged {
				t.Errorf("logged = %v, want %v", got, tt.logged)
			}
		})
	}
}

package certs

import (
	"context"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// layout installs files (base name → content) in dir the way they get
// replaced in practice; installing again replaces them.
type layout struct {
	name    string
	install func(t *testing.T, dir string, files map[string][]byte)
}

var layouts = []layout{
	{"rename over", func(t *testing.T, dir string, files map[string][]byte) {
		t.Helper()
		for base, data := range files {
			tmp := filepath.Join(dir, "."+base+".new")
			writeFile(t, tmp, data)
			if err := os.Rename(tmp, filepath.Join(dir, base)); err != nil {
				t.Fatal(err)
			}
		}
	}},
	{"kubernetes symlink swap", func(t *testing.T, dir string, files map[string][]byte) {
		t.Helper()
		// As kubelet does for Secret volumes: dir/f -> ..data/f, and
		// ..data -> a timestamped directory, swapped by a rename.
		version, err := os.MkdirTemp(dir, "..v")
		if err != nil {
			t.Fatal(err)
		}
		for base, data := range files {
			writeFile(t, filepath.Join(version, base), data)
		}
		old, _ := os.Readlink(filepath.Join(dir, "..data"))
		tmpLink := filepath.Join(dir, "..data_tmp")
		if err := os.Symlink(filepath.Base(version), tmpLink); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmpLink, filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
		for base := range files {
			link := filepath.Join(dir, base)
			if _, err := os.Lstat(link); err != nil {
				if err := os.Symlink(filepath.Join("..data", base), link); err != nil {
					t.Fatal(err)
				}
			}
		}
		if old != "" {
			os.RemoveAll(filepath.Join(dir, old))
		}
	}},
}

func observedLogger() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.InfoLevel)
	return zap.New(core), logs
}

// eventually polls cond until it holds or 5s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// loggedError reports whether an error entry's error names path.
func loggedError(logs *observer.ObservedLogs, path string) bool {
	for _, e := range logs.FilterLevelExact(zapcore.ErrorLevel).All() {
		if msg, _ := e.ContextMap()["error"].(string); strings.Contains(msg, path) {
			return true
		}
	}
	return false
}

func TestFileCertificateReload(t *testing.T) {
	a := newCA(t)
	hosts := []string{"api.example.com"}
	for _, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			dir := t.TempDir()
			certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
			c1, k1 := servingPEM(t, a, hosts, time.Hour)
			l.install(t, dir, map[string][]byte{"tls.crt": c1, "tls.key": k1})

			log, logs := observedLogger()
			fc, err := NewFileCertificate(certFile, keyFile, log)
			if err != nil {
				t.Fatal(err)
			}
			first := fc.Current().Leaf
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { fc.Run(ctx); close(done) }()
			defer func() { cancel(); <-done }()

			c2, k2 := servingPEM(t, a, hosts, time.Hour)
			second := must(parseCertPEM(c2))
			l.install(t, dir, map[string][]byte{"tls.crt": c2, "tls.key": k2})
			eventually(t, "the new pair", func() bool {
				return fc.Current().Leaf.SerialNumber.Cmp(second.SerialNumber) == 0
			})
			if first.SerialNumber.Cmp(second.SerialNumber) == 0 {
				t.Fatal("test issued the same serial twice")
			}
			got, err := fc.GetCertificate(nil)
			if err != nil || got != fc.Current() {
				t.Errorf("GetCertificate = %p, %v; Current = %p", got, err, fc.Current())
			}
			eventually(t, "an info log", func() bool {
				return logs.FilterLevelExact(zapcore.InfoLevel).FilterMessageSnippet("reloaded").Len() > 0
			})

			logs.TakeAll()
			l.install(t, dir, map[string][]byte{"tls.crt": []byte("garbage"), "tls.key": k2})
			eventually(t, "an error log naming "+certFile, func() bool { return loggedError(logs, certFile) })
			if fc.Current().Leaf.SerialNumber.Cmp(second.SerialNumber) != 0 {
				t.Error("garbage replaced the working pair")
			}
		})
	}
}

func TestFileCAPoolReload(t *testing.T) {
	ca1, ca2 := newCA(t), newCA(t)
	clientOf := func(a *Authority) *x509.Certificate {
		c, _, err := a.IssueClient("user", nil, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return must(parseCertPEM(c))
	}
	trusts := func(p *FileCAPool, c *x509.Certificate) bool {
		_, err := c.Verify(x509.VerifyOptions{Roots: p.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		return err == nil
	}
	alice, bob := clientOf(ca1), clientOf(ca2)
	for _, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			dir := t.TempDir()
			caFile := filepath.Join(dir, "ca.crt")
			l.install(t, dir, map[string][]byte{"ca.crt": ca1.CertPEM})

			log, logs := observedLogger()
			p, err := NewFileCAPool(caFile, log)
			if err != nil {
				t.Fatal(err)
			}
			if !trusts(p, alice) || trusts(p, bob) {
				t.Fatal("initial pool trusts the wrong clients")
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { p.Run(ctx); close(done) }()
			defer func() { cancel(); <-done }()

			bundle := append(append([]byte{}, ca1.CertPEM...), ca2.CertPEM...)
			l.install(t, dir, map[string][]byte{"ca.crt": bundle})
			eventually(t, "the new bundle", func() bool { return string(p.PEM()) == string(bundle) })
			if !trusts(p, alice) || !trusts(p, bob) {
				t.Error("reloaded pool does not trust both CAs")
			}

			logs.TakeAll()
			l.install(t, dir, map[string][]byte{"ca.crt": []byte("garbage")})
			eventually(t, "an error log naming "+caFile, func() bool { return loggedError(logs, caFile) })
			if string(p.PEM()) != string(bundle) || !trusts(p, bob) {
				t.Error("garbage replaced the working bundle")
			}
		})
	}
}

func TestFileLoadErrors(t *testing.T) {
	a := newCA(t)
	dir := t.TempDir()
	good := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		writeFile(t, p, data)
		return p
	}
	c1, k1 := servingPEM(t, a, []string{"x"}, time.Hour)
	_, k2 := servingPEM(t, a, []string{"x"}, time.Hour)
	cert, key, otherKey := good("a.crt", c1), good("a.key", k1), good("b.key", k2)
	junk, missing := good("junk", []byte("garbage")), filepath.Join(dir, "missing")

	cases := []struct {
		name      string
		load      func() error
		wantNamed []string
	}{
		{"cert missing", func() error { _, err := NewFileCertificate(missing, key, nil); return err }, []string{missing}},
		{"cert garbage", func() error { _, err := NewFileCertificate(junk, key, nil); return err }, []string{junk}},
		{"key missing", func() error { _, err := NewFileCertificate(cert, missing, nil); return err }, []string{missing}},
		{"key garbage", func() error { _, err := NewFileCertificate(cert, junk, nil); return err }, []string{junk}},
		{"key of another cert", func() error { _, err := NewFileCertificate(cert, otherKey, nil); return err }, []string{cert, otherKey}},
		{"CA missing", func() error { _, err := NewFileCAPool(missing, nil); return err }, []string{missing}},
		{"CA garbage", func() error { _, err := NewFileCAPool(junk, nil); return err }, []string{junk}},
		{"CA file holds a key", func() error { _, err := NewFileCAPool(key, nil); return err }, []string{key}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.load()
			if err == nil {
				t.Fatal("no error")
			}
			for _, n := range tc.wantNamed {
				if !strings.Contains(err.Error(), n) {
					t.Errorf("error %q does not name %s", err, n)
				}
			}
		})
	}
}

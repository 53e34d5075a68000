package storagee2e

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/server"
	"github.com/kpipe/kpipe/internal/storage/backend"
	"github.com/kpipe/kpipe/internal/testserver"
)

// An embedded etcd's client URL is published under stateDir while the
// server runs, so tools on the host reach the same etcd with the client
// certificate under stateDir/pki; it goes away on shutdown.
func TestEmbeddedEtcdEndpointFile(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{OwnEtcd: true})
	p := filepath.Join(ts.StateDir, server.EtcdEndpointFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	ep := strings.TrimSpace(string(b))
	if !strings.HasPrefix(ep, "https://127.0.0.1:") {
		t.Fatalf("%s = %q, want a loopback https client URL", p, ep)
	}
	pki := filepath.Join(ts.StateDir, "pki")
	files := backend.Config{
		Endpoints: []string{ep},
		CAFile:    filepath.Join(pki, "etcd-ca.crt"),
		CertFile:  filepath.Join(pki, "etcd-client.crt"),
		KeyFile:   filepath.Join(pki, "etcd-client.key"),
	}
	for _, f := range []string{files.CAFile, files.CertFile, files.KeyFile} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s: mode %v, want 0600", f, m)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Another local process without the client certificate gets nothing.
	for name, cfg := range map[string]backend.Config{
		"plain":                   {Endpoints: []string{"http" + strings.TrimPrefix(ep, "https")}},
		"TLS without client cert": {Endpoints: []string{ep}, CAFile: files.CAFile},
	} {
		t.Run(name, func(t *testing.T) {
			cfg.DialTimeout = 2 * time.Second
			if b, err := backend.Open(ctx, cfg, zap.NewNop()); err == nil {
				b.Close()
				t.Fatalf("a %s client reached the embedded etcd", name)
			}
		})
	}
	be, err := backend.Open(ctx, files, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	// The server's own objects are there: this is its etcd, not another.
	e2eutil.Eventually(t, 10*time.Second, "the default namespace in etcd", func() bool {
		resp, err := be.Client.Get(ctx, "/registry/namespaces/default")
		return err == nil && resp.Count == 1
	})
	ts.Stop(t)
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s after shutdown: %v, want it removed", p, err)
	}
}

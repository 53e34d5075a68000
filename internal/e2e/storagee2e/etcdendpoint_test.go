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

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/server"
	"github.com/kpipe/kpipe/internal/testserver"
)

// An embedded etcd's client URL is published under stateDir while the
// server runs, so tools on the host reach the same etcd; it goes away on
// shutdown.
func TestEmbeddedEtcdEndpointFile(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{OwnEtcd: true})
	p := filepath.Join(ts.StateDir, server.EtcdEndpointFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	ep := strings.TrimSpace(string(b))
	if !strings.HasPrefix(ep, "http://127.0.0.1:") {
		t.Fatalf("%s = %q, want a loopback client URL", p, ep)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The server's own objects are there: this is its etcd, not another.
	e2eutil.Eventually(t, 10*time.Second, "the default namespace in etcd", func() bool {
		resp, err := cli.Get(ctx, "/registry/namespaces/default")
		return err == nil && resp.Count == 1
	})
	ts.Stop(t)
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s after shutdown: %v, want it removed", p, err)
	}
}

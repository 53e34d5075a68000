// Package testserver starts the whole kpipe server in-process for tests:
// real TLS, real HTTP/2, a real etcd, on loopback and free ports.
package testserver

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/server"
	"github.com/kpipe/kpipe/internal/storage/backend"
	"github.com/kpipe/kpipe/plugins"
	"github.com/kpipe/kpipe/plugins/fieldmanager"
)

// TestServer is a running server and the ways to reach it.
type TestServer struct {
	*server.Server
	// StateDir holds pki/ and admin.kubeconfig.
	StateDir string
	// Kubeconfig is the admin kubeconfig's path, for kubectl.
	Kubeconfig string
	// Config is a client-go config from the admin kubeconfig: client
	// certificate, full TLS verification.
	Config  *rest.Config
	stopped atomic.Bool
}

// Options shape the server under test.
type Options struct {
	// Configure edits the config before start (defaults, a temp stateDir,
	// loopback bind, the shared etcd).
	Configure func(*config.Config)
	// Register adds test plugins to the registry.
	Register func(*pipeline.Registry)
	// OwnEtcd runs an embedded etcd for this server alone instead of the
	// package's shared one.
	OwnEtcd bool
	// Reload, when set, is used for hot reload.
	Reload func() (*config.Loaded, error)
	// Log overrides the test logger.
	Log *zap.Logger
	// ConfigFile is watched for hot reload (with Reload).
	ConfigFile string
	// NoWait returns before /readyz is 200 (tests of readiness itself).
	NoWait bool
	// Port is the port to listen on; 0 picks a free one. Servers given
	// distinct loopback addresses (server.bindAddress 127.0.0.2, ...)
	// may share one port, as replicas behind one Service do.
	Port int
}

var prefixes atomic.Int64

// Start starts a server and stops it when the test ends.
func Start(t testing.TB, o Options) *TestServer {
	t.Helper()
	cfg := config.Default()
	cfg.StateDir = t.TempDir()
	cfg.Server.BindAddress = "127.0.0.1"
	cfg.Server.AdvertiseAddress = "127.0.0.1"
	cfg.Server.ShutdownTimeout = 10 * time.Second
	if !o.OwnEtcd {
		ext := SharedEtcd(t)
		cfg.Storage.Etcd.Endpoints = ext.Endpoints
		cfg.Storage.Etcd.CAFile, cfg.Storage.Etcd.CertFile, cfg.Storage.Etcd.KeyFile = ext.CAFile, ext.CertFile, ext.KeyFile
		// Servers sharing the etcd keep apart by prefix.
		cfg.Storage.Prefix = fmt.Sprintf("/t%d/registry", prefixes.Add(1))
	}
	if o.Configure != nil {
		o.Configure(cfg)
	}
	loaded, err := config.FromConfig(cfg)
	if err != nil {
		t.Fatalf("testserver: config: %v", err)
	}
	loaded.File = o.ConfigFile
	reg := plugins.Registry()
	if o.Register != nil {
		o.Register(reg)
	}
	// Any 127.0.0.0/8 address is loopback on Linux, so replicas can each
	// bind (and advertise) their own.
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Server.BindAddress, strconv.Itoa(o.Port)))
	if err != nil {
		t.Fatalf("testserver: listen: %v", err)
	}
	log := o.Log
	if log == nil {
		log = zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
	}
	s := server.New(server.Options{Config: loaded, Plugins: reg, Log: log, Listener: ln, Reload: o.Reload})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatalf("testserver: start: %v", err)
	}
	ts := &TestServer{Server: s, StateDir: cfg.StateDir, Kubeconfig: filepath.Join(cfg.StateDir, "admin.kubeconfig")}
	t.Cleanup(func() { ts.Stop(t) })
	ts.Config, err = clientcmd.BuildConfigFromFlags("", ts.Kubeconfig)
	if err != nil {
		t.Fatalf("testserver: admin kubeconfig: %v", err)
	}
	if !o.NoWait {
		ts.WaitReady(t)
	}
	return ts
}

// Stop shuts the server down gracefully, once.
func (ts *TestServer) Stop(t testing.TB) {
	if ts.stopped.Swap(true) {
		return
	}
	if err := ts.Shutdown(); err != nil {
		t.Errorf("testserver: shutdown: %v", err)
	}
}

// Kill stops the server without its pre-shutdown hooks, as kill -9 would
// as far as the cluster can tell.
func (ts *TestServer) Kill(t testing.TB) {
	if ts.stopped.Swap(true) {
		return
	}
	if err := ts.Abort(); err != nil {
		t.Errorf("testserver: abort: %v", err)
	}
}

// HTTPClient is an admin client speaking HTTP/2 with full verification.
func (ts *TestServer) HTTPClient(t testing.TB) *http.Client {
	t.Helper()
	c, err := rest.HTTPClientFor(ts.Config)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// WaitReady waits for /readyz to answer 200. It asks through the loopback
// client, which works whatever serving certificate the test configured.
func (ts *TestServer) WaitReady(t testing.TB) {
	t.Helper()
	c, err := rest.HTTPClientFor(ts.Loopback())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var resp *http.Response
		resp, err = c.Get(ts.URL() + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("testserver: /readyz not 200 after 20s (last error %v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var shared struct {
	once sync.Once
	b    *backend.Backend
	dir  string
	err  error
}

// SharedEtcd returns how to reach one embedded etcd shared by every server
// in the test binary, started on first use: its endpoints and its client
// certificate, which it requires as the server's own embedded etcd does.
func SharedEtcd(t testing.TB) backend.Config {
	t.Helper()
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", "kpipe-etcd-")
		if shared.err != nil {
			return
		}
		shared.b, shared.err = backend.Open(context.Background(), backend.Config{
			DataDir: filepath.Join(shared.dir, "etcd"),
			PKIDir:  filepath.Join(shared.dir, "pki"),
		}, zap.NewNop())
	})
	if shared.err != nil {
		t.Fatalf("testserver: shared etcd: %v", shared.err)
	}
	c := shared.b.ClientTLS
	return backend.Config{Endpoints: shared.b.Endpoints, CAFile: c.CAFile, CertFile: c.CertFile, KeyFile: c.KeyFile}
}

// DialSharedEtcd returns a client of the shared etcd over its listener,
// closed when the test ends.
func DialSharedEtcd(t testing.TB) *clientv3.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := backend.Open(ctx, SharedEtcd(t), zap.NewNop())
	if err != nil {
		t.Fatalf("testserver: dial shared etcd: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b.Client
}

// Main runs the package's tests and then stops the shared etcd. Call it
// from TestMain.
func Main(m *testing.M) {
	// Every create the tests make checks the field manager's fast path
	// against kube's field manager.
	fieldmanager.CheckCreates = true
	code := m.Run()
	if shared.b != nil {
		shared.b.Close()
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

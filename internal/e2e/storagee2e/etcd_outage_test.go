package storagee2e

import (
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

// startEtcdAt runs an etcd member on fixed loopback ports, so it can be
// stopped and started again at the same address.
func startEtcdAt(t *testing.T, dir string, clientPort, peerPort string) *embed.Etcd {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop()) // closing logs errors by design
	cu, _ := url.Parse("http://127.0.0.1:" + clientPort)
	pu, _ := url.Parse("http://127.0.0.1:" + peerPort)
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = cfg.Name + "=" + pu.String()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("etcd: %v", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(20 * time.Second):
		e.Close()
		t.Fatal("etcd did not become ready")
	}
	return e
}

// An etcd that goes away after start makes /readyz fail while /livez stays
// 200 and the process keeps serving; when etcd returns, so does readiness,
// without a restart.
func TestEtcdOutageAfterStart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "etcd")
	ports := testserver.FreePorts(t, 2)
	etcd := startEtcdAt(t, dir, ports[0], ports[1])
	// Closed at most once: a failure while etcd is down must not panic
	// the whole package by closing it again.
	running := true
	defer func() {
		if running {
			etcd.Close()
		}
	}()

	ts := testserver.Start(t, testserver.Options{OwnEtcd: true, Configure: func(c *config.Config) {
		c.Storage.Etcd.Endpoints = []string{"http://127.0.0.1:" + ports[0]}
		c.Storage.Etcd.HealthTimeout = 500 * time.Millisecond
		for i, e := range c.Pipeline {
			if e.Name == "timeout" {
				c.Pipeline[i].Config = map[string]any{"requestTimeout": "2s"}
			}
		}
	}})
	c := ts.HTTPClient(t)

	etcd.Close()
	running = false
	start := time.Now()
	code, body := e2eutil.Get(t, c, ts.URL()+"/readyz")
	if code != http.StatusInternalServerError {
		t.Fatalf("/readyz with etcd down: %d\n%s", code, body)
	}
	e2eutil.MustContain(t, "/readyz", body, "[-]etcd failed: reason withheld", "readyz check failed")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("/readyz took %v with etcd down; the health timeout is 500ms", d)
	}
	if code, body := e2eutil.Get(t, c, ts.URL()+"/livez"); code != http.StatusOK {
		t.Errorf("/livez with etcd down: %d\n%s", code, body)
	}
	// Resource requests fail with a 5xx Status within the request timeout.
	start = time.Now()
	code, body = e2eutil.Get(t, c, ts.URL()+"/api/v1/namespaces/default/configmaps")
	if code < 500 || !strings.Contains(body, `"kind":"Status"`) {
		t.Errorf("list with etcd down: %d %s", code, body)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("list with etcd down took %v; the request timeout is 2s", d)
	}

	etcd = startEtcdAt(t, dir, ports[0], ports[1])
	running = true
	e2eutil.Eventually(t, 20*time.Second, "/readyz to recover once etcd is back", func() bool {
		code, _ := e2eutil.Get(t, c, ts.URL()+"/readyz")
		return code == http.StatusOK
	})
}

package faults

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/testserver"
)

// All of etcd goes away under write load: creates fail fast with a 5xx
// Status, /readyz fails naming etcd, /livez stays 200, and once etcd is
// back writes resume without a restart, with no acknowledged create lost.
func TestAllEtcdDownUnderLoad(t *testing.T) {
	ms := startEtcdCluster(t, 1)
	ts := testserver.Start(t, testserver.Options{OwnEtcd: true, Configure: func(c *config.Config) {
		c.Storage.Etcd.Endpoints = endpoints(ms)
		c.Storage.Etcd.HealthTimeout = 500 * time.Millisecond
		withRequestTimeout(c, "3s")
	}})
	namespace(t, kubernetes.NewForConfigOrDie(ts.Config), "load")
	l := newLoad(httpClient(t, ts.Config), ts.URL()+"/api/v1/namespaces/load/configmaps", "cm")
	l.start(4)
	l.waitFor(t, 100, time.Minute)

	ms[0].kill()
	before := l.failures()
	eventually(t, 30*time.Second, "creates failing with etcd down", func() bool { return l.failures() >= before+8 })

	c := httpClient(t, ts.Config)
	probe := func(path string) (int, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL()+path, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s with etcd down: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := probe("/readyz?verbose"); code == 200 || !strings.Contains(body, "[-]etcd failed") {
		t.Errorf("/readyz with etcd down: %d\n%s", code, body)
	}
	if code, body := probe("/livez"); code != 200 {
		t.Errorf("/livez with etcd down: %d %s", code, body)
	}
	start := time.Now()
	if code, body := probe("/api/v1/namespaces/load/configmaps/cm-0-0"); code < 500 || !strings.Contains(body, `"kind":"Status"`) {
		t.Errorf("get with etcd down: %d %s", code, body)
	}
	t.Logf("a get with etcd down failed after %v", time.Since(start).Round(time.Millisecond))

	ms[0].restart(t)
	eventually(t, 30*time.Second, "/readyz to recover", func() bool { code, _ := probe("/readyz"); return code == 200 })
	l.waitFor(t, 100, time.Minute)
	l.halt()
	l.verify(t, kubernetes.NewForConfigOrDie(ts.Config), "load")
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.slowest > 10*time.Second {
		t.Errorf("the slowest create took %v with a 3s request timeout", l.slowest)
	}
}

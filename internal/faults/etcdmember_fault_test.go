//go:build faults

package faults

import (
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/testserver"
)

// The etcd leader of a 3-member cluster is killed under write load. Writes
// go on once the survivors elect a new leader; every create that got a 2xx
// is there afterwards; errors in between are 5xx Status the load retries,
// and no request hangs past the client timeout.
func TestFaultEtcdMemberKilledUnderLoad(t *testing.T) {
	ms := startEtcdCluster(t, 3)
	ts := testserver.Start(t, testserver.Options{OwnEtcd: true, Configure: func(c *config.Config) {
		c.Storage.Etcd.Endpoints = endpoints(ms)
		c.Storage.Etcd.HealthTimeout = time.Second
		withRequestTimeout(c, "5s")
	}})
	cs := fastClient(t, ts)
	namespace(t, cs, "load")

	l := newLoad(httpClient(t, ts.Config), ts.URL()+"/api/v1/namespaces/load/configmaps", "cm")
	l.body = 512
	l.start(8)
	l.waitFor(t, 500, 2*time.Minute)

	old := leader(ms)
	if old == nil {
		t.Fatal("no etcd leader before the kill")
	}
	killed := time.Now()
	old.kill()
	t.Logf("killed the etcd leader %s after %d acknowledged creates", old.name, l.count.Load())
	eventually(t, 30*time.Second, "a new etcd leader", func() bool { return leader(ms) != nil })
	t.Logf("new leader %s elected %v after the kill", leader(ms).name, time.Since(killed).Round(time.Millisecond))

	// Writes continue: a good number more are acknowledged after the kill.
	l.waitFor(t, 1000, 2*time.Minute)

	// A second member down loses quorum: writes now fail, each with a 5xx
	// Status within the request timeout, until the member returns.
	second := ms[0]
	if second == old {
		second = ms[1]
	}
	before := l.failures()
	second.kill()
	t.Logf("killed %s too: no quorum", second.name)
	eventually(t, time.Minute, "20 failed creates without quorum", func() bool { return l.failures() >= before+20 })
	second.restart(t)
	t.Logf("restarted %s after %d failed creates", second.name, l.failures()-before)
	l.waitFor(t, 500, 2*time.Minute)
	l.halt()
	l.verify(t, kubernetes.NewForConfigOrDie(ts.Config), "load")
}

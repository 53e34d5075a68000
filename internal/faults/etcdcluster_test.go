package faults

import (
	"fmt"
	"github.com/kpipe/kpipe/internal/testserver"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/kpipe/kpipe/config"
)

// member is one etcd of a cluster the test runs in-process on loopback.
type member struct {
	name   string
	client string // client URL
	cfg    *embed.Config
	e      *embed.Etcd
	killed bool
}

// startEtcdCluster starts n etcd members on loopback ports as one cluster
// and waits until it has a leader.
func startEtcdCluster(t *testing.T, n int) []*member {
	t.Helper()
	ports := testserver.FreePorts(t, 2*n)
	ms := make([]*member, n)
	var initial []string
	for i := range ms {
		ms[i] = &member{name: fmt.Sprintf("m%d", i), client: "http://127.0.0.1:" + ports[2*i]}
		initial = append(initial, fmt.Sprintf("m%d=http://127.0.0.1:%s", i, ports[2*i+1]))
	}
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, m := range ms {
		cfg := embed.NewConfig()
		cfg.Name = m.name
		cfg.Dir = filepath.Join(dir, m.name)
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop()) // a killed peer makes the others log errors by design
		cu, _ := url.Parse(m.client)
		pu, _ := url.Parse("http://127.0.0.1:" + ports[2*i+1])
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
		cfg.InitialCluster = strings.Join(initial, ",")
		cfg.InitialClusterToken = "kpipe-faults"
		// Fast elections keep the test short; the defaults are 100ms/1s.
		cfg.TickMs, cfg.ElectionMs = 50, 500
		m.cfg = cfg
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.e, errs[i] = embed.StartEtcd(cfg)
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, m := range ms {
			if m.e != nil && !m.killed {
				m.e.Close()
			}
		}
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("etcd %s: %v", ms[i].name, err)
		}
	}
	for _, m := range ms {
		select {
		case <-m.e.Server.ReadyNotify():
		case <-time.After(30 * time.Second):
			t.Fatalf("etcd %s not ready within 30s", m.name)
		}
	}
	eventually(t, 20*time.Second, "an etcd leader", func() bool { return leader(ms) != nil })
	return ms
}

// leader is the member that is leader in its own eyes and its peers'.
func leader(ms []*member) *member {
	for _, m := range ms {
		if m.killed {
			continue
		}
		if m.e.Server.Leader() == m.e.Server.MemberID() {
			for _, o := range ms {
				if !o.killed && o.e.Server.Leader() != m.e.Server.MemberID() {
					return nil
				}
			}
			return m
		}
	}
	return nil
}

// kill stops the member without handing leadership over, as a crash would.
func (m *member) kill() {
	m.killed = true
	m.e.Server.HardStop()
	m.e.Close()
}

// restart starts a killed member again on its data directory and ports.
func (m *member) restart(t *testing.T) {
	t.Helper()
	e, err := embed.StartEtcd(m.cfg)
	if err != nil {
		t.Fatalf("restart etcd %s: %v", m.name, err)
	}
	m.e, m.killed = e, false
}

func endpoints(ms []*member) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.client)
	}
	return out
}

// withRequestTimeout sets the timeout stage's requestTimeout.
func withRequestTimeout(c *config.Config, d string) {
	for i, e := range c.Pipeline {
		if e.Name == "timeout" {
			c.Pipeline[i].Config = map[string]any{"requestTimeout": d}
		}
	}
}

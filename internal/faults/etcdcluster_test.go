package faults

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/testserver"
)

// member is one etcd of a cluster the test runs as processes of the real
// binary (`apiserver etcd`) on loopback, so a kill is a real SIGKILL: no
// deferred cleanup, no leadership handed over, WAL as the crash left it.
type member struct {
	name   string
	client string // client URL
	args   []string
	cli    *clientv3.Client // this member alone, for its status

	mu     sync.Mutex
	cmd    *exec.Cmd
	killed bool
}

// startEtcdCluster starts n etcd members as one cluster and waits until
// it has a leader.
func startEtcdCluster(t *testing.T, n int) []*member {
	t.Helper()
	ports := testserver.FreePorts(t, 2*n)
	ms := make([]*member, n)
	var initial []string
	for i := range ms {
		initial = append(initial, fmt.Sprintf("m%d=http://127.0.0.1:%s", i, ports[2*i+1]))
	}
	dir := t.TempDir()
	for i := range ms {
		name, client, peer := fmt.Sprintf("m%d", i), "http://127.0.0.1:"+ports[2*i], "http://127.0.0.1:"+ports[2*i+1]
		m := &member{name: name, client: client, args: []string{"etcd",
			"--name", name, "--data-dir", filepath.Join(dir, name),
			"--listen-client-urls", client, "--advertise-client-urls", client,
			"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-token", "kpipe-faults",
			// Fast elections keep the test short; etcd's defaults are 100/1000.
			"--heartbeat-interval", "50", "--election-timeout", "500",
		}}
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{client}, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			t.Fatal(err)
		}
		m.cli = cli
		ms[i] = m
		m.start(t)
	}
	t.Cleanup(func() {
		for _, m := range ms {
			m.kill()
			m.cli.Close()
		}
	})
	eventually(t, 60*time.Second, "an etcd leader", func() bool { return leader(ms) != nil })
	return ms
}

func (m *member) start(t *testing.T) {
	t.Helper()
	cmd := exec.Command(testserver.Binary(t), m.args...)
	// Output is dropped: a killed peer makes the others log errors by design.
	if err := cmd.Start(); err != nil {
		t.Fatalf("etcd %s: %v", m.name, err)
	}
	m.mu.Lock()
	m.cmd, m.killed = cmd, false
	m.mu.Unlock()
}

// status is the member's view of the cluster, nil when it does not answer.
func (m *member) status() *clientv3.StatusResponse {
	m.mu.Lock()
	killed := m.killed
	m.mu.Unlock()
	if killed {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	st, err := m.cli.Status(ctx, m.client)
	if err != nil {
		return nil
	}
	return st
}

// leader is the member that every live member names as leader.
func leader(ms []*member) *member {
	var lead uint64
	var who *member
	for _, m := range ms {
		st := m.status()
		if st == nil {
			m.mu.Lock()
			killed := m.killed
			m.mu.Unlock()
			if killed {
				continue
			}
			return nil // alive but not answering: no settled leader yet
		}
		if st.Leader == 0 || (lead != 0 && st.Leader != lead) {
			return nil
		}
		lead = st.Leader
		if st.Header.MemberId == st.Leader {
			who = m
		}
	}
	return who
}

// kill sends SIGKILL, as a crash or the OOM killer would.
func (m *member) kill() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.killed || m.cmd == nil {
		return
	}
	m.killed = true
	m.cmd.Process.Kill()
	m.cmd.Wait()
}

// restart starts a killed member again on its data directory and ports.
func (m *member) restart(t *testing.T) { m.start(t) }

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

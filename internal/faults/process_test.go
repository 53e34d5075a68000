package faults

import (
	"bufio"
	"context"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kpipe/kpipe/internal/testserver"
)

// binary is the real apiserver, built once per test run.
func binary(t *testing.T) string { return testserver.Binary(t) }

// proc is the real binary serving a state directory on a fixed port, so
// it can be started again on the same state after it dies.
type proc struct {
	dir, port string
	cmd       *exec.Cmd
	mu        sync.Mutex
	lines     []string
	exited    chan error
}

func startProc(t *testing.T, dir, port string, args ...string) *proc {
	t.Helper()
	p := &proc{dir: dir, port: port, exited: make(chan error, 1)}
	p.cmd = exec.Command(binary(t), append([]string{"--state-dir", dir, "--bind-address", "127.0.0.1", "--secure-port", port, "--log-format", "json"}, args...)...)
	p.cmd.Dir = dir // no apiserver.yaml here: defaults, embedded etcd under dir
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			p.mu.Unlock()
		}
	}()
	go func() {
		<-done
		p.exited <- p.cmd.Wait()
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
		}
	})
	return p
}

// logged reports whether a log line carries msg.
func (p *proc) logged(msg string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.lines {
		if strings.Contains(l, `"msg":"`+msg+`"`) {
			return true
		}
	}
	return false
}

func (p *proc) config(t *testing.T) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(p.dir, "admin.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = -1, -1
	return cfg
}

// waitReady waits for /readyz to answer 200.
func (p *proc) waitReady(t *testing.T) {
	t.Helper()
	eventually(t, 90*time.Second, "the server to log ready", func() bool {
		select {
		case err := <-p.exited:
			p.mu.Lock()
			defer p.mu.Unlock()
			t.Fatalf("the server exited before it was ready: %v\n%s", err, strings.Join(p.lines, "\n"))
		default:
		}
		return p.logged("ready")
	})
	c := httpClient(t, p.config(t))
	eventually(t, 30*time.Second, "/readyz 200", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", p.config(t).Host+"/readyz", nil)
		resp, err := c.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
}

func (p *proc) waitExit(t *testing.T, within time.Duration) error {
	t.Helper()
	select {
	case err := <-p.exited:
		return err
	case <-time.After(within):
		t.Fatalf("the server did not exit within %v", within)
	}
	return nil
}

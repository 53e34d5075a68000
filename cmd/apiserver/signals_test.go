package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// process is the real binary running with a fresh state directory.
type process struct {
	cmd     *exec.Cmd
	dir     string
	port    string
	mu      sync.Mutex
	logs    []map[string]any
	exited  chan error
	logDone chan struct{}
}

func startBinary(t *testing.T, args ...string) *process {
	t.Helper()
	ln, port := freePort(t)
	ln.Close()
	p := &process{dir: t.TempDir(), port: port, exited: make(chan error, 1), logDone: make(chan struct{})}
	p.cmd = exec.Command(binary(t), append([]string{"--state-dir", p.dir, "--bind-address", "127.0.0.1", "--secure-port", port}, args...)...)
	p.cmd.Dir = p.dir // no apiserver.yaml here: run on defaults
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.logDone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				m = map[string]any{"msg": "(not JSON)", "line": sc.Text()}
			}
			{
				p.mu.Lock()
				p.logs = append(p.logs, m)
				p.mu.Unlock()
			}
		}
	}()
	go func() {
		<-p.logDone
		p.exited <- p.cmd.Wait()
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
		}
	})
	return p
}

// waitReady waits for the "ready" log line, which carries the time from
// process start to the first 200 from /readyz.
func (p *process) waitReady(t *testing.T) time.Duration {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		for _, l := range p.logs {
			if l["msg"] == "ready" {
				p.mu.Unlock()
				secs, _ := l["sinceProcessStart"].(float64)
				return time.Duration(secs * float64(time.Second))
			}
		}
		p.mu.Unlock()
		select {
		case err := <-p.exited:
			p.mu.Lock()
			defer p.mu.Unlock()
			t.Fatalf("the server exited before it was ready: %v\n%v", err, p.logs)
		default:
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no ready line within 60s")
	return 0
}

func (p *process) client(t *testing.T) (*http.Client, *rest.Config) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(p.dir, "admin.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, cfg
}

func (p *process) waitExit(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case err := <-p.exited:
		if err == nil {
			return 0
		}
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		t.Fatalf("wait: %v", err)
	case <-time.After(within):
		t.Fatalf("the server did not exit within %v", within)
	}
	return -1
}

func TestBinarySIGTERMExitsZero(t *testing.T) {
	p := startBinary(t, "--log-format", "json")
	ready := p.waitReady(t)
	t.Logf("/readyz answered 200 %v after the process started", ready)
	c, cfg := p.client(t)
	resp, err := c.Get(cfg.Host + "/readyz?verbose")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte("readyz check passed")) {
		t.Fatalf("/readyz: %d %s", resp.StatusCode, body)
	}
	// The admin key material is private.
	for _, f := range []string{"admin.kubeconfig", "pki/admin.key", "pki/ca.key"} {
		st, err := os.Stat(filepath.Join(p.dir, f))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", f, st.Mode(), err)
		}
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.waitExit(t, 30*time.Second); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0", code)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var stages []string
	for _, l := range p.logs {
		if l["msg"] == "startup stage done" {
			stages = append(stages, l["stage"].(string))
		}
	}
	if strings.Join(stages, ",") != "config,pki,storage,pipeline,listener,post-start-hooks" {
		t.Errorf("startup stages logged: %v", stages)
	}
}

func TestBinarySecondSignalForcesExit(t *testing.T) {
	p := startBinary(t, "--shutdown-delay-duration", "1m")
	p.waitReady(t)
	p.cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(300 * time.Millisecond) // inside the shutdown delay
	p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.waitExit(t, 10*time.Second); code == 0 {
		t.Errorf("exit code 0 after a forced exit, want non-zero")
	}
}

func TestBinarySIGHUPReloads(t *testing.T) {
	p := startBinary(t)
	p.waitReady(t)
	p.cmd.Process.Signal(syscall.SIGHUP)
	c, cfg := p.client(t)
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := c.Get(cfg.Host + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if bytes.Contains(body, []byte(`apiserver_config_reloads_total{result="success"} 2`)) &&
			bytes.Contains(body, []byte("apiserver_pipeline_generation 2")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("SIGHUP did not reload within 10s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.waitExit(t, 30*time.Second)
}

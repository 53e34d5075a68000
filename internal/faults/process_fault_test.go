//go:build faults

package faults

import (
	"context"
	"github.com/kpipe/kpipe/internal/testserver"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// kpipe killed with SIGKILL under write load, then started again on the
// same state directory, still holds every create it acknowledged.
func TestFaultSIGKILLUnderLoad(t *testing.T) {
	dir, port := t.TempDir(), testserver.FreePorts(t, 1)[0]
	p := startProc(t, dir, port)
	p.waitReady(t)
	namespace(t, kubernetes.NewForConfigOrDie(p.config(t)), "load")

	l := newLoad(httpClient(t, p.config(t)), p.config(t).Host+"/api/v1/namespaces/load/configmaps", "cm")
	l.body = 512
	l.start(8)
	l.waitFor(t, 1000, 2*time.Minute)
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.waitExit(t, 30*time.Second)
	l.halt()
	t.Logf("killed after %d acknowledged creates", l.count.Load())

	p = startProc(t, dir, port)
	p.waitReady(t)
	// Requests cut by the kill are transport errors, not a contract breach.
	l.verify(t, kubernetes.NewForConfigOrDie(p.config(t)), "load")
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.waitExit(t, time.Minute)
}

// SIGTERM under write load: the server drains. A request in flight when
// the signal lands (its body still arriving) completes with 201, the
// process exits 0, and after a restart every acknowledged create is there.
func TestFaultSIGTERMUnderLoad(t *testing.T) {
	dir, port := t.TempDir(), testserver.FreePorts(t, 1)[0]
	p := startProc(t, dir, port)
	p.waitReady(t)
	cfg := p.config(t)
	namespace(t, kubernetes.NewForConfigOrDie(cfg), "load")

	l := newLoad(httpClient(t, cfg), cfg.Host+"/api/v1/namespaces/load/configmaps", "cm")
	l.body = 512
	l.start(8)
	l.waitFor(t, 1000, 2*time.Minute)

	// A create whose body is half sent when the signal arrives.
	pr, pw := io.Pipe()
	type answer struct {
		code int
		body string
		err  error
	}
	inflight := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequestWithContext(context.Background(), "POST", cfg.Host+"/api/v1/namespaces/load/configmaps", pr)
		req.Header.Set("Content-Type", "application/json")
		resp, err := httpClient(t, cfg).Do(req)
		if err != nil {
			inflight <- answer{err: err}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		inflight <- answer{code: resp.StatusCode, body: string(b)}
	}()
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"inflight"},"data":{"k":"v"}}`
	if _, err := pw.Write([]byte(body[:40])); err != nil {
		t.Fatal(err)
	}

	p.cmd.Process.Signal(syscall.SIGTERM)
	eventually(t, 30*time.Second, "the server to log shutting down", func() bool { return p.logged("shutting down") })
	if _, err := pw.Write([]byte(body[40:])); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	select {
	case a := <-inflight:
		if a.err != nil || a.code != http.StatusCreated {
			t.Errorf("the in-flight create got %d %v %.300s, want 201", a.code, a.err, a.body)
		}
	case <-time.After(time.Minute):
		t.Fatal("the in-flight create got no answer within a minute")
	}
	if err := p.waitExit(t, time.Minute); err != nil {
		t.Errorf("exit after SIGTERM: %v", err)
	}
	l.halt()
	t.Logf("stopped after %d acknowledged creates", l.count.Load())

	p = startProc(t, dir, port)
	p.waitReady(t)
	cs := kubernetes.NewForConfigOrDie(p.config(t))
	// A graceful stop answers everything it accepted: the load saw only
	// 201s and refused connections, never a 5xx or a cut answer.
	l.mu.Lock()
	for k, v := range l.outcomes {
		if k != "201" && k != "transport error" {
			t.Errorf("%d answers %q during the graceful stop", v, k)
		}
	}
	l.mu.Unlock()
	l.verify(t, cs, "load")
	if _, err := cs.CoreV1().ConfigMaps("load").Get(context.Background(), "inflight", metav1.GetOptions{}); err != nil {
		t.Errorf("the in-flight create is missing after the restart: %v", err)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.waitExit(t, time.Minute)
}

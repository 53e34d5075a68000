package servere2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/server/certs"
	"github.com/kpipe/kpipe/internal/testserver"
)

// gateHook is a post-start hook that returns when its gate opens.
type gateHook struct{ gate chan struct{} }

func (h *gateHook) Run(ctx context.Context, _ *pipeline.HookEnv) error {
	select {
	case <-h.gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func TestPostStartHookGatesReadyz(t *testing.T) {
	hook := &gateHook{gate: make(chan struct{})}
	ts := testserver.Start(t, testserver.Options{
		NoWait: true,
		Register: func(r *pipeline.Registry) {
			r.MustRegister(pipeline.Plugin{Name: "test-gate", Kind: pipeline.KindPostStartHook,
				New: func(any) (any, error) { return hook, nil }})
		},
		Configure: func(c *config.Config) { c.PostStartHooks = []config.Entry{{Name: "test-gate"}} },
	})
	c := ts.HTTPClient(t)
	code, body := e2eutil.Get(t, c, ts.URL()+"/readyz")
	if code != http.StatusInternalServerError {
		t.Fatalf("/readyz %d before the hook finished: %s", code, body)
	}
	e2eutil.MustContain(t, "/readyz", body, "[-]poststarthook/test-gate failed: reason withheld\n", "readyz check failed")
	if code, _ := e2eutil.Get(t, c, ts.URL()+"/readyz/poststarthook/test-gate"); code != http.StatusInternalServerError {
		t.Errorf("individual hook check %d before it finished", code)
	}
	close(hook.gate)
	e2eutil.Eventually(t, 5*time.Second, "/readyz to pass once the hook returned", func() bool {
		code, _ := e2eutil.Get(t, c, ts.URL()+"/readyz")
		return code == http.StatusOK
	})
	_, body = e2eutil.Get(t, c, ts.URL()+"/readyz?verbose")
	e2eutil.MustContain(t, "/readyz?verbose", body, "[+]poststarthook/test-gate ok")
}

// slowStage holds requests to /slow until released, telling the test when
// one has arrived.
type slowStage struct {
	arrived chan struct{}
	release chan struct{}
}

func (s *slowStage) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			s.arrived <- struct{}{}
			<-s.release
			w.Write([]byte("finished"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func withSlowStage(s *slowStage) testserver.Options {
	return testserver.Options{
		Register: func(r *pipeline.Registry) {
			r.MustRegister(pipeline.Plugin{Name: "test-slow", Kind: pipeline.KindStage,
				New: func(any) (any, error) { return s, nil }})
		},
		Configure: func(c *config.Config) {
			c.Pipeline = append([]config.Entry{{Name: "test-slow"}}, c.Pipeline...)
		},
	}
}

func TestGracefulShutdownDrainsInFlight(t *testing.T) {
	slow := &slowStage{arrived: make(chan struct{}, 1), release: make(chan struct{})}
	ts := testserver.Start(t, withSlowStage(slow))
	c := ts.HTTPClient(t)

	var wg sync.WaitGroup
	var code int
	var body string
	wg.Add(1)
	go func() {
		defer wg.Done()
		resp, err := c.Get(ts.URL() + "/slow")
		if err != nil {
			t.Errorf("in-flight request failed during shutdown: %v", err)
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		code, body = resp.StatusCode, string(b)
	}()
	<-slow.arrived

	done := make(chan error, 1)
	go func() { done <- ts.Shutdown() }()
	// /readyz turns red at once; the server is still serving.
	time.Sleep(100 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("shutdown returned with a request in flight: %v", err)
	default:
	}
	close(slow.release)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("shutdown: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("shutdown did not finish after the request completed")
	}
	wg.Wait()
	if code != 200 || body != "finished" {
		t.Errorf("in-flight request got %d %q", code, body)
	}
	if _, err := c.Get(ts.URL() + "/readyz"); err == nil {
		t.Error("the listener still accepts after shutdown")
	}
	ts.Stop(t) // already stopped: a no-op
}

func TestReadyzFailsAtOnceOnShutdown(t *testing.T) {
	slow := &slowStage{arrived: make(chan struct{}, 1), release: make(chan struct{})}
	ts := testserver.Start(t, testserver.Options{
		Register: withSlowStage(slow).Register,
		Configure: func(c *config.Config) {
			withSlowStage(slow).Configure(c)
			c.Server.ShutdownDelayDuration = 2 * time.Second
		},
	})
	c := ts.HTTPClient(t)
	go ts.Shutdown()
	e2eutil.Eventually(t, time.Second, "/readyz to fail during the shutdown delay", func() bool {
		code, body := e2eutil.Get(t, c, ts.URL()+"/readyz")
		return code == http.StatusInternalServerError && strings.Contains(body, "[-]shutdown failed: reason withheld")
	})
	// Liveness is unaffected while draining.
	if code, _ := e2eutil.Get(t, c, ts.URL()+"/livez"); code != http.StatusOK {
		t.Errorf("/livez %d during shutdown", code)
	}
	close(slow.release)
}

func TestTwoServersSideBySide(t *testing.T) {
	a := testserver.Start(t, testserver.Options{OwnEtcd: true})
	b := testserver.Start(t, testserver.Options{OwnEtcd: true})
	if a.URL() == b.URL() || a.Backend().Endpoints[0] == b.Backend().Endpoints[0] {
		t.Fatalf("servers share an address: %s %s / %v %v", a.URL(), b.URL(), a.Backend().Endpoints, b.Backend().Endpoints)
	}
	for _, ts := range []*testserver.TestServer{a, b} {
		if code, body := e2eutil.Get(t, ts.HTTPClient(t), ts.URL()+"/readyz?verbose"); code != 200 {
			t.Errorf("%s: %d %s", ts.URL(), code, body)
		}
	}
	// Each trusts only its own CA.
	cfg := *a.Config
	cfg.Host = b.URL()
	if _, err := get2(&cfg); err == nil {
		t.Error("server b accepted a client verifying against server a's CA")
	}
}

func TestPKIReusedAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	configure := func(c *config.Config) { c.StateDir = dir }
	first := testserver.Start(t, testserver.Options{OwnEtcd: true, Configure: configure})
	files := []string{"pki/ca.crt", "pki/apiserver.crt", "pki/client-ca.crt", "pki/admin.crt"}
	before := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		before[f] = b
	}
	oldConfig := first.Config
	first.Stop(t)

	second := testserver.Start(t, testserver.Options{OwnEtcd: true, Configure: configure})
	for _, f := range files {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		if !bytes.Equal(b, before[f]) {
			t.Errorf("%s was regenerated on restart", f)
		}
	}
	// The kubeconfig written by the first run still works against the second.
	cfg := *oldConfig
	cfg.Host = second.URL()
	if code, err := get2(&cfg); err != nil || code != 200 {
		t.Errorf("old admin credentials against the restarted server: %d %v", code, err)
	}
}

func TestServingCertFilesReload(t *testing.T) {
	pkiDir := t.TempDir()
	ca, err := certs.LoadOrCreateCA(pkiDir, "op-ca", "operator-ca")
	if err != nil {
		t.Fatal(err)
	}
	certFile := filepath.Join(pkiDir, "tls.crt")
	keyFile := filepath.Join(pkiDir, "tls.key")
	writePair := func(hosts ...string) {
		pair, err := ca.IssueServing(hosts, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		c, k, err := certs.EncodePair(pair)
		if err != nil {
			t.Fatal(err)
		}
		// Write aside and rename, as operators' tooling does.
		for _, f := range []struct {
			path string
			data []byte
		}{{keyFile, k}, {certFile, c}} {
			if err := os.WriteFile(f.path+".new", f.data, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(f.path+".new", f.path); err != nil {
				t.Fatal(err)
			}
		}
	}
	writePair("127.0.0.1", "first.example")
	ts := testserver.Start(t, testserver.Options{Configure: func(c *config.Config) {
		c.TLS.CertFile, c.TLS.PrivateKeyFile = certFile, keyFile
	}})
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	servedNames := func() []string {
		conn, err := tls.Dial("tcp", strings.TrimPrefix(ts.URL(), "https://"), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
		if err != nil {
			t.Fatalf("dial with the operator's CA: %v", err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].DNSNames
	}
	if names := servedNames(); len(names) != 1 || names[0] != "first.example" {
		t.Fatalf("served %v", names)
	}
	writePair("127.0.0.1", "second.example")
	e2eutil.Eventually(t, 10*time.Second, "the new serving certificate", func() bool {
		names := servedNames()
		return len(names) == 1 && names[0] == "second.example"
	})
	// The loopback client has its own certificate, unaffected.
	if code, body := e2eutil.Get(t, e2eutil.MustLoopbackClient(t, ts), ts.URL()+"/readyz"); code != 200 {
		t.Errorf("loopback client: %d %s", code, body)
	}
}

// orderHook checks, from inside the pre-shutdown phase, that /readyz has
// already turned red and the listener still serves.
type orderHook struct {
	loopback *rest.Config
	readyz   chan int
}

func (h *orderHook) Run(_ context.Context, env *pipeline.HookEnv) error {
	h.loopback = env.Loopback
	return nil
}

func (h *orderHook) PreShutdown(context.Context) error {
	c, err := rest.HTTPClientFor(h.loopback)
	if err != nil {
		return err
	}
	resp, err := c.Get(h.loopback.Host + "/readyz")
	if err != nil {
		h.readyz <- -1
		return err
	}
	resp.Body.Close()
	h.readyz <- resp.StatusCode
	return nil
}

func TestPreShutdownHookRunsWhileServingAndUnready(t *testing.T) {
	h := &orderHook{readyz: make(chan int, 1)}
	ts := testserver.Start(t, testserver.Options{
		Register: func(r *pipeline.Registry) {
			r.MustRegister(pipeline.Plugin{Name: "test-order", Kind: pipeline.KindPostStartHook,
				New: func(any) (any, error) { return h, nil }})
		},
		Configure: func(c *config.Config) { c.PostStartHooks = []config.Entry{{Name: "test-order"}} },
	})
	if err := ts.Shutdown(); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-h.readyz:
		if code != http.StatusInternalServerError {
			t.Errorf("/readyz during pre-shutdown hooks: %d, want 500", code)
		}
	default:
		t.Fatal("the pre-shutdown hook did not run")
	}
}

// get2 makes one GET /readyz with cfg and reports the code.
func get2(cfg *rest.Config) (int, error) {
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return 0, err
	}
	resp, err := c.Get(cfg.Host + "/readyz")
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// stopHook leaves a loop running, as controllers do, that reports once
// its context ends whether its loopback client still reaches the server.
type stopHook struct{ reached chan int }

func (h *stopHook) Run(ctx context.Context, env *pipeline.HookEnv) error {
	go func() {
		<-ctx.Done()
		code, err := get2(env.Loopback)
		if err != nil {
			code = -1
		}
		h.reached <- code
	}()
	return nil
}

// Post-start hooks are stopped before the shutdown delay, while the
// listener still serves, so a loop neither runs on into the delay (undoing
// what pre-shutdown hooks did) nor fails, and logs, on a closed port
// (kube stops them at the start of shutdown).
func TestPostStartHooksStopBeforeTheListenerCloses(t *testing.T) {
	h := &stopHook{reached: make(chan int, 1)}
	ts := testserver.Start(t, testserver.Options{
		Register: func(r *pipeline.Registry) {
			r.MustRegister(pipeline.Plugin{Name: "test-stop", Kind: pipeline.KindPostStartHook,
				New: func(any) (any, error) { return h, nil }})
		},
		Configure: func(c *config.Config) {
			c.PostStartHooks = []config.Entry{{Name: "test-stop"}}
			// The hook's loop gets the delay to see its context end.
			c.Server.ShutdownDelayDuration = 2 * time.Second
		},
	})
	if err := ts.Shutdown(); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-h.reached:
		if code != http.StatusInternalServerError {
			t.Errorf("the stopped hook's GET /readyz: %d, want 500 (served, shutting down)", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the hook's context did not end")
	}
}

package audit

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
)

// receiver is an HTTPS audit webhook on 127.0.0.1 that records the
// EventLists it gets. fail answers 500 to that many POSTs first.
type receiver struct {
	srv *httptest.Server

	mu      sync.Mutex
	posts   int
	batches [][]map[string]any
	fail    int
	hold    chan struct{} // when set, each POST waits for it to close
}

type eventList struct {
	Kind       string           `json:"kind"`
	APIVersion string           `json:"apiVersion"`
	Items      []map[string]any `json:"items"`
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.posts++
		hold := rc.hold
		if rc.fail > 0 {
			rc.fail--
			rc.mu.Unlock()
			http.Error(w, "not now", http.StatusInternalServerError)
			return
		}
		rc.mu.Unlock()
		if hold != nil {
			<-hold
		}
		var l eventList
		if err := json.Unmarshal(body, &l); err != nil || l.Kind != "EventList" || l.APIVersion != "audit.k8s.io/v1" ||
			r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("receiver got %s %s %q: %v", r.Method, r.Header.Get("Content-Type"), body, err)
		}
		rc.mu.Lock()
		rc.batches = append(rc.batches, l.Items)
		rc.mu.Unlock()
	}))
	rc.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // closed connections at Close
	rc.srv.StartTLS()
	t.Cleanup(rc.srv.Close)
	return rc
}

// sizes are the sizes of the batches received.
func (rc *receiver) sizes() []int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []int
	for _, b := range rc.batches {
		out = append(out, len(b))
	}
	return out
}

func (rc *receiver) postCount() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.posts
}

// kubeconfig writes a kubeconfig naming the receiver, with its CA.
func (rc *receiver) kubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "webhook.kubeconfig")
	c := clientcmdapi.NewConfig()
	c.Clusters["audit"] = &clientcmdapi.Cluster{Server: rc.srv.URL + "/audit",
		CertificateAuthorityData: pemCert(rc.srv)}
	c.AuthInfos["apiserver"] = &clientcmdapi.AuthInfo{}
	c.Contexts["audit"] = &clientcmdapi.Context{Cluster: "audit", AuthInfo: "apiserver"}
	c.CurrentContext = "audit"
	if err := clientcmd.WriteToFile(*c, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func pemCert(s *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
}

// fakeClock is the throttle's clock: Sleep records the wait and moves the
// time on; with block set, a Sleep of more than zero waits for release.
type fakeClock struct {
	mu       sync.Mutex
	now      time.Time
	sleeps   []time.Duration
	block    bool
	sleeping chan struct{}
	release  chan struct{}
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Unix(1e9, 0), sleeping: make(chan struct{}, 100), release: make(chan struct{})}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

func (c *fakeClock) Sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	block := c.block
	c.mu.Unlock()
	if block {
		c.sleeping <- struct{}{}
		<-c.release
	}
}

func (c *fakeClock) recorded() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// startWebhook builds the backend on rc with the config edit applies.
func startWebhook(t *testing.T, rc *receiver, clock *fakeClock, edit func(*WebhookConfig)) (*webhook, *prometheus.CounterVec) {
	t.Helper()
	c := defaultWebhookConfig()
	c.ConfigFile = rc.kubeconfig(t)
	c.InitialBackoff = 10 * time.Millisecond
	if edit != nil {
		edit(&c)
	}
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_audit_error_total"}, []string{"plugin"})
	var fc interface {
		Now() time.Time
		Since(time.Time) time.Duration
		Sleep(time.Duration)
	}
	if clock != nil {
		fc = clock
	}
	w, err := newWebhook(&c, errs, zap.NewNop(), fc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close(5 * time.Second) })
	return w, errs
}

func item(i int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"level":"Metadata","auditID":"id-%d","stage":"ResponseComplete"}`, i))
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestWebhookBatching(t *testing.T) {
	t.Run("by size", func(t *testing.T) {
		rc := newReceiver(t)
		w, _ := startWebhook(t, rc, nil, func(c *WebhookConfig) {
			c.BatchMaxSize, c.BatchMaxWait, c.BatchThrottleEnable = 3, time.Hour, false
		})
		for i := range 7 {
			w.process(item(i))
		}
		eventually(t, "two full batches", func() bool { return equalInts(rc.sizes(), []int{3, 3}) })
		time.Sleep(100 * time.Millisecond)
		if got := rc.sizes(); !equalInts(got, []int{3, 3}) {
			t.Fatalf("batches before the wait = %v, want [3 3]: the 7th waits for maxWait", got)
		}
		w.Close(5 * time.Second)
		if got := rc.sizes(); !equalInts(got, []int{3, 3, 1}) {
			t.Fatalf("batches after Close = %v, want [3 3 1]", got)
		}
		rc.mu.Lock()
		defer rc.mu.Unlock()
		var ids []string
		for _, b := range rc.batches {
			for _, ev := range b {
				ids = append(ids, ev["auditID"].(string))
				if _, ok := ev["kind"]; ok {
					t.Errorf("item has a kind: %v", ev)
				}
			}
		}
		slices.Sort(ids) // batches are sent concurrently, as kube's
		if fmt.Sprint(ids) != "[id-0 id-1 id-2 id-3 id-4 id-5 id-6]" {
			t.Errorf("ids = %v", ids)
		}
	})
	t.Run("by wait", func(t *testing.T) {
		rc := newReceiver(t)
		w, _ := startWebhook(t, rc, nil, func(c *WebhookConfig) {
			c.BatchMaxSize, c.BatchMaxWait, c.BatchThrottleEnable = 100, 50*time.Millisecond, false
		})
		w.process(item(0))
		w.process(item(1))
		eventually(t, "a batch after maxWait", func() bool { return equalInts(rc.sizes(), []int{2}) })
	})
}

func TestWebhookThrottle(t *testing.T) {
	rc := newReceiver(t)
	clock := newFakeClock()
	w, _ := startWebhook(t, rc, clock, func(c *WebhookConfig) {
		c.BatchMaxSize, c.BatchThrottleQPS, c.BatchThrottleBurst = 1, 2, 1
	})
	for i := range 3 {
		w.process(item(i))
	}
	eventually(t, "three batches", func() bool { return len(rc.sizes()) == 3 })
	// One batch at once (the burst), then one every 1/qps.
	if got := clock.recorded(); fmt.Sprint(got) != "[500ms 500ms]" {
		t.Errorf("throttle waits = %v, want [500ms 500ms]", got)
	}
}

func TestWebhookBufferFullDrops(t *testing.T) {
	rc := newReceiver(t)
	clock := newFakeClock()
	clock.block = true
	w, errs := startWebhook(t, rc, clock, func(c *WebhookConfig) {
		c.BatchBufferSize, c.BatchMaxSize, c.BatchThrottleQPS, c.BatchThrottleBurst = 2, 1, 1, 1
	})
	w.process(item(0)) // sent at once
	w.process(item(1)) // taken by the batcher, which waits on the throttle
	<-clock.sleeping
	for i := 2; i < 6; i++ {
		w.process(item(i)) // 2 and 3 fill the buffer, 4 and 5 are dropped
	}
	if got := testutil.ToFloat64(errs.WithLabelValues(pluginBuffered)); got != 2 {
		t.Errorf(`apiserver_audit_error_total{plugin="buffered"} = %v, want 2`, got)
	}
	clock.mu.Lock()
	clock.block = false
	clock.mu.Unlock()
	close(clock.release)
	w.Close(5 * time.Second)
	got := 0
	for _, n := range rc.sizes() {
		got += n
	}
	if got != 4 {
		t.Errorf("received %d events, want 4", got)
	}
	if got := testutil.ToFloat64(errs.WithLabelValues(pluginWebhook)); got != 0 {
		t.Errorf(`apiserver_audit_error_total{plugin="webhook"} = %v, want 0`, got)
	}
	// After Close, events are refused as kube's closed buffer refuses them.
	w.process(item(9))
	if got := testutil.ToFloat64(errs.WithLabelValues(pluginBuffered)); got != 3 {
		t.Errorf(`apiserver_audit_error_total{plugin="buffered"} after close = %v, want 3`, got)
	}
}

func TestWebhookBlocking(t *testing.T) {
	for _, tc := range []struct {
		name, mode string
		fail       int
		wantOK     bool
		wantPosts  int
		wantErrors float64
	}{
		{name: "blocking sends before returning", mode: ModeBlocking, wantOK: true, wantPosts: 1},
		{name: "blocking retries", mode: ModeBlocking, fail: 2, wantOK: true, wantPosts: 3},
		{name: "blocking ignores a failure", mode: ModeBlocking, fail: 100, wantOK: true, wantPosts: 5, wantErrors: 1},
		{name: "blocking-strict reports a failure", mode: ModeBlockingStrict, fail: 100, wantOK: false, wantPosts: 5, wantErrors: 1},
		{name: "blocking-strict after a retry", mode: ModeBlockingStrict, fail: 1, wantOK: true, wantPosts: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := newReceiver(t)
			rc.fail = tc.fail
			w, errs := startWebhook(t, rc, nil, func(c *WebhookConfig) { c.Mode = tc.mode; c.InitialBackoff = time.Millisecond })
			if ok := w.process(item(0)); ok != tc.wantOK {
				t.Errorf("process = %v, want %v", ok, tc.wantOK)
			}
			if got := rc.postCount(); got != tc.wantPosts {
				t.Errorf("POSTs when process returned = %d, want %d", got, tc.wantPosts)
			}
			want := []int{1}
			if tc.wantErrors > 0 {
				want = nil
			}
			if got := rc.sizes(); !equalInts(got, want) {
				t.Errorf("batches = %v, want %v", got, want)
			}
			if got := testutil.ToFloat64(errs.WithLabelValues(pluginWebhook)); got != tc.wantErrors {
				t.Errorf(`apiserver_audit_error_total{plugin="webhook"} = %v, want %v`, got, tc.wantErrors)
			}
		})
	}
}

func TestWebhookBatchRetries(t *testing.T) {
	rc := newReceiver(t)
	rc.fail = 2
	w, errs := startWebhook(t, rc, nil, func(c *WebhookConfig) {
		c.BatchMaxSize, c.BatchMaxWait, c.BatchThrottleEnable = 10, 20*time.Millisecond, false
	})
	w.process(item(0))
	w.process(item(1))
	eventually(t, "the batch on the third try", func() bool { return equalInts(rc.sizes(), []int{2}) })
	if got := rc.postCount(); got != 3 {
		t.Errorf("POSTs = %d, want 3", got)
	}
	if got := testutil.ToFloat64(errs.WithLabelValues(pluginWebhook)); got != 0 {
		t.Errorf("errors = %v, want 0", got)
	}
}

func TestWebhookCloseFlushes(t *testing.T) {
	t.Run("sends the buffer", func(t *testing.T) {
		rc := newReceiver(t)
		w, _ := startWebhook(t, rc, nil, func(c *WebhookConfig) { c.BatchMaxWait = time.Hour })
		for i := range 5 {
			w.process(item(i))
		}
		time.Sleep(50 * time.Millisecond)
		if got := rc.sizes(); len(got) != 0 {
			t.Fatalf("batches before Close = %v", got)
		}
		w.Close(5 * time.Second)
		if got := rc.sizes(); !equalInts(got, []int{5}) {
			t.Fatalf("batches after Close = %v, want [5]", got)
		}
	})
	t.Run("within the bound", func(t *testing.T) {
		rc := newReceiver(t)
		rc.fail = 1000
		w, errs := startWebhook(t, rc, nil, func(c *WebhookConfig) { c.BatchMaxWait = time.Hour; c.InitialBackoff = 10 * time.Second })
		w.process(item(0))
		w.process(item(1))
		start := time.Now()
		w.Close(300 * time.Millisecond)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("Close took %v with a bound of 300ms", d)
		}
		if got := testutil.ToFloat64(errs.WithLabelValues(pluginWebhook)); got != 2 {
			t.Errorf(`apiserver_audit_error_total{plugin="webhook"} = %v, want 2`, got)
		}
	})
}

func TestWebhookConfigErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.kubeconfig")
	if err := os.WriteFile(bad, []byte("clusters: [nope"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(*WebhookConfig)
		want string
	}{
		{"mode", func(c *WebhookConfig) { c.Mode = "async" }, `webhook.mode: invalid audit webhook mode async, allowed modes are "batch,blocking,blocking-strict"`},
		{"buffer", func(c *WebhookConfig) { c.BatchBufferSize = 0 }, "webhook.batchBufferSize: invalid audit batch webhook buffer size 0, must be a positive number"},
		{"max size", func(c *WebhookConfig) { c.BatchMaxSize = -1 }, "webhook.batchMaxSize: invalid audit batch webhook max batch size -1, must be a positive number"},
		{"qps", func(c *WebhookConfig) { c.BatchThrottleQPS = 0 }, "webhook.batchThrottleQPS: invalid audit batch webhook throttle QPS 0, must be a positive number"},
		{"truncate event size", func(c *WebhookConfig) { c.TruncateMaxEventSize = 0 }, "webhook.truncateMaxEventSize: invalid audit truncate webhook max event size 0, must be a positive number"},
		{"truncate batch size", func(c *WebhookConfig) { c.TruncateMaxBatchSize = 10 }, "webhook.truncateMaxBatchSize: invalid audit truncate webhook max batch size 10, must be greater than max event size (102400)"},
		{"version", func(c *WebhookConfig) { c.Version = "audit.k8s.io/v1beta1" }, `webhook.version: invalid group version, allowed versions are ["audit.k8s.io/v1"]`},
		{"kubeconfig", func(c *WebhookConfig) { c.ConfigFile = bad }, "webhook.configFile: " + bad + ": "},
		{"unused batch settings in blocking mode", func(c *WebhookConfig) { c.Mode = ModeBlocking; c.BatchBufferSize = 0 }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := defaultWebhookConfig()
			c.ConfigFile = newReceiver(t).kubeconfig(t)
			tc.edit(&c)
			err := c.validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tc.want != "" && (err == nil || len(err.Error()) < len(tc.want) || err.Error()[:len(tc.want)] != tc.want):
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// startStage builds the audit stage through the registry, as the server
// does, with a Metadata policy and the given config keys.
func startStage(t *testing.T, cfg map[string]any) *Stage {
	t.Helper()
	if cfg["policy"] == nil {
		cfg["policy"] = map[string]any{"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": []any{map[string]any{"level": "Metadata"}}}
	}
	reg := pipeline.NewRegistry()
	Register(reg)
	ins, err := reg.BuildList(pipeline.KindStage, "pipeline", []config.Entry{{Name: Name, Config: cfg}})
	if err != nil {
		t.Fatal(err)
	}
	e := pipeline.NewEngine(pipeline.Options{Registry: reg, Metrics: prometheus.NewRegistry(), Shared: &pipeline.Shared{AuthFailures: &auth.FailureHook{}}})
	in, err := e.ProvisionStandalone(ins[0], &config.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { e.CloseStandalone([]*pipeline.Instance{in}) }) })
	return in.Value.(*Stage)
}

func serve(s *Stage, h http.HandlerFunc) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", "/api/v1/namespaces/default/configmaps/x", nil)
	sc := &request.Scope{User: &request.User{Name: "alice", Groups: []string{"devs"}},
		Info: &request.RequestInfo{Path: r.URL.Path, Verb: "get", IsResourceRequest: true, APIVersion: "v1",
			Namespace: "default", Resource: "configmaps", Name: "x"}}
	r = r.WithContext(request.WithScope(r.Context(), sc))
	w := httptest.NewRecorder()
	s.Middleware(h).ServeHTTP(w, r)
	return w
}

func TestStageWebhook(t *testing.T) {
	t.Run("with the log", func(t *testing.T) {
		rc := newReceiver(t)
		logPath := filepath.Join(t.TempDir(), "audit.log")
		s := startStage(t, map[string]any{"logPath": logPath,
			"webhook": map[string]any{"configFile": rc.kubeconfig(t), "batchMaxWait": "50ms"}})
		w := serve(s, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
		id := w.Header().Get("Audit-Id")
		eventually(t, "the batch", func() bool { return equalInts(rc.sizes(), []int{2}) })
		rc.mu.Lock()
		evs := rc.batches[0]
		rc.mu.Unlock()
		for i, stage := range []string{"RequestReceived", "ResponseComplete"} {
			ev := evs[i]
			if ev["auditID"] != id || ev["stage"] != stage || ev["verb"] != "get" || ev["level"] != "Metadata" {
				t.Errorf("event %d = %v, want stage %s and auditID %s", i, ev, stage, id)
			}
			if u, _ := ev["user"].(map[string]any); u["username"] != "alice" {
				t.Errorf("user = %v", ev["user"])
			}
			if ref, _ := ev["objectRef"].(map[string]any); ref["resource"] != "configmaps" || ref["name"] != "x" || ref["namespace"] != "default" {
				t.Errorf("objectRef = %v", ev["objectRef"])
			}
		}
		if st, _ := evs[1]["responseStatus"].(map[string]any); st["code"] != float64(200) {
			t.Errorf("responseStatus = %v", evs[1]["responseStatus"])
		}
		data, err := os.ReadFile(logPath)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(bytes.Split(bytes.TrimSpace(data), []byte("\n"))); n != 2 {
			t.Errorf("log has %d lines, want 2", n)
		}
		if got := testutil.ToFloat64(s.events); got != 2 {
			t.Errorf("apiserver_audit_event_total = %v, want 2 (once per event, whatever the backends)", got)
		}
	})
	t.Run("blocking-strict rejects the request", func(t *testing.T) {
		rc := newReceiver(t)
		rc.fail = 1000
		s := startStage(t, map[string]any{
			"webhook": map[string]any{"configFile": rc.kubeconfig(t), "mode": "blocking-strict", "initialBackoff": "1ms"}})
		called := false
		w := serve(s, func(w http.ResponseWriter, r *http.Request) { called = true })
		if called || w.Code != http.StatusInternalServerError ||
			w.Body.String() != `Internal Server Error: "/api/v1/namespaces/default/configmaps/x": failed to store audit event`+"\n" {
			t.Errorf("called %v, answer %d %q", called, w.Code, w.Body.String())
		}
		if got := testutil.ToFloat64(s.rejected); got != 1 {
			t.Errorf("apiserver_audit_requests_rejected_total = %v, want 1", got)
		}
		if got := testutil.ToFloat64(s.errors.WithLabelValues(pluginWebhook)); got != 1 {
			t.Errorf(`apiserver_audit_error_total{plugin="webhook"} = %v, want 1`, got)
		}
	})
	t.Run("blocking ignores the failure", func(t *testing.T) {
		rc := newReceiver(t)
		rc.fail = 1000
		s := startStage(t, map[string]any{
			"webhook": map[string]any{"configFile": rc.kubeconfig(t), "mode": "blocking", "initialBackoff": "1ms"}})
		w := serve(s, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
		if w.Code != http.StatusNoContent {
			t.Errorf("answer %d", w.Code)
		}
		if got := testutil.ToFloat64(s.errors.WithLabelValues(pluginWebhook)); got != 2 {
			t.Errorf(`apiserver_audit_error_total{plugin="webhook"} = %v, want 2`, got)
		}
	})
}

func TestStageConfig(t *testing.T) {
	reg := pipeline.NewRegistry()
	Register(reg)
	kc := newReceiver(t).kubeconfig(t)
	policy := map[string]any{"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": []any{map[string]any{"level": "Metadata"}}}
	for _, tc := range []struct {
		name string
		cfg  map[string]any
		want string
	}{
		{"webhook alone", map[string]any{"policy": policy, "webhook": map[string]any{"configFile": kc}}, ""},
		{"unknown key", map[string]any{"policy": policy, "webhook": map[string]any{"configFile": kc, "batchSize": 3}}, "webhook.batchSize"},
		{"no policy", map[string]any{"webhook": map[string]any{"configFile": kc}}, "webhook.configFile: needs policyFile or policy"},
		{"no backend", map[string]any{"policy": policy}, "logPath: is required with a policy"},
		{"bad mode", map[string]any{"policy": policy, "webhook": map[string]any{"configFile": kc, "mode": "x"}}, "webhook.mode: invalid audit webhook mode x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := reg.BuildList(pipeline.KindStage, "pipeline", []config.Entry{{Name: Name, Config: tc.cfg}})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestStageWebhookTruncate(t *testing.T) {
	big := `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"},"data":{"k":"` + strings.Repeat("v", 4000) + `"}}`
	answer := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, big)
	}
	policy := map[string]any{"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": []any{map[string]any{"level": "RequestResponse"}}}
	t.Run("bodies dropped", func(t *testing.T) {
		rc := newReceiver(t)
		logPath := filepath.Join(t.TempDir(), "audit.log")
		s := startStage(t, map[string]any{"logPath": logPath, "policy": policy, "webhook": map[string]any{
			"configFile": rc.kubeconfig(t), "batchMaxWait": "20ms", "truncateEnabled": true, "truncateMaxEventSize": 2000}})
		serve(s, answer)
		eventually(t, "the batch", func() bool { return equalInts(rc.sizes(), []int{2}) })
		rc.mu.Lock()
		received, done := rc.batches[0][0], rc.batches[0][1]
		rc.mu.Unlock()
		if _, ok := received["annotations"]; ok {
			t.Errorf("RequestReceived was truncated: %v", received)
		}
		if done["responseObject"] != nil || done["annotations"].(map[string]any)["audit.k8s.io/truncated"] != "true" {
			t.Errorf("ResponseComplete = %v, want it without responseObject and annotated", done)
		}
		data, _ := os.ReadFile(logPath)
		if !bytes.Contains(data, []byte(strings.Repeat("v", 4000))) {
			t.Error("the log lost the response: truncation is the webhook's")
		}
	})
	t.Run("too large", func(t *testing.T) {
		rc := newReceiver(t)
		s := startStage(t, map[string]any{"policy": policy, "webhook": map[string]any{
			"configFile": rc.kubeconfig(t), "mode": "blocking", "truncateEnabled": true,
			"truncateMaxEventSize": 100, "truncateMaxBatchSize": 100}})
		serve(s, answer)
		if got := rc.postCount(); got != 0 {
			t.Errorf("%d POSTs, want none", got)
		}
		if got := testutil.ToFloat64(s.errors.WithLabelValues(pluginTruncate)); got != 2 {
			t.Errorf(`apiserver_audit_error_total{plugin="truncate"} = %v, want 2`, got)
		}
	})
	t.Run("off", func(t *testing.T) {
		rc := newReceiver(t)
		s := startStage(t, map[string]any{"policy": policy, "webhook": map[string]any{
			"configFile": rc.kubeconfig(t), "mode": "blocking", "truncateMaxEventSize": 100, "truncateMaxBatchSize": 100}})
		serve(s, answer)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if len(rc.batches) != 2 || rc.batches[1][0]["responseObject"] == nil {
			t.Errorf("batches = %v, want both events whole", len(rc.batches))
		}
	})
}

package pipeline

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/request"
)

// testStage is a configurable stage for engine tests.
type testStage struct {
	cfg    *testConfig
	closed atomic.Bool
}

type testConfig struct {
	Sleep  time.Duration `koanf:"sleep"`
	Reject int           `koanf:"reject"`
	Header string        `koanf:"header"`
}

func (c *testConfig) Validate() error {
	if c.Reject != 0 && (c.Reject < 400 || c.Reject > 599) {
		return &config.FieldError{Key: "reject", Msg: "must be a 4xx or 5xx code"}
	}
	return nil
}

func (s *testStage) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.closed.Load() {
			http.Error(w, "stage used after Close", http.StatusInternalServerError)
			return
		}
		time.Sleep(s.cfg.Sleep)
		if s.cfg.Reject != 0 {
			http.Error(w, "rejected", s.cfg.Reject)
			return
		}
		if s.cfg.Header != "" {
			w.Header().Add("X-Stages", s.cfg.Header)
		}
		next.ServeHTTP(w, r)
	})
}

func (s *testStage) Close() error {
	s.closed.Store(true)
	return nil
}

// infoStage records a RequestInfo, as the request-info plugin does.
type infoStage struct{}

func (infoStage) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		request.SetInfo(r.Context(), &request.RequestInfo{IsResourceRequest: true, Verb: "list", APIVersion: "v1", Resource: "pods"})
		next.ServeHTTP(w, r)
	})
}

func testRegistry(t testing.TB) *Registry {
	r := NewRegistry()
	stage := func(name string, mod func(*Plugin)) {
		p := Plugin{
			Name: name, Kind: KindStage,
			Config: func() any { return &testConfig{} },
			New:    func(c any) (any, error) { return &testStage{cfg: c.(*testConfig)}, nil },
		}
		if mod != nil {
			mod(&p)
		}
		r.MustRegister(p)
	}
	stage("a", nil)
	stage("b", nil)
	stage("info", func(p *Plugin) {
		p.Config = nil
		p.New = func(any) (any, error) { return infoStage{}, nil }
	})
	stage("authn", func(p *Plugin) { p.Requires = []string{"info"} })
	stage("authz", func(p *Plugin) { p.Requires = []string{"authn"}; p.After = []string{"b"} })
	stage("list", func(p *Plugin) { p.Nested = map[string]Kind{"items": KindAuthenticator} })
	stage("end", func(p *Plugin) { p.Terminal = true })
	r.MustRegister(Plugin{Name: "x", Kind: KindAuthenticator, Config: func() any { return &testConfig{} },
		New: func(c any) (any, error) { return &testStage{cfg: c.(*testConfig)}, nil }})
	r.MustRegister(Plugin{Name: "broken", Kind: KindStage, New: func(any) (any, error) { return nil, errors.New("no good") }})
	return r
}

func entries(yamlish ...any) []config.Entry {
	var out []config.Entry
	for _, e := range yamlish {
		switch v := e.(type) {
		case string:
			out = append(out, config.Entry{Name: v})
		case config.Entry:
			out = append(out, v)
		}
	}
	return out
}

func off(name string) config.Entry {
	f := false
	return config.Entry{Name: name, Enabled: &f}
}

func withConfig(name string, c map[string]any) config.Entry {
	return config.Entry{Name: name, Config: c}
}

func TestBuilderRejections(t *testing.T) {
	cases := []struct {
		name     string
		pipeline []config.Entry
		want     string
	}{
		{name: "unknown name", pipeline: entries("a", "nope", "end"), want: `pipeline[1] (nope): unknown stage plugin "nope"; known: a, authn, authz, b, broken, end, info, list`},
		{name: "duplicate", pipeline: entries("a", "b", "a", "end"), want: `pipeline[2] (a): duplicate: "a" is already listed at index 0`},
		{name: "duplicate even when disabled", pipeline: entries("a", off("a"), "end"), want: `pipeline[1] (a): duplicate`},
		{name: "no terminal", pipeline: entries("a", "b"), want: "pipeline: no terminal stage"},
		{name: "terminal disabled", pipeline: entries("a", off("end")), want: "pipeline: no terminal stage"},
		{name: "empty", pipeline: nil, want: "pipeline: no terminal stage"},
		{name: "after terminal", pipeline: entries("a", "end", "b"), want: "pipeline[2] (b): comes after the terminal stage end"},
		{name: "required stage missing", pipeline: entries("authn", "end"), want: "pipeline[0] (authn): requires the info stage, which is not enabled"},
		{name: "required stage disabled", pipeline: entries(off("info"), "authn", "end"), want: "pipeline[1] (authn): requires the info stage"},
		{name: "authorization before authentication", pipeline: entries("info", "authz", "authn", "end"), want: "pipeline[1] (authz): must come after authn (pipeline[2] (authn))"},
		{name: "after-constraint broken", pipeline: entries("info", "authn", "authz", "b", "end"), want: "pipeline[2] (authz): must come after b (pipeline[3] (b))"},
		{name: "unknown config key", pipeline: entries(withConfig("a", map[string]any{"slep": "1s"}), "end"), want: "pipeline[0] (a).config.slep: unknown key"},
		{name: "bad config value", pipeline: entries(withConfig("a", map[string]any{"sleep": "soon"}), "end"), want: "pipeline[0] (a).config.sleep: invalid duration"},
		{name: "config validate", pipeline: entries(withConfig("a", map[string]any{"reject": 200}), "end"), want: "pipeline[0] (a).config.reject: must be a 4xx or 5xx code"},
		{name: "config of disabled entry still checked", pipeline: entries(config.Entry{Name: "a", Enabled: new(bool), Config: map[string]any{"x": 1}}, "end"), want: "pipeline[0] (a).config.x: unknown key"},
		{name: "takes no config", pipeline: entries(withConfig("info", map[string]any{"x": 1}), "end"), want: "pipeline[0] (info).config: info takes no config"},
		{name: "factory error", pipeline: entries("broken", "end"), want: "pipeline[0] (broken): no good"},
		{name: "nested unknown", pipeline: entries(withConfig("list", map[string]any{"items": []any{map[string]any{"name": "y"}}}), "end"),
			want: `pipeline[0] (list).config.items[0] (y): unknown authenticator plugin "y"; known: x`},
		{name: "nested bad config", pipeline: entries(withConfig("list", map[string]any{"items": []any{map[string]any{"name": "x", "config": map[string]any{"sleep": 5}}}}), "end"),
			want: "pipeline[0] (list).config.items[0] (x).config.sleep: invalid duration 5"},
		{name: "nested not a list", pipeline: entries(withConfig("list", map[string]any{"items": "x"}), "end"),
			want: "pipeline[0] (list).config.items[0]: want a mapping"},
	}
	r := testRegistry(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.Plan(&config.Config{Pipeline: c.pipeline})
			if err == nil {
				t.Fatal("planned; want an error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q\nwant it to contain %q", err, c.want)
			}
		})
	}
}

func TestRegistryRejectsDuplicates(t *testing.T) {
	r := testRegistry(t)
	err := r.Register(Plugin{Name: "a", Kind: KindStage, New: func(any) (any, error) { return nil, nil }})
	if err == nil || !strings.Contains(err.Error(), `stage plugin "a" registered twice`) {
		t.Fatalf("got %v", err)
	}
	// The same name in another kind is fine: lists are separate.
	if err := r.Register(Plugin{Name: "a", Kind: KindAuthorizer, New: func(any) (any, error) { return nil, nil }}); err != nil {
		t.Fatal(err)
	}
}

type harness struct {
	e   *Engine
	reg *prometheus.Registry
	srv *httptest.Server
	r   *Registry
}

func newHarness(t *testing.T) *harness {
	reg := prometheus.NewRegistry()
	h := &harness{reg: reg, r: testRegistry(t)}
	h.e = NewEngine(Options{Registry: h.r, Metrics: reg, Next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	})})
	h.srv = httptest.NewServer(h.e)
	t.Cleanup(h.srv.Close)
	return h
}

func (h *harness) apply(t *testing.T, p ...config.Entry) {
	t.Helper()
	cfg := &config.Config{Pipeline: p}
	plan, err := h.r.Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.e.Apply(plan, cfg); err != nil {
		t.Fatal(err)
	}
}

func (h *harness) get(t *testing.T) *http.Response {
	t.Helper()
	resp, err := http.Get(h.srv.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func (h *harness) metric(t *testing.T, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.Metric {
			for _, lp := range m.Label {
				if v, ok := labels[lp.GetName()]; ok && v != lp.GetValue() {
					continue next
				}
			}
			return m
		}
	}
	return nil
}

func TestStageTimeIsItsOwn(t *testing.T) {
	h := newHarness(t)
	h.apply(t,
		config.Entry{Name: "info"},
		withConfig("a", map[string]any{"sleep": "20ms"}),
		withConfig("b", map[string]any{"sleep": "150ms"}),
		config.Entry{Name: "end"})
	if resp := h.get(t); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	sum := func(stage string) time.Duration {
		m := h.metric(t, "apiserver_pipeline_stage_duration_seconds", map[string]string{"stage": stage, "verb": "LIST"})
		if m == nil {
			t.Fatalf("no duration for stage %s", stage)
		}
		if m.Histogram.GetSampleCount() != 1 {
			t.Fatalf("stage %s: %d samples", stage, m.Histogram.GetSampleCount())
		}
		return time.Duration(m.Histogram.GetSampleSum() * float64(time.Second))
	}
	// a's total includes b's 150ms; its own time must not.
	if a := sum("a"); a < 20*time.Millisecond || a >= 150*time.Millisecond {
		t.Errorf("stage a self time %v, want about 20ms", a)
	}
	if b := sum("b"); b < 150*time.Millisecond {
		t.Errorf("stage b self time %v, want at least 150ms", b)
	}
	if m := h.metric(t, "apiserver_request_total", map[string]string{"verb": "LIST", "resource": "pods", "code": "200", "scope": "cluster", "component": "apiserver"}); m == nil || m.Counter.GetValue() != 1 {
		t.Errorf("apiserver_request_total not recorded: %v", m)
	}
}

func TestRejectionCounted(t *testing.T) {
	h := newHarness(t)
	h.apply(t, config.Entry{Name: "info"}, withConfig("a", map[string]any{"reject": 403}), config.Entry{Name: "end"})
	if resp := h.get(t); resp.StatusCode != 403 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	m := h.metric(t, "apiserver_pipeline_stage_rejections_total", map[string]string{"stage": "a", "code": "403"})
	if m == nil || m.Counter.GetValue() != 1 {
		t.Fatalf("rejection not counted: %v", m)
	}
	if m := h.metric(t, "apiserver_pipeline_stage_rejections_total", map[string]string{"stage": "info"}); m != nil {
		t.Errorf("stage info passed the request on but was counted: %v", m)
	}
}

// A reload that toggles a stage while requests flow fails no request, and
// no request reaches a stage after it was closed.
func TestReloadUnderLoad(t *testing.T) {
	h := newHarness(t)
	on := func() {
		h.apply(t, withConfig("a", map[string]any{"header": "a", "sleep": "1ms"}), config.Entry{Name: "end"})
	}
	offA := func() {
		h.apply(t, withConfig("a", map[string]any{"header": "a2", "sleep": "1ms"}), config.Entry{Name: "end"})
	}
	on()

	var wg sync.WaitGroup
	var failures, total, sawA, sawA2 atomic.Int64
	stop := make(chan struct{})
	client := h.srv.Client()
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := client.Get(h.srv.URL + "/x")
				total.Add(1)
				if err != nil {
					failures.Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					failures.Add(1)
				}
				switch resp.Header.Get("X-Stages") {
				case "a":
					sawA.Add(1)
				case "a2":
					sawA2.Add(1)
				}
			}
		}()
	}
	for i := 0; i < 20; i++ {
		time.Sleep(10 * time.Millisecond)
		if i%2 == 0 {
			offA()
		} else {
			on()
		}
	}
	close(stop)
	wg.Wait()
	if failures.Load() != 0 {
		t.Fatalf("%d of %d requests failed across reloads", failures.Load(), total.Load())
	}
	if sawA.Load() == 0 || sawA2.Load() == 0 {
		t.Errorf("both configs should have served: a=%d a2=%d", sawA.Load(), sawA2.Load())
	}
	if g := h.e.Generation(); g != 21 {
		t.Errorf("generation %d, want 21", g)
	}
}

// Unchanged entries keep their instance across a reload; changed ones are
// rebuilt and the old instance is closed once drained.
func TestReloadReusesUnchanged(t *testing.T) {
	h := newHarness(t)
	h.apply(t, withConfig("a", map[string]any{"sleep": "0s"}), withConfig("b", map[string]any{"header": "1"}), config.Entry{Name: "end"})
	first := h.e.cur.Load()
	h.apply(t, withConfig("a", map[string]any{"sleep": "0s"}), withConfig("b", map[string]any{"header": "2"}), config.Entry{Name: "end"})
	second := h.e.cur.Load()
	if first.stages[0] != second.stages[0] {
		t.Error("unchanged stage a was rebuilt")
	}
	if first.stages[1] == second.stages[1] {
		t.Error("changed stage b was reused")
	}
	oldB := first.stages[1].Value.(*testStage)
	deadline := time.Now().Add(5 * time.Second)
	for !oldB.closed.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the replaced stage was never closed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if second.stages[0].Value.(*testStage).closed.Load() {
		t.Error("the reused stage was closed")
	}
}

func TestNestedInstancesReachProvision(t *testing.T) {
	r := testRegistry(t)
	var got []string
	r.MustRegister(Plugin{Name: "holder", Kind: KindStage, Nested: map[string]Kind{"items": KindAuthenticator},
		New: func(any) (any, error) { return &holder{got: &got}, nil }})
	cfg := &config.Config{Pipeline: entries(withConfig("holder", map[string]any{"items": []any{
		map[string]any{"name": "x"},
	}}), "end")}
	plan, err := r.Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(Options{Registry: r, Metrics: prometheus.NewRegistry()})
	if err := e.Apply(plan, cfg); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[x]" {
		t.Errorf("nested = %v", got)
	}
	d := e.Describe()
	if len(d.Stages) != 2 || len(d.Stages[0].Nested["items"]) != 1 || d.Stages[0].Nested["items"][0].Name != "x" {
		t.Errorf("describe: %+v", d)
	}
}

type holder struct{ got *[]string }

func (h *holder) Middleware(next http.Handler) http.Handler { return next }
func (h *holder) Provision(env *Env) error {
	for _, in := range env.Nested("items") {
		*h.got = append(*h.got, in.Plugin.Name)
	}
	return nil
}

// BenchmarkEmptyEngine is the engine's own cost per request: the pipeline
// of the default length with every stage passing through.
func BenchmarkEmptyEngine(b *testing.B) {
	r := NewRegistry()
	var p []config.Entry
	for i := 0; i < 13; i++ {
		name := fmt.Sprintf("s%d", i)
		r.MustRegister(Plugin{Name: name, Kind: KindStage, New: func(any) (any, error) { return PassThrough, nil }})
		p = append(p, config.Entry{Name: name})
	}
	r.MustRegister(Plugin{Name: "end", Kind: KindStage, Terminal: true, New: func(any) (any, error) { return PassThrough, nil }})
	p = append(p, config.Entry{Name: "end"})
	cfg := &config.Config{Pipeline: p}
	plan, err := r.Plan(cfg)
	if err != nil {
		b.Fatal(err)
	}
	e := NewEngine(Options{Registry: r, Metrics: prometheus.NewRegistry(), Next: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})})
	if err := e.Apply(plan, cfg); err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/api/v1/namespaces/default/configmaps/x", nil)
	w := httptest.NewRecorder()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.ServeHTTP(w, req)
	}
}

// A detached long-running request lets a reload close the nested
// instances only its generation used, while the stages it is inside stay
// open until it ends.
func TestDetachedRequestLetsReloadRetire(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := testRegistry(t)
	release, entered := make(chan struct{}), make(chan struct{})
	e := NewEngine(Options{Registry: r, Metrics: reg, Next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		request.Detach(r.Context())
		close(entered)
		<-release
		io.WriteString(w, "ok")
	})})
	srv := httptest.NewServer(e)
	defer srv.Close()
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	defer unblock() // before srv.Close, which waits for the handler
	apply := func(header string) *generation {
		cfg := &config.Config{Pipeline: entries(
			withConfig("list", map[string]any{"items": []any{map[string]any{"name": "x", "config": map[string]any{"header": header}}}}),
			withConfig("b", map[string]any{"header": header}), "end")}
		plan, err := r.Plan(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Apply(plan, cfg); err != nil {
			t.Fatal(err)
		}
		return e.cur.Load()
	}
	first := apply("1")
	done := make(chan error, 1)
	go func() {
		resp, err := http.Get(srv.URL + "/watch")
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-entered
	apply("2")

	oldX := first.stages[0].Nested["items"][0].Value.(*testStage)
	oldB := first.stages[1].Value.(*testStage)
	deadline := time.Now().Add(5 * time.Second)
	for !oldX.closed.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the old nested instance stayed open while a detached request ran")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if oldB.closed.Load() {
		t.Fatal("a stage the running request is inside was closed")
	}
	unblock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for !oldB.closed.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the old stage was never closed after the request ended")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

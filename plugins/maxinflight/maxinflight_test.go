package maxinflight

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/pipeline/pipelinetest"
	"github.com/kpipe/kpipe/internal/request"
)

// server runs the stage behind a scope and request.SetInfo, as the engine
// and the request-info stage would, on a real chi router. A request with
// X-Block waits in the handler until release is closed, after telling
// entered.
func server(t *testing.T, l *Limiter, entered chan<- struct{}, release <-chan struct{}) *httptest.Server {
	t.Helper()
	r := chi.NewRouter()
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			ctx := request.WithScope(req.Context(), &request.Scope{})
			info, err := request.NewResolver().Resolve(req)
			if err != nil {
				t.Errorf("resolve: %v", err)
			}
			request.SetInfo(ctx, info)
			next.ServeHTTP(w, req.WithContext(ctx))
		})
	})
	r.Use(l.Middleware)
	r.Handle("/*", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("X-Block") != "" {
			entered <- struct{}{}
			<-release
		}
		_, _ = io.WriteString(w, "ok")
	}))
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return srv
}

type call struct{ method, path string }

var (
	get   = call{http.MethodGet, "/api/v1/namespaces/default/pods/a"}
	list  = call{http.MethodGet, "/api/v1/pods"}
	watch = call{http.MethodGet, "/api/v1/pods?watch=true"}
	post  = call{http.MethodPost, "/api/v1/namespaces/default/pods"}
	del   = call{http.MethodDelete, "/api/v1/namespaces/default/pods/a"}
	logs  = call{http.MethodGet, "/api/v1/namespaces/default/pods/a/log"}
)

func do(t *testing.T, srv *httptest.Server, c call, block bool) *http.Response {
	t.Helper()
	req, err := http.NewRequest(c.method, srv.URL+c.path, nil)
	if err != nil {
		t.Error(err)
		return nil
	}
	if block {
		req.Header.Set("X-Block", "1")
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Error(err)
		return nil
	}
	return resp
}

func TestLimits(t *testing.T) {
	cases := []struct {
		name     string
		cfg      Config
		hold     call // held in the handler while probe runs
		probe    call
		wantCode int
	}{
		{name: "read-only past the limit", cfg: Config{1, 1}, hold: list, probe: get, wantCode: 429},
		{name: "mutating past the limit", cfg: Config{1, 1}, hold: post, probe: del, wantCode: 429},
		{name: "mutating does not use the read-only budget", cfg: Config{1, 1}, hold: list, probe: post, wantCode: 200},
		{name: "read-only does not use the mutating budget", cfg: Config{1, 1}, hold: post, probe: get, wantCode: 200},
		{name: "watch is exempt", cfg: Config{1, 1}, hold: list, probe: watch, wantCode: 200},
		{name: "a held watch uses no budget", cfg: Config{1, 1}, hold: watch, probe: list, wantCode: 200},
		{name: "log streams are exempt", cfg: Config{1, 1}, hold: get, probe: logs, wantCode: 200},
		{name: "0 is unlimited", cfg: Config{0, 1}, hold: list, probe: get, wantCode: 200},
		{name: "under the limit", cfg: Config{2, 2}, hold: list, probe: get, wantCode: 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			entered, release := make(chan struct{}), make(chan struct{})
			srv := server(t, newLimiter(&tc.cfg), entered, release)

			held := make(chan *http.Response, 1)
			go func() { held <- do(t, srv, tc.hold, true) }()
			select {
			case <-entered:
			case resp := <-held:
				t.Fatalf("the held request finished early: %v", resp)
			}

			resp := do(t, srv, tc.probe, false)
			if resp == nil {
				close(release)
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			close(release)
			if resp.StatusCode != tc.wantCode {
				t.Fatalf("probe code = %d, want %d: %s", resp.StatusCode, tc.wantCode, body)
			}
			if hr := <-held; hr != nil {
				hr.Body.Close()
				if hr.StatusCode != 200 {
					t.Errorf("held request code = %d", hr.StatusCode)
				}
			}
			if tc.wantCode != 429 {
				return
			}
			if ra := resp.Header.Get("Retry-After"); ra != "1" {
				t.Errorf("Retry-After = %q, want 1", ra)
			}
			var st metav1.Status
			if err := json.Unmarshal(body, &st); err != nil {
				t.Fatalf("body is not a Status: %v: %s", err, body)
			}
			if st.Reason != metav1.StatusReasonTooManyRequests || st.Code != 429 || st.Message != tooManyRequestsMessage {
				t.Errorf("status = %+v", st)
			}
			if st.Details == nil || st.Details.RetryAfterSeconds != 1 {
				t.Errorf("details = %+v, want retryAfterSeconds 1", st.Details)
			}

			// The slot comes back once the held request is done.
			resp = do(t, srv, tc.probe, false)
			if resp != nil {
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Errorf("after release, code = %d", resp.StatusCode)
				}
			}
		})
	}
}

func TestGauge(t *testing.T) {
	l := newLimiter(&Config{MaxRequestsInflight: 2, MaxMutatingRequestsInflight: 2})
	env := &pipeline.Env{Log: zap.NewNop(), Metrics: prometheus.NewRegistry(), Context: context.Background()}
	if err := l.Provision(env); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	srv := server(t, l, entered, release)
	done := make(chan struct{})
	go func() {
		if resp := do(t, srv, post, true); resp != nil {
			resp.Body.Close()
		}
		close(done)
	}()
	<-entered
	if got := gaugeValue(t, l.mutating.gauge); got != 1 {
		t.Errorf("mutating gauge while held = %v, want 1", got)
	}
	if got := gaugeValue(t, l.readOnly.gauge); got != 0 {
		t.Errorf("readOnly gauge = %v, want 0", got)
	}
	close(release)
	<-done
	if got := gaugeValue(t, l.mutating.gauge); got != 0 {
		t.Errorf("mutating gauge after = %v, want 0", got)
	}
}

func gaugeValue(t *testing.T, g prometheus.Gauge) float64 {
	t.Helper()
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}

func TestNoRequestInfo(t *testing.T) {
	r := chi.NewRouter()
	r.Use(newLimiter(defaultConfig()).Middleware)
	r.Handle("/*", http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("handler reached") }))
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/pods", nil))
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "no RequestInfo") {
		t.Errorf("got %d %s", rec.Code, rec.Body)
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name    string
		cfg     Config
		wantKey string // "" means valid
	}{
		{name: "defaults", cfg: *defaultConfig()},
		{name: "both unlimited", cfg: Config{0, 0}},
		{name: "large", cfg: Config{1 << 20, 1 << 20}},
		{name: "negative read-only", cfg: Config{-1, 200}, wantKey: "maxRequestsInflight"},
		{name: "negative mutating", cfg: Config{400, -5}, wantKey: "maxMutatingRequestsInflight"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			pipelinetest.WantFieldError(t, err, tc.wantKey)
		})
	}
}

// TestConfigThroughBuilder checks the decode, the defaults and the key a
// bad value is reported under, as `apiserver config validate` shows them.
func TestConfigThroughBuilder(t *testing.T) {
	cases := []struct {
		name    string
		raw     map[string]any
		want    Config
		wantKey string
	}{
		{name: "defaults", raw: nil, want: Config{400, 200}},
		{name: "override one", raw: map[string]any{"maxMutatingRequestsInflight": 7}, want: Config{400, 7}},
		{name: "negative", raw: map[string]any{"maxRequestsInflight": -1}, wantKey: "pipeline[0] (max-inflight).config.maxRequestsInflight"},
		{name: "unknown key", raw: map[string]any{"maxInflight": 1}, wantKey: "pipeline[0] (max-inflight).config.maxInflight"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, err := pipelinetest.Build(t, Register, pipeline.KindStage, Name, tc.raw)
			if tc.wantKey != "" {
				pipelinetest.WantFieldError(t, err, tc.wantKey)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := *in.Config.(*Config); got != tc.want {
				t.Errorf("config = %+v, want %+v", got, tc.want)
			}
			if _, ok := in.Value.(pipeline.Stage); !ok {
				t.Errorf("built a %T", in.Value)
			}
		})
	}
}

// checkFieldError fails unless err is a *config.FieldError naming wantKey,
// or nil when wantKey is empty.

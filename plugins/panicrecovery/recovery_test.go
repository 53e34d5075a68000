package panicrecovery

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
)

// newStage builds a provisioned stage and the log entries it writes.
func newStage(t *testing.T) (*Recovery, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zap.DebugLevel)
	p := newRecovery()
	env := &pipeline.Env{Log: zap.New(core), Metrics: prometheus.NewRegistry(), Context: context.Background()}
	if err := p.Provision(env); err != nil {
		t.Fatal(err)
	}
	return p, logs
}

// router runs the stage the way the engine does: a scope in the context,
// then the stage, then the handler, on a real chi router.
func router(p *Recovery, h http.HandlerFunc) http.Handler {
	r := chi.NewRouter()
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			next.ServeHTTP(w, req.WithContext(request.WithScope(req.Context(), &request.Scope{})))
		})
	})
	r.Use(p.Middleware)
	r.Handle("/*", h)
	return r
}

func TestPanicBecomesStatus(t *testing.T) {
	cases := []struct {
		name  string
		value any
	}{
		{name: "string", value: "secret object contents"},
		{name: "error", value: io.ErrUnexpectedEOF},
		{name: "nil", value: nil}, // a *runtime.PanicNilError since Go 1.21
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, logs := newStage(t)
			srv := httptest.NewServer(router(p, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/boom" {
					panic(tc.value)
				}
				_, _ = io.WriteString(w, "fine")
			}))
			defer srv.Close()

			resp, err := srv.Client().Get(srv.URL + "/boom")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusInternalServerError {
				t.Fatalf("code = %d, want 500; body %s", resp.StatusCode, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			var st metav1.Status
			if err := json.Unmarshal(body, &st); err != nil {
				t.Fatalf("body is not a Status: %v: %s", err, body)
			}
			if st.Kind != "Status" || st.Reason != metav1.StatusReasonInternalError || st.Code != 500 {
				t.Errorf("status = %+v", st)
			}
			if !strings.Contains(st.Message, panicMessage) {
				t.Errorf("message = %q, want kube's %q", st.Message, panicMessage)
			}
			if strings.Contains(string(body), "secret") || strings.Contains(string(body), "unexpected EOF") {
				t.Errorf("panic value leaked to the client: %s", body)
			}

			// The server and the connection survive: the next request on
			// the same client reuses the connection and is served.
			reused := false
			ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
				GotConn: func(ci httptrace.GotConnInfo) { reused = ci.Reused },
			})
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/ok", nil)
			resp, err = srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || string(body) != "fine" {
				t.Errorf("follow-up = %d %q", resp.StatusCode, body)
			}
			if !reused {
				t.Error("the follow-up request did not reuse the connection")
			}

			entries := logs.All()
			if len(entries) != 1 {
				t.Fatalf("%d log entries, want 1: %v", len(entries), entries)
			}
			fields := entries[0].ContextMap()
			if st, _ := fields["stacktrace"].(string); !strings.Contains(st, "TestPanicBecomesStatus") {
				t.Errorf("stacktrace does not show the panicking handler: %q", st)
			}
			if _, ok := fields["panic"]; !ok {
				t.Errorf("log has no panic field: %v", fields)
			}
			if n := counterValue(t, p.panics); n != 1 {
				t.Errorf("panics_total = %v, want 1", n)
			}
		})
	}
}

func TestAbortAndStartedResponses(t *testing.T) {
	cases := []struct {
		name     string
		handler  http.HandlerFunc
		wantCode int
		wantBody string
		wantLogs int
	}{
		{
			name:     "ErrAbortHandler goes on up silently",
			handler:  func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) },
			wantCode: http.StatusOK, // nothing written
			wantLogs: 0,
		},
		{
			name: "headers written: abort, no second status",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusAccepted)
				panic("late")
			},
			wantCode: http.StatusAccepted,
			wantLogs: 1,
		},
		{
			name: "body started: abort, no second status",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				_, _ = io.WriteString(w, `{"partial":`)
				panic("late")
			},
			wantCode: http.StatusOK,
			wantBody: `{"partial":`,
			wantLogs: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, logs := newStage(t)
			h := router(p, tc.handler)
			rec := httptest.NewRecorder()
			var got any
			func() {
				defer func() { got = recover() }()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/x", nil))
			}()
			if got != http.ErrAbortHandler {
				t.Fatalf("recovered %v, want http.ErrAbortHandler", got)
			}
			if rec.Code != tc.wantCode || rec.Body.String() != tc.wantBody {
				t.Errorf("response = %d %q, want %d %q", rec.Code, rec.Body.String(), tc.wantCode, tc.wantBody)
			}
			if n := logs.Len(); n != tc.wantLogs {
				t.Errorf("%d log entries, want %d", n, tc.wantLogs)
			}
		})
	}
}

func TestPassThrough(t *testing.T) {
	cases := []struct {
		name    string
		handler http.HandlerFunc
		check   func(t *testing.T, rec *httptest.ResponseRecorder)
	}{
		{
			name: "status, headers and body unchanged",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("X-Test", "1")
				w.WriteHeader(http.StatusCreated)
				_, _ = io.WriteString(w, "made")
			},
			check: func(t *testing.T, rec *httptest.ResponseRecorder) {
				if rec.Code != http.StatusCreated || rec.Body.String() != "made" || rec.Header().Get("X-Test") != "1" {
					t.Errorf("got %d %q %v", rec.Code, rec.Body.String(), rec.Header())
				}
			},
		},
		{
			name: "flush reaches the underlying writer",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				if err := http.NewResponseController(w).Flush(); err != nil {
					t.Errorf("flush: %v", err)
				}
			},
			check: func(t *testing.T, rec *httptest.ResponseRecorder) {
				if !rec.Flushed {
					t.Error("not flushed")
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, logs := newStage(t)
			rec := httptest.NewRecorder()
			router(p, tc.handler).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/x", nil))
			tc.check(t, rec)
			if logs.Len() != 0 {
				t.Errorf("unexpected logs: %v", logs.All())
			}
		})
	}
}

func TestRegister(t *testing.T) {
	r := pipeline.NewRegistry()
	Register(r)
	pl, ok := r.Lookup(pipeline.KindStage, Name)
	if !ok {
		t.Fatal("not registered")
	}
	if pl.Config != nil {
		t.Error("panic-recovery takes no config")
	}
	v, err := pl.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := v.(pipeline.Stage); !ok {
		t.Fatalf("New built a %T, not a Stage", v)
	}
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

package timeout

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpipe/kpipe/internal/api/status"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/pipeline/pipelinetest"
	"github.com/kpipe/kpipe/internal/request"
)

// router runs the stage behind a scope and RequestInfo, as the engine and
// the request-info stage would, routed by a real chi router. The outer middleware
// sets a header of its own, as an earlier stage might.
func router(t *testing.T, s *Timeout, h http.HandlerFunc) http.Handler {
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
			w.Header().Set("X-Outer", "1")
			next.ServeHTTP(w, req.WithContext(ctx))
		})
	})
	// The handler sits behind the stage unrouted, as the pipeline's
	// terminal handler does: a route of this mux would read the mux's
	// pooled route context from the handler goroutine after the request
	// has ended and the context been reused.
	r.Handle("/*", s.Middleware(h))
	return r
}

func stage(d time.Duration) *Timeout { return newTimeout(&Config{RequestTimeout: d}) }

func decodeStatus(t *testing.T, body []byte) metav1.Status {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatalf("body is not a Status: %v: %s", err, body)
	}
	return st
}

func TestTimesOut(t *testing.T) {
	cases := []struct {
		name     string
		max      time.Duration
		target   string
		min, lim time.Duration // the 504 must come after min and before lim
	}{
		{name: "requestTimeout", max: 100 * time.Millisecond, target: "/api/v1/pods", min: 100 * time.Millisecond, lim: 2 * time.Second},
		{name: "shorter ?timeout= wins", max: time.Minute, target: "/api/v1/pods?timeout=100ms", min: 100 * time.Millisecond, lim: 2 * time.Second},
		{name: "longer ?timeout= is capped", max: 100 * time.Millisecond, target: "/api/v1/pods?timeout=1h", min: 100 * time.Millisecond, lim: 2 * time.Second},
		{name: "?timeout=0 means the default", max: 100 * time.Millisecond, target: "/api/v1/pods?timeout=0s", min: 100 * time.Millisecond, lim: 2 * time.Second},
		{name: "mutating request", max: 100 * time.Millisecond, target: "/api/v1/namespaces/a/pods/b", min: 100 * time.Millisecond, lim: 2 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			defer close(release)
			srv := httptest.NewServer(router(t, stage(tc.max), func(w http.ResponseWriter, r *http.Request) {
				<-release // ignores its context, as a stuck handler would
			}))
			defer srv.Close()

			start := time.Now()
			resp, err := srv.Client().Get(srv.URL + tc.target)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			elapsed := time.Since(start)
			if resp.StatusCode != http.StatusGatewayTimeout {
				t.Fatalf("code = %d: %s", resp.StatusCode, body)
			}
			if elapsed < tc.min || elapsed > tc.lim {
				t.Errorf("answered after %v, want between %v and %v", elapsed, tc.min, tc.lim)
			}
			st := decodeStatus(t, body)
			if st.Reason != metav1.StatusReasonTimeout || st.Code != 504 ||
				st.Message != "Timeout: request did not complete within the allotted timeout" {
				t.Errorf("status = %+v", st)
			}
			if resp.Header.Get("X-Outer") != "1" {
				t.Error("the outer stage's header was lost")
			}
		})
	}
}

func TestBadTimeoutParameter(t *testing.T) {
	cases := []struct {
		name, target, wantMsg string
	}{
		{name: "not a duration", target: "/api/v1/pods?timeout=abc", wantMsg: `invalid timeout specified in the request URL - time: invalid duration "abc"`},
		{name: "no unit", target: "/api/v1/pods?timeout=5", wantMsg: `invalid timeout specified in the request URL - time: missing unit in duration "5"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			router(t, stage(time.Minute), func(http.ResponseWriter, *http.Request) { t.Error("handler reached") }).
				ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.target, nil))
			st := decodeStatus(t, rec.Body.Bytes())
			if rec.Code != 400 || st.Reason != metav1.StatusReasonBadRequest || st.Message != tc.wantMsg {
				t.Errorf("got %d %+v, want message %q", rec.Code, st, tc.wantMsg)
			}
		})
	}
}

func TestPassesThrough(t *testing.T) {
	cases := []struct {
		name    string
		target  string
		handler http.HandlerFunc
		check   func(t *testing.T, resp *http.Response, body string)
	}{
		{
			name:   "headers, status, body and trailers unchanged",
			target: "/api/v1/namespaces/a/configmaps",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Add("X-Multi", "a")
				w.Header().Add("X-Multi", "b")
				w.Header().Set("Trailer", "X-Trailer")
				w.WriteHeader(http.StatusCreated)
				_, _ = io.WriteString(w, `{"kind":"ConfigMap"}`)
				w.Header().Set("X-Trailer", "done")
			},
			check: func(t *testing.T, resp *http.Response, body string) {
				if resp.StatusCode != 201 || body != `{"kind":"ConfigMap"}` {
					t.Errorf("got %d %q", resp.StatusCode, body)
				}
				if resp.Header.Get("Content-Type") != "application/json" || strings.Join(resp.Header["X-Multi"], ",") != "a,b" || resp.Header.Get("X-Outer") != "1" {
					t.Errorf("headers = %v", resp.Header)
				}
				if resp.Trailer.Get("X-Trailer") != "done" {
					t.Errorf("trailers = %v", resp.Trailer)
				}
			},
		},
		{
			name:   "headers set without a write",
			target: "/api/v1/pods",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Only", "yes")
				w.Header().Del("X-Outer")
			},
			check: func(t *testing.T, resp *http.Response, body string) {
				if resp.StatusCode != 200 || resp.Header.Get("X-Only") != "yes" {
					t.Errorf("got %d %v", resp.StatusCode, resp.Header)
				}
				if _, ok := resp.Header["X-Outer"]; ok {
					t.Error("a header the handler deleted was sent")
				}
			},
		},
		{
			name:   "the handler's context carries the deadline",
			target: "/api/v1/pods?timeout=70ms",
			handler: func(w http.ResponseWriter, r *http.Request) {
				dl, ok := r.Context().Deadline()
				if left := time.Until(dl); !ok || left > 70*time.Millisecond || left <= 0 {
					t.Errorf("deadline = %v %v", dl, ok)
				}
				if _, ok := request.InfoFrom(r.Context()); !ok {
					t.Error("the scope did not reach the handler")
				}
			},
			check: func(t *testing.T, resp *http.Response, body string) {
				if resp.StatusCode != 200 {
					t.Errorf("code = %d", resp.StatusCode)
				}
			},
		},
		{
			name:   "a watch is not timed out",
			target: "/api/v1/pods?watch=true",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if _, ok := r.Context().Deadline(); ok {
					t.Error("a watch got a deadline")
				}
				time.Sleep(300 * time.Millisecond) // past requestTimeout
				_, _ = io.WriteString(w, "events")
			},
			check: func(t *testing.T, resp *http.Response, body string) {
				if resp.StatusCode != 200 || body != "events" {
					t.Errorf("got %d %q", resp.StatusCode, body)
				}
			},
		},
		{
			name:   "a watch with a bad ?timeout= is not checked",
			target: "/api/v1/pods?watch=true&timeout=abc",
			handler: func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, "events")
			},
			check: func(t *testing.T, resp *http.Response, body string) {
				if resp.StatusCode != 200 {
					t.Errorf("code = %d", resp.StatusCode)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(router(t, stage(100*time.Millisecond), tc.handler))
			defer srv.Close()
			resp, err := srv.Client().Get(srv.URL + tc.target)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			tc.check(t, resp, string(body))
		})
	}
}

// TestFlushStreams checks a flush reaches the client before the handler
// returns.
func TestFlushStreams(t *testing.T) {
	read := make(chan struct{})
	srv := httptest.NewServer(router(t, stage(5*time.Second), func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "first\n")
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("flush: %v", err)
		}
		select {
		case <-read:
		case <-r.Context().Done():
			t.Error("the client never saw the flushed line")
			return
		}
		_, _ = io.WriteString(w, "second\n")
	}))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/api/v1/pods")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	if err != nil || line != "first\n" {
		t.Fatalf("first line = %q, %v", line, err)
	}
	close(read)
	rest, _ := io.ReadAll(br)
	if string(rest) != "second\n" {
		t.Errorf("rest = %q", rest)
	}
}

// TestLateWrites runs with -race: a handler that keeps using its writer
// after the timeout must not race with the 504 or panic.
func TestLateWrites(t *testing.T) {
	type result struct {
		writeErr, flushErr, hijackErr, deadlineErr error
	}
	results := make(chan result, 1)
	srv := httptest.NewServer(router(t, stage(50*time.Millisecond), func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			return
		}
		h := w.Header() // taken before the timeout
		<-r.Context().Done()
		time.Sleep(20 * time.Millisecond) // let the 504 go out
		var res result
		for i := 0; i < 50; i++ {
			h.Set("X-Late", "1")
			w.Header().Set("X-Later", "1")
			w.WriteHeader(http.StatusOK)
			_, res.writeErr = w.Write([]byte("late"))
			res.flushErr = http.NewResponseController(w).Flush()
		}
		_, _, res.hijackErr = http.NewResponseController(w).Hijack()
		res.deadlineErr = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(time.Hour))
		results <- res
	}))
	defer srv.Close()

	resp, err := srv.Client().Get(srv.URL + "/api/v1/pods")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 504 || strings.Contains(string(body), "late") || resp.Header.Get("X-Late") != "" {
		t.Errorf("got %d %v %s", resp.StatusCode, resp.Header, body)
	}
	res := <-results
	for name, err := range map[string]error{"write": res.writeErr, "flush": res.flushErr, "hijack": res.hijackErr, "deadline": res.deadlineErr} {
		if !errors.Is(err, http.ErrHandlerTimeout) {
			t.Errorf("late %s = %v, want http.ErrHandlerTimeout", name, err)
		}
	}

	// The server still serves.
	resp, err = srv.Client().Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("follow-up code = %d", resp.StatusCode)
	}
}

// TestTimeoutAfterStart checks a handler that has started its response and
// then stalls gets its response aborted, not a 504 glued onto it.
func TestTimeoutAfterStart(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := httptest.NewServer(router(t, stage(100*time.Millisecond), func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "partial")
		_ = http.NewResponseController(w).Flush()
		<-release
	}))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/api/v1/pods")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil || strings.Contains(string(body), "Timeout") {
		t.Errorf("want a broken body, got %q, %v", body, err)
	}
}

func TestPanics(t *testing.T) {
	cases := []struct {
		name    string
		handler http.HandlerFunc
		check   func(t *testing.T, got any)
	}{
		{
			name:    "a panic comes out on the serving goroutine with its stack",
			handler: func(http.ResponseWriter, *http.Request) { panic("kaboom") },
			check: func(t *testing.T, got any) {
				p, ok := got.(*innerPanic)
				if !ok {
					t.Fatalf("recovered %T %v", got, got)
				}
				if p.value != "kaboom" || !strings.Contains(p.Error(), "kaboom") || !strings.Contains(p.Error(), "TestPanics") {
					t.Errorf("panic = %v", p.Error())
				}
			},
		},
		{
			name:    "an error panic unwraps",
			handler: func(http.ResponseWriter, *http.Request) { panic(io.ErrClosedPipe) },
			check: func(t *testing.T, got any) {
				if err, ok := got.(error); !ok || !errors.Is(err, io.ErrClosedPipe) {
					t.Errorf("recovered %v", got)
				}
			},
		},
		{
			name:    "ErrAbortHandler comes out as is",
			handler: func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) },
			check: func(t *testing.T, got any) {
				if got != http.ErrAbortHandler {
					t.Errorf("recovered %v", got)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := router(t, stage(time.Minute), tc.handler)
			var got any
			func() {
				defer func() { got = recover() }()
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/api/v1/pods", nil))
			}()
			tc.check(t, got)
		})
	}
}

func TestPanicAfterTimeoutIsLogged(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	s := stage(50 * time.Millisecond)
	if err := s.Provision(&pipeline.Env{Log: zap.New(core), Context: context.Background()}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	answered := make(chan struct{})
	h := router(t, s, func(w http.ResponseWriter, r *http.Request) {
		defer wg.Done()
		<-answered // panic only once the stage has given up on us
		panic("too late")
	})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/pods", nil))
	close(answered)
	if rec.Code != 504 {
		t.Errorf("code = %d", rec.Code)
	}
	wg.Wait()
	deadline := time.Now().Add(2 * time.Second)
	for logs.FilterMessage("handler panicked after its request timed out").Len() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no log of the late panic: %v", logs.All())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestNoRequestInfo(t *testing.T) {
	r := chi.NewRouter()
	r.Use(stage(time.Minute).Middleware)
	r.Handle("/*", http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("handler reached") }))
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/pods", nil))
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), "no request info") {
		t.Errorf("got %d %s", rec.Code, rec.Body)
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name    string
		cfg     Config
		wantKey string
	}{
		{name: "default", cfg: *defaultConfig()},
		{name: "1ns", cfg: Config{RequestTimeout: 1}},
		{name: "zero", cfg: Config{}, wantKey: "requestTimeout"},
		{name: "negative", cfg: Config{RequestTimeout: -time.Second}, wantKey: "requestTimeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pipelinetest.WantFieldError(t, tc.cfg.Validate(), tc.wantKey)
		})
	}
}

func TestConfigThroughBuilder(t *testing.T) {
	cases := []struct {
		name    string
		raw     map[string]any
		want    time.Duration
		wantKey string
	}{
		{name: "default", want: time.Minute},
		{name: "set", raw: map[string]any{"requestTimeout": "90s"}, want: 90 * time.Second},
		{name: "zero", raw: map[string]any{"requestTimeout": "0s"}, wantKey: "pipeline[0] (timeout).config.requestTimeout"},
		{name: "negative", raw: map[string]any{"requestTimeout": "-5s"}, wantKey: "pipeline[0] (timeout).config.requestTimeout"},
		{name: "not a duration", raw: map[string]any{"requestTimeout": "soon"}, wantKey: "pipeline[0] (timeout).config.requestTimeout"},
		{name: "bare number", raw: map[string]any{"requestTimeout": 60}, wantKey: "pipeline[0] (timeout).config.requestTimeout"},
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
			if got := in.Config.(*Config).RequestTimeout; got != tc.want {
				t.Errorf("requestTimeout = %v, want %v", got, tc.want)
			}
			if _, ok := in.Value.(pipeline.Stage); !ok {
				t.Errorf("built a %T", in.Value)
			}
		})
	}
}

// A handler that began its answer before the deadline and ends it just
// after (typically the error its own deadline caused) completes it rather
// than having the stream reset under it.
func TestStartedAnswerFinishesAfterDeadline(t *testing.T) {
	srv := httptest.NewServer(router(t, stage(100*time.Millisecond), func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "8")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, "etcd")
		_ = http.NewResponseController(w).Flush()
		<-r.Context().Done()
		time.Sleep(20 * time.Millisecond)
		_, _ = io.WriteString(w, "down")
	}))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/api/v1/pods")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable || string(body) != "etcddown" {
		t.Fatalf("got %d %q, %v; want the handler's whole answer", resp.StatusCode, body, err)
	}
}

// blockingWriter is a client that reads nothing: Write blocks until a
// write deadline in the past is set, as a connection's would.
type blockingWriter struct {
	*httptest.ResponseRecorder
	cut chan struct{}
}

func (w *blockingWriter) Write(b []byte) (int, error) {
	<-w.cut
	return 0, errors.New("i/o timeout")
}

func (w *blockingWriter) SetWriteDeadline(d time.Time) error {
	if !d.IsZero() && !d.After(time.Now()) {
		close(w.cut)
	}
	return nil
}

// A handler stuck in a write at the deadline is cut loose by a past write
// deadline, so the stage answers (by aborting) instead of waiting on it.
func TestStuckWriteCutAtDeadline(t *testing.T) {
	w := &blockingWriter{ResponseRecorder: httptest.NewRecorder(), cut: make(chan struct{})}
	h := router(t, stage(100*time.Millisecond), func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("a body the client never reads"))
	})
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/v1/pods", nil))
	}()
	select {
	case p := <-done:
		if p != http.ErrAbortHandler {
			t.Fatalf("got %v, want the stream aborted", p)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stage waited on a stuck write past its deadline")
	}
}

// A handler that answers the error its own deadline caused races the
// stage's 504: whichever wins, the client gets one whole Status, never a
// reset stream (the stage once checked "started" and then, after the
// handler had begun in between, aborted it).
func TestDeadlineAnswerRace(t *testing.T) {
	// More Ps than cores make the interleaving far likelier: the old
	// code failed 4 runs in 6 this way, 1 in 5 at GOMAXPROCS=2.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	h := router(t, stage(time.Millisecond), func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		status.Write(w, apierrors.NewTimeoutError("the handler's own", 0))
	})
	for i := 0; i < 3000; i++ {
		rec := httptest.NewRecorder()
		var p any
		func() {
			defer func() { p = recover() }()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/pods", nil))
		}()
		if p != nil {
			t.Fatalf("request %d: aborted (%v) instead of answered", i, p)
		}
		if st := decodeStatus(t, rec.Body.Bytes()); rec.Code != http.StatusGatewayTimeout || st.Code != http.StatusGatewayTimeout {
			t.Fatalf("request %d: %d %+v", i, rec.Code, st)
		}
	}
}

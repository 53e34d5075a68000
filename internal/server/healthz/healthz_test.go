package healthz

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/go-chi/chi/v5"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func failing(name, reason string) Check {
	return NamedCheck(name, func(*http.Request) error { return errors.New(reason) })
}

func passing(name string) Check {
	return NamedCheck(name, func(*http.Request) error { return nil })
}

func serve(t *testing.T, r http.Handler, target string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec
}

func TestEndpoints(t *testing.T) {
	tests := []struct {
		name     string
		endpoint string
		checks   []Check
		target   string
		code     int
		body     string
	}{
		{
			name:     "pass non-verbose",
			endpoint: "healthz",
			checks:   []Check{PingCheck, passing("etcd")},
			target:   "/healthz",
			code:     http.StatusOK,
			body:     "ok",
		},
		{
			name:     "pass verbose",
			endpoint: "livez",
			checks:   []Check{PingCheck, passing("etcd")},
			target:   "/livez?verbose",
			code:     http.StatusOK,
			body:     "[+]ping ok\n[+]etcd ok\nlivez check passed\n",
		},
		{
			name:     "leading slash in endpoint",
			endpoint: "/readyz",
			checks:   []Check{PingCheck},
			target:   "/readyz?verbose=1",
			code:     http.StatusOK,
			body:     "[+]ping ok\nreadyz check passed\n",
		},
		{
			name:     "no checks serves ping",
			endpoint: "healthz",
			target:   "/healthz?verbose",
			code:     http.StatusOK,
			body:     "[+]ping ok\nhealthz check passed\n",
		},
		{
			name:     "failure is verbose and withholds reason",
			endpoint: "readyz",
			checks:   []Check{PingCheck, failing("etcd", "secret detail")},
			target:   "/readyz",
			code:     http.StatusInternalServerError,
			body:     "[+]ping ok\n[-]etcd failed: reason withheld\nreadyz check failed\n",
		},
		{
			name:     "exclude skips failing check",
			endpoint: "readyz",
			checks:   []Check{PingCheck, failing("etcd", "down")},
			target:   "/readyz?verbose&exclude=etcd",
			code:     http.StatusOK,
			body:     "[+]ping ok\n[+]etcd excluded: ok\nreadyz check passed\n",
		},
		{
			name:     "exclude non-verbose",
			endpoint: "readyz",
			checks:   []Check{PingCheck, failing("etcd", "down")},
			target:   "/readyz?exclude=etcd",
			code:     http.StatusOK,
			body:     "ok",
		},
		{
			name:     "unknown excludes sorted and quoted",
			endpoint: "healthz",
			checks:   []Check{PingCheck, passing("etcd")},
			target:   "/healthz?verbose&exclude=zz&exclude=etcd&exclude=aa&exclude=zz",
			code:     http.StatusOK,
			body: "[+]ping ok\n[+]etcd excluded: ok\n" +
				"warn: some health checks cannot be excluded: no matches for \"aa\",\"zz\"\n" +
				"healthz check passed\n",
		},
		{
			name:     "unknown exclude shown on failure",
			endpoint: "healthz",
			checks:   []Check{failing("etcd", "down")},
			target:   "/healthz?exclude=nope",
			code:     http.StatusInternalServerError,
			body: "[-]etcd failed: reason withheld\n" +
				"warn: some health checks cannot be excluded: no matches for \"nope\"\n" +
				"healthz check failed\n",
		},
		{
			name:     "exclude name with slash",
			endpoint: "readyz",
			checks:   []Check{failing("poststarthook/rbac", "not yet")},
			target:   "/readyz?verbose&exclude=poststarthook/rbac",
			code:     http.StatusOK,
			body:     "[+]poststarthook/rbac excluded: ok\nreadyz check passed\n",
		},
		{
			name:     "individual pass",
			endpoint: "healthz",
			checks:   []Check{PingCheck, passing("etcd")},
			target:   "/healthz/etcd",
			code:     http.StatusOK,
			body:     "ok",
		},
		{
			name:     "individual fail shows error",
			endpoint: "healthz",
			checks:   []Check{failing("etcd", "connection refused")},
			target:   "/healthz/etcd",
			code:     http.StatusInternalServerError,
			body:     "internal server error: connection refused\n",
		},
		{
			name:     "individual name with slash",
			endpoint: "readyz",
			checks:   []Check{PingCheck, failing("poststarthook/rbac", "not yet")},
			target:   "/readyz/poststarthook/rbac",
			code:     http.StatusInternalServerError,
			body:     "internal server error: not yet\n",
		},
		{
			name:     "individual name with escaped slash",
			endpoint: "readyz",
			checks:   []Check{passing("poststarthook/rbac")},
			target:   "/readyz/poststarthook%2Frbac",
			code:     http.StatusOK,
			body:     "ok",
		},
		{
			name:     "unknown check is 404",
			endpoint: "healthz",
			checks:   []Check{PingCheck},
			target:   "/healthz/nope",
			code:     http.StatusNotFound,
			body:     "404 page not found\n",
		},
		{
			name:     "prefix of slash name is 404",
			endpoint: "readyz",
			checks:   []Check{passing("poststarthook/rbac")},
			target:   "/readyz/poststarthook",
			code:     http.StatusNotFound,
			body:     "404 page not found\n",
		},
		{
			name:     "empty check name is 404",
			endpoint: "healthz",
			checks:   []Check{PingCheck},
			target:   "/healthz/",
			code:     http.StatusNotFound,
			body:     "404 page not found\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := chi.NewRouter()
			Install(r, tt.endpoint, func() []Check { return tt.checks })
			rec := serve(t, r, tt.target)
			if rec.Code != tt.code {
				t.Errorf("code = %d, want %d", rec.Code, tt.code)
			}
			if got := rec.Body.String(); got != tt.body {
				t.Errorf("body = %q, want %q", got, tt.body)
			}
			if tt.code == http.StatusNotFound {
				return
			}
			if got := rec.Header().Get("Content-Type"); got != "text/plain; charset=utf-8" {
				t.Errorf("Content-Type = %q", got)
			}
			if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q", got)
			}
		})
	}
}

func TestFailureReasonIsLogged(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	r := chi.NewRouter()
	Install(r, "readyz", func() []Check { return []Check{failing("etcd", "secret detail")} },
		WithLogger(zap.New(core)))
	rec := serve(t, r, "/readyz")
	if strings.Contains(rec.Body.String(), "secret detail") {
		t.Fatalf("reason leaked into body: %q", rec.Body.String())
	}
	entries := logs.All()
	if len(entries) != 1 {
		t.Fatalf("got %d log entries, want 1", len(entries))
	}
	if d := entries[0].ContextMap()["details"]; !strings.Contains(d.(string), "[-]etcd failed: secret detail") {
		t.Errorf("details = %q", d)
	}
}

func TestChecksChangeAtRunTime(t *testing.T) {
	var mu sync.Mutex
	checks := []Check{PingCheck}
	r := chi.NewRouter()
	Install(r, "readyz", func() []Check {
		mu.Lock()
		defer mu.Unlock()
		return append([]Check(nil), checks...)
	})

	if rec := serve(t, r, "/readyz/poststarthook/late"); rec.Code != http.StatusNotFound {
		t.Fatalf("before add: code = %d, want 404", rec.Code)
	}

	mu.Lock()
	checks = append(checks, failing("poststarthook/late", "not started"))
	mu.Unlock()

	t.Run("root", func(t *testing.T) {
		rec := serve(t, r, "/readyz")
		want := "[+]ping ok\n[-]poststarthook/late failed: reason withheld\nreadyz check failed\n"
		if rec.Code != http.StatusInternalServerError || rec.Body.String() != want {
			t.Errorf("got %d %q, want 500 %q", rec.Code, rec.Body.String(), want)
		}
	})
	t.Run("individual", func(t *testing.T) {
		rec := serve(t, r, "/readyz/poststarthook/late")
		if rec.Code != http.StatusInternalServerError {
			t.Errorf("code = %d, want 500", rec.Code)
		}
	})
}

func TestShutdownCheck(t *testing.T) {
	var s ShutdownCheck
	r := chi.NewRouter()
	Install(r, "readyz", func() []Check { return []Check{PingCheck, &s} })

	if rec := serve(t, r, "/readyz"); rec.Code != http.StatusOK {
		t.Fatalf("before Begin: code = %d, want 200", rec.Code)
	}
	s.Begin()
	tests := []struct {
		name   string
		target string
		body   string
	}{
		{"root", "/readyz", "[+]ping ok\n[-]shutdown failed: reason withheld\nreadyz check failed\n"},
		{"individual", "/readyz/shutdown", "internal server error: process is shutting down\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(t, r, tt.target)
			if rec.Code != http.StatusInternalServerError || rec.Body.String() != tt.body {
				t.Errorf("got %d %q, want 500 %q", rec.Code, rec.Body.String(), tt.body)
			}
		})
	}
}

func TestThreeEndpointsOnOneRouter(t *testing.T) {
	r := chi.NewRouter()
	for _, ep := range []string{"healthz", "livez", "readyz"} {
		Install(r, ep, func() []Check { return []Check{PingCheck} })
	}
	for _, target := range []string{"/healthz", "/livez", "/readyz", "/healthz/ping", "/livez/ping", "/readyz/ping"} {
		t.Run(target, func(t *testing.T) {
			if rec := serve(t, r, target); rec.Code != http.StatusOK || rec.Body.String() != "ok" {
				t.Errorf("got %d %q", rec.Code, rec.Body.String())
			}
		})
	}
}

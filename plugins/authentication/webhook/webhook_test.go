package webhook

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
)

// remote is a TokenReview service over real TLS on 127.0.0.1.
type remote struct {
	*httptest.Server
	mu      sync.Mutex
	reviews []authenticationv1.TokenReview
	answer  func(n int, r *authenticationv1.TokenReview) (int, authenticationv1.TokenReviewStatus)
}

func startRemote(t *testing.T) *remote {
	t.Helper()
	rm := &remote{}
	rm.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var tr authenticationv1.TokenReview
		if err := json.NewDecoder(r.Body).Decode(&tr); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rm.mu.Lock()
		rm.reviews = append(rm.reviews, tr)
		n := len(rm.reviews)
		answer := rm.answer
		rm.mu.Unlock()
		code, st := http.StatusOK, authenticationv1.TokenReviewStatus{}
		if answer != nil {
			code, st = answer(n, &tr)
		}
		if code != http.StatusOK {
			http.Error(w, "failing", code)
			return
		}
		tr.Status = st
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(tr)
	}))
	t.Cleanup(rm.Close)
	return rm
}

func (rm *remote) calls() int {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return len(rm.reviews)
}

func (rm *remote) last() authenticationv1.TokenReview {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.reviews[len(rm.reviews)-1]
}

func writeKubeconfig(t *testing.T, rm *remote) string {
	t.Helper()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rm.Certificate().Raw})
	kc := `apiVersion: v1
kind: Config
clusters:
- name: authn
  cluster:
    server: ` + rm.URL + `/tokenreview
    certificate-authority-data: ` + base64.StdEncoding.EncodeToString(ca) + `
users:
- name: apiserver
  user: {token: secret-of-the-apiserver}
contexts:
- name: webhook
  context: {cluster: authn, user: apiserver}
current-context: webhook
`
	p := filepath.Join(t.TempDir(), "authn.kubeconfig")
	if err := os.WriteFile(p, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newTest(t *testing.T, rm *remote, ttl time.Duration) (*Authenticator, *fakeClock, *prometheus.Registry) {
	t.Helper()
	c := defaultConfig()
	c.KubeConfigFile = writeKubeconfig(t, rm)
	c.CacheTTL = ttl
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	a, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	a.backoff = wait.Backoff{Duration: time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
	t.Cleanup(func() {
		if err := a.Close(); err != nil {
			t.Error(err)
		}
	})
	reg := prometheus.NewRegistry()
	srv := config.Default()
	srv.ServiceAccount.APIAudiences = []string{"api", "other-api"}
	if err := a.Provision(&pipeline.Env{Metrics: reg, Server: srv}); err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	if a.cache != nil {
		a.cache.SetClock(clock.now)
	}
	return a, clock, reg
}

func req(token string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/api", nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return r
}

func jane(_ int, r *authenticationv1.TokenReview) (int, authenticationv1.TokenReviewStatus) {
	if r.Spec.Token != "jane-token" {
		return http.StatusOK, authenticationv1.TokenReviewStatus{}
	}
	return http.StatusOK, authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{
		Username: "jane", UID: "42", Groups: []string{"devs"}, Extra: map[string]authenticationv1.ExtraValue{"team": {"a"}},
	}}
}

func TestAuthenticate(t *testing.T) {
	rm := startRemote(t)
	rm.answer = jane
	a, _, _ := newTest(t, rm, 0)

	t.Run("no bearer token is left to the others, without a call", func(t *testing.T) {
		if u, ok, err := a.AuthenticateRequest(req("")); u != nil || ok || err != nil {
			t.Fatalf("got %v %v %v", u, ok, err)
		}
		if rm.calls() != 0 {
			t.Fatal("called the service")
		}
	})
	t.Run("an authenticated token is the review's user", func(t *testing.T) {
		u, ok, err := a.AuthenticateRequest(req("jane-token"))
		if !ok || err != nil {
			t.Fatalf("got %v %v", ok, err)
		}
		want := &request.User{Name: "jane", UID: "42", Groups: []string{"devs"}, Extra: map[string][]string{"team": {"a"}}}
		if !reflect.DeepEqual(u, want) {
			t.Errorf("user %+v, want %+v", u, want)
		}
		sent := rm.last()
		if sent.APIVersion != "authentication.k8s.io/v1" || sent.Kind != "TokenReview" || sent.Spec.Token != "jane-token" {
			t.Errorf("sent %+v", sent)
		}
		if !reflect.DeepEqual(sent.Spec.Audiences, []string{"api", "other-api"}) {
			t.Errorf("audiences %v, want the server's API audiences, as kube-apiserver sends", sent.Spec.Audiences)
		}
	})
	t.Run("a token the service does not authenticate is not recognised", func(t *testing.T) {
		if u, ok, err := a.AuthenticateRequest(req("other")); u != nil || ok || err != nil {
			t.Fatalf("got %v %v %v", u, ok, err)
		}
	})
	t.Run("status.error is an error", func(t *testing.T) {
		rm.answer = func(int, *authenticationv1.TokenReview) (int, authenticationv1.TokenReviewStatus) {
			return http.StatusOK, authenticationv1.TokenReviewStatus{Error: "token expired"}
		}
		defer func() { rm.answer = jane }()
		if _, ok, err := a.AuthenticateRequest(req("x")); ok || err == nil || err.Error() != "token expired" {
			t.Fatalf("got %v %v", ok, err)
		}
	})
	t.Run("audiences in the status must meet the wanted ones", func(t *testing.T) {
		rm.answer = func(_ int, r *authenticationv1.TokenReview) (int, authenticationv1.TokenReviewStatus) {
			_, st := jane(0, r)
			st.Audiences = []string{"somewhere-else"}
			return http.StatusOK, st
		}
		defer func() { rm.answer = jane }()
		if _, ok, err := a.AuthenticateRequest(req("jane-token")); ok || err != nil {
			t.Fatalf("got %v %v, want not recognised", ok, err)
		}
	})
	t.Run("a TokenReview's audiences are sent, and the matched ones recorded", func(t *testing.T) {
		rm.answer = func(_ int, r *authenticationv1.TokenReview) (int, authenticationv1.TokenReviewStatus) {
			_, st := jane(0, r)
			st.Audiences = []string{"vault"}
			return http.StatusOK, st
		}
		defer func() { rm.answer = jane }()
		check := &auth.AudienceCheck{Want: []string{"vault", "api"}}
		r := req("jane-token")
		r = r.WithContext(auth.WithAudienceCheck(r.Context(), check))
		if _, ok, err := a.AuthenticateRequest(r); !ok || err != nil {
			t.Fatalf("got %v %v", ok, err)
		}
		if got := rm.last().Spec.Audiences; !reflect.DeepEqual(got, []string{"vault", "api"}) {
			t.Errorf("sent audiences %v", got)
		}
		if !reflect.DeepEqual(check.Matched, []string{"vault"}) {
			t.Errorf("matched %v, want [vault]", check.Matched)
		}
	})
}

func TestAuthenticateCache(t *testing.T) {
	rm := startRemote(t)
	rm.answer = jane
	a, clock, reg := newTest(t, rm, 2*time.Minute)

	t.Run("a success is kept for cacheTTL (2m)", func(t *testing.T) {
		a.AuthenticateRequest(req("jane-token"))
		clock.add(2*time.Minute - time.Second)
		if u, ok, _ := a.AuthenticateRequest(req("jane-token")); !ok || u.Name != "jane" || rm.calls() != 1 {
			t.Fatalf("ok=%v after %d calls, want jane from the cache", ok, rm.calls())
		}
		clock.add(2 * time.Second)
		a.AuthenticateRequest(req("jane-token"))
		if rm.calls() != 2 {
			t.Fatalf("%d calls, want 2 after the TTL", rm.calls())
		}
	})
	t.Run("a token not authenticated is kept as long", func(t *testing.T) {
		before := rm.calls()
		a.AuthenticateRequest(req("bad"))
		clock.add(time.Minute)
		if _, ok, _ := a.AuthenticateRequest(req("bad")); ok || rm.calls() != before+1 {
			t.Fatalf("ok=%v after %d calls, want the failure from the cache", ok, rm.calls()-before)
		}
		clock.add(time.Minute + time.Second)
		a.AuthenticateRequest(req("bad"))
		if rm.calls() != before+2 {
			t.Fatalf("%d calls, want 2 after the TTL", rm.calls()-before)
		}
	})
	t.Run("errors are not kept", func(t *testing.T) {
		rm.answer = func(int, *authenticationv1.TokenReview) (int, authenticationv1.TokenReviewStatus) {
			return http.StatusOK, authenticationv1.TokenReviewStatus{Error: "backend down"}
		}
		defer func() { rm.answer = jane }()
		before := rm.calls()
		a.AuthenticateRequest(req("e"))
		a.AuthenticateRequest(req("e"))
		if rm.calls() != before+2 {
			t.Fatalf("%d calls, want 2", rm.calls()-before)
		}
	})
	t.Run("the key includes the wanted audiences", func(t *testing.T) {
		before := rm.calls()
		r := req("jane-token")
		r = r.WithContext(auth.WithAudienceCheck(r.Context(), &auth.AudienceCheck{Want: []string{"api"}}))
		a.AuthenticateRequest(r)
		if rm.calls() != before+1 {
			t.Fatal("a review for other audiences was answered from the cache")
		}
	})
	t.Run("kube's token cache metrics", func(t *testing.T) {
		if n, err := testutil.GatherAndCount(reg, "authentication_token_cache_request_total"); err != nil || n == 0 {
			t.Errorf("authentication_token_cache_request_total not on the registry: %d %v", n, err)
		}
	})
}

func TestAuthenticateErrors(t *testing.T) {
	t.Run("500 is retried, 5 attempts, then an error", func(t *testing.T) {
		rm := startRemote(t)
		rm.answer = func(int, *authenticationv1.TokenReview) (int, authenticationv1.TokenReviewStatus) {
			return http.StatusInternalServerError, authenticationv1.TokenReviewStatus{}
		}
		a, _, _ := newTest(t, rm, 2*time.Minute)
		if _, ok, err := a.AuthenticateRequest(req("t")); ok || err == nil {
			t.Fatalf("got %v %v", ok, err)
		}
		if rm.calls() != 5 {
			t.Errorf("%d calls, want 5", rm.calls())
		}
	})
	t.Run("429 then an answer succeeds", func(t *testing.T) {
		rm := startRemote(t)
		rm.answer = func(n int, r *authenticationv1.TokenReview) (int, authenticationv1.TokenReviewStatus) {
			if n == 1 {
				return http.StatusTooManyRequests, authenticationv1.TokenReviewStatus{}
			}
			return jane(n, r)
		}
		a, _, _ := newTest(t, rm, 0)
		if _, ok, err := a.AuthenticateRequest(req("jane-token")); !ok || err != nil {
			t.Fatalf("got %v %v", ok, err)
		}
	})
	t.Run("a service that is down is an error at once", func(t *testing.T) {
		rm := startRemote(t)
		a, _, _ := newTest(t, rm, 2*time.Minute)
		rm.Close()
		_, ok, err := a.AuthenticateRequest(req("t"))
		if ok || err == nil || !strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("got %v %v", ok, err)
		}
	})
	t.Run("a canceled request does not fail a shared review", func(t *testing.T) {
		rm := startRemote(t)
		rm.answer = jane
		a, _, _ := newTest(t, rm, 2*time.Minute)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, ok, err := a.AuthenticateRequest(req("jane-token").WithContext(ctx)); !ok || err != nil {
			t.Fatalf("got %v %v", ok, err)
		}
	})
}

func TestConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"kubeConfigFile is required", func(c *Config) { c.KubeConfigFile = "" }, "kubeConfigFile: is required"},
		{"v1 or v1beta1", func(c *Config) { c.Version = "v2" }, `version: unsupported value "v2": supported values are "v1", "v1beta1"`},
		{"cacheTTL not negative", func(c *Config) { c.CacheTTL = -time.Second }, "cacheTTL: must be 0 or more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := defaultConfig()
			c.KubeConfigFile = "/x"
			tc.edit(c)
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
	t.Run("strict decoding names the key", func(t *testing.T) {
		err := config.Decode(map[string]any{"kubeConfigFile": "/x", "ttl": "1m"}, defaultConfig(), "")
		if err == nil || !strings.Contains(err.Error(), "ttl") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a missing kubeconfig file fails New", func(t *testing.T) {
		c := defaultConfig()
		c.KubeConfigFile = filepath.Join(t.TempDir(), "nope")
		if _, err := New(c); err == nil || !strings.Contains(err.Error(), "kubeConfigFile") {
			t.Fatalf("got %v", err)
		}
	})
}

func TestAuthenticateV1beta1(t *testing.T) {
	var got map[string]any
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion":"authentication.k8s.io/v1beta1","kind":"TokenReview","status":{"authenticated":true,"user":{"username":"old","uid":"7","groups":["g"],"extra":{"k":["v"]}}}}`))
	}))
	defer srv.Close()
	c := defaultConfig()
	c.Version = "v1beta1"
	c.CacheTTL = 0
	c.KubeConfigFile = writeKubeconfig(t, &remote{Server: srv})
	a, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Provision(&pipeline.Env{Metrics: prometheus.NewRegistry(), Server: config.Default()}); err != nil {
		t.Fatal(err)
	}
	u, ok, err := a.AuthenticateRequest(req("tok"))
	if !ok || err != nil {
		t.Fatalf("got %v %v", ok, err)
	}
	if want := (&request.User{Name: "old", UID: "7", Groups: []string{"g"}, Extra: map[string][]string{"k": {"v"}}}); !reflect.DeepEqual(u, want) {
		t.Errorf("user %+v, want %+v", u, want)
	}
	if got["apiVersion"] != "authentication.k8s.io/v1beta1" || got["kind"] != "TokenReview" {
		t.Errorf("sent %v", got)
	}
	if spec, _ := got["spec"].(map[string]any); spec["token"] != "tok" {
		t.Errorf("spec %v", got["spec"])
	}
}

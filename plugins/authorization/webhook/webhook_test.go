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
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
)

// remote is a SubjectAccessReview service over real TLS on 127.0.0.1.
type remote struct {
	*httptest.Server
	mu      sync.Mutex
	reviews []authorizationv1.SubjectAccessReview
	paths   []string
	bearers []string
	// answer returns the HTTP status and status of a review (200 unless
	// set).
	answer func(n int, r *authorizationv1.SubjectAccessReview) (int, authorizationv1.SubjectAccessReviewStatus)
}

func startRemote(t *testing.T) *remote {
	t.Helper()
	rm := &remote{}
	rm.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var sar authorizationv1.SubjectAccessReview
		if err := json.NewDecoder(r.Body).Decode(&sar); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rm.mu.Lock()
		rm.reviews = append(rm.reviews, sar)
		rm.paths = append(rm.paths, r.URL.Path)
		rm.bearers = append(rm.bearers, r.Header.Get("Authorization"))
		n := len(rm.reviews)
		answer := rm.answer
		rm.mu.Unlock()
		code, st := http.StatusOK, authorizationv1.SubjectAccessReviewStatus{}
		if answer != nil {
			code, st = answer(n, &sar)
		}
		if code != http.StatusOK {
			http.Error(w, "failing", code)
			return
		}
		sar.Status = st
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(sar)
	}))
	t.Cleanup(rm.Close)
	return rm
}

func (rm *remote) calls() int {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return len(rm.reviews)
}

func (rm *remote) last() authorizationv1.SubjectAccessReview {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.reviews[len(rm.reviews)-1]
}

// writeKubeconfig writes a kubeconfig naming server (with path) and
// trusting rm's certificate.
func writeKubeconfig(t *testing.T, rm *remote, server string) string {
	t.Helper()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rm.Certificate().Raw})
	kc := `apiVersion: v1
kind: Config
clusters:
- name: authz
  cluster:
    server: ` + server + `
    certificate-authority-data: ` + b64(ca) + `
users:
- name: apiserver
  user:
    token: secret-of-the-apiserver
contexts:
- name: webhook
  context: {cluster: authz, user: apiserver}
current-context: webhook
`
	p := filepath.Join(t.TempDir(), "authz.kubeconfig")
	if err := os.WriteFile(p, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// newTest builds an authorizer against rm with a fake clock, a fast
// backoff and its metrics on a registry of its own.
func newTest(t *testing.T, rm *remote, edit func(*Config)) (*Authorizer, *fakeClock, *prometheus.Registry) {
	t.Helper()
	c := defaultConfig()
	c.KubeConfigFile = writeKubeconfig(t, rm, rm.URL+"/authorize")
	if edit != nil {
		edit(c)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	a, err := build(c, clock)
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
	if err := a.Provision(&pipeline.Env{Metrics: reg}); err != nil {
		t.Fatal(err)
	}
	return a, clock, reg
}

var alice = &request.User{Name: "alice", UID: "u-1", Groups: []string{"dev", "system:authenticated"}, Extra: map[string][]string{"scopes": {"a", "b"}}}

func listPods() *auth.Attributes {
	return &auth.Attributes{User: alice, Verb: "list", Namespace: "team", APIVersion: "v1", Resource: "pods", ResourceRequest: true, Path: "/api/v1/namespaces/team/pods"}
}

func TestAuthorizeMapping(t *testing.T) {
	rm := startRemote(t)
	a, _, _ := newTest(t, rm, nil)

	t.Run("a resource request is sent as kube sends it, to the kubeconfig's path with its credentials", func(t *testing.T) {
		attrs := &auth.Attributes{User: alice, Verb: "list", Namespace: "team", APIGroup: "apps", APIVersion: "v1", Resource: "deployments", Subresource: "", ResourceRequest: true,
			FieldSelector: "metadata.name=web,spec.x!=y", LabelSelector: "app in (a,b),!gone,tier"}
		rm.answer = nil
		if _, _, err := a.Authorize(context.Background(), attrs); err != nil {
			t.Fatal(err)
		}
		got := rm.last()
		if got.APIVersion != "authorization.k8s.io/v1" || got.Kind != "SubjectAccessReview" {
			t.Errorf("sent %s %s", got.APIVersion, got.Kind)
		}
		want := authorizationv1.SubjectAccessReviewSpec{
			User: "alice", UID: "u-1", Groups: []string{"dev", "system:authenticated"},
			Extra: map[string]authorizationv1.ExtraValue{"scopes": {"a", "b"}},
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: "team", Verb: "list", Group: "apps", Version: "v1", Resource: "deployments",
				FieldSelector: &authorizationv1.FieldSelectorAttributes{Requirements: []metav1.FieldSelectorRequirement{
					{Key: "metadata.name", Operator: metav1.FieldSelectorOpIn, Values: []string{"web"}},
					{Key: "spec.x", Operator: metav1.FieldSelectorOpNotIn, Values: []string{"y"}},
				}},
				LabelSelector: &authorizationv1.LabelSelectorAttributes{Requirements: []metav1.LabelSelectorRequirement{
					{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}},
					{Key: "gone", Operator: metav1.LabelSelectorOpDoesNotExist},
					{Key: "tier", Operator: metav1.LabelSelectorOpExists},
				}},
			},
		}
		if !reflect.DeepEqual(got.Spec, want) {
			g, _ := json.Marshal(got.Spec)
			w, _ := json.Marshal(want)
			t.Errorf("spec\n got %s\nwant %s", g, w)
		}
		rm.mu.Lock()
		path, bearer := rm.paths[len(rm.paths)-1], rm.bearers[len(rm.bearers)-1]
		rm.mu.Unlock()
		if path != "/authorize" {
			t.Errorf("posted to %q, want the kubeconfig's /authorize", path)
		}
		if bearer != "Bearer secret-of-the-apiserver" {
			t.Errorf("Authorization %q, want the kubeconfig user's token", bearer)
		}
	})
	t.Run("a selector that does not parse is left out", func(t *testing.T) {
		attrs := listPods()
		attrs.FieldSelector = "no-operator"
		attrs.LabelSelector = "a in (b"
		a.Authorize(context.Background(), attrs)
		got := rm.last().Spec.ResourceAttributes
		if got.FieldSelector != nil || got.LabelSelector != nil {
			t.Errorf("selectors sent: %+v %+v", got.FieldSelector, got.LabelSelector)
		}
	})
	t.Run("a non-resource request sends path and verb", func(t *testing.T) {
		a.Authorize(context.Background(), &auth.Attributes{User: alice, Verb: "get", Path: "/healthz"})
		got := rm.last().Spec
		if got.ResourceAttributes != nil || !reflect.DeepEqual(got.NonResourceAttributes, &authorizationv1.NonResourceAttributes{Path: "/healthz", Verb: "get"}) {
			t.Errorf("spec %+v", got)
		}
	})

	for _, tc := range []struct {
		name    string
		st      authorizationv1.SubjectAccessReviewStatus
		want    auth.Decision
		wantErr bool
	}{
		{"allowed is Allow with the reason", authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: "ok by policy"}, auth.Allow, false},
		{"denied is Deny with the reason", authorizationv1.SubjectAccessReviewStatus{Denied: true, Reason: "no pods for alice"}, auth.Deny, false},
		{"neither is NoOpinion with the reason", authorizationv1.SubjectAccessReviewStatus{Reason: "not mine"}, auth.NoOpinion, false},
		{"both is Deny with an error", authorizationv1.SubjectAccessReviewStatus{Allowed: true, Denied: true, Reason: "confused"}, auth.Deny, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rm.answer = func(int, *authorizationv1.SubjectAccessReview) (int, authorizationv1.SubjectAccessReviewStatus) {
				return http.StatusOK, tc.st
			}
			attrs := listPods()
			attrs.Name = tc.name // a review of its own, not cached
			d, reason, err := a.Authorize(context.Background(), attrs)
			if d != tc.want || reason != tc.st.Reason || (err != nil) != tc.wantErr {
				t.Errorf("got %v %q %v, want %v %q error=%v", d, reason, err, tc.want, tc.st.Reason, tc.wantErr)
			}
		})
	}
}

func TestAuthorizeCache(t *testing.T) {
	rm := startRemote(t)
	rm.answer = func(_ int, r *authorizationv1.SubjectAccessReview) (int, authorizationv1.SubjectAccessReviewStatus) {
		return http.StatusOK, authorizationv1.SubjectAccessReviewStatus{Allowed: r.Spec.ResourceAttributes.Verb == "list"}
	}
	a, clock, _ := newTest(t, rm, nil)
	ask := func(verb string) auth.Decision {
		t.Helper()
		attrs := listPods()
		attrs.Verb = verb
		d, _, err := a.Authorize(context.Background(), attrs)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}

	t.Run("allowed answers are kept for authorizedTTL (5m)", func(t *testing.T) {
		ask("list")
		clock.add(5*time.Minute - time.Second)
		if d := ask("list"); d != auth.Allow || rm.calls() != 1 {
			t.Fatalf("decision %v after %d calls, want Allow from the cache", d, rm.calls())
		}
		clock.add(2 * time.Second)
		ask("list")
		if rm.calls() != 2 {
			t.Fatalf("%d calls, want 2 once the authorized TTL passed", rm.calls())
		}
	})
	t.Run("other answers are kept for unauthorizedTTL (30s)", func(t *testing.T) {
		before := rm.calls()
		ask("delete")
		clock.add(29 * time.Second)
		if d := ask("delete"); d != auth.NoOpinion || rm.calls() != before+1 {
			t.Fatalf("decision %v after %d calls, want NoOpinion from the cache", d, rm.calls()-before)
		}
		clock.add(2 * time.Second)
		ask("delete")
		if rm.calls() != before+2 {
			t.Fatalf("%d calls, want 2 once the unauthorized TTL passed", rm.calls()-before)
		}
	})
	t.Run("the key is the whole review: another user is asked", func(t *testing.T) {
		before := rm.calls()
		attrs := listPods()
		attrs.User = &request.User{Name: "bob"}
		a.Authorize(context.Background(), attrs)
		if rm.calls() != before+1 {
			t.Fatal("bob's review was answered from alice's")
		}
	})
	t.Run("long attributes are never cached", func(t *testing.T) {
		before := rm.calls()
		attrs := listPods()
		attrs.Name = strings.Repeat("n", maxCachedAttrLength)
		a.Authorize(context.Background(), attrs)
		a.Authorize(context.Background(), attrs)
		if rm.calls() != before+2 {
			t.Fatalf("%d calls, want 2", rm.calls()-before)
		}
	})
	t.Run("a TTL of 0 keeps nothing", func(t *testing.T) {
		rm2 := startRemote(t)
		b, _, _ := newTest(t, rm2, func(c *Config) { c.AuthorizedTTL = 0; c.UnauthorizedTTL = 0 })
		for range 2 {
			b.Authorize(context.Background(), listPods())
		}
		if rm2.calls() != 2 {
			t.Fatalf("%d calls, want 2", rm2.calls())
		}
	})
}

func TestAuthorizeErrors(t *testing.T) {
	t.Run("500 is retried with backoff, 5 attempts in all, then NoOpinion with the error", func(t *testing.T) {
		rm := startRemote(t)
		rm.answer = func(int, *authorizationv1.SubjectAccessReview) (int, authorizationv1.SubjectAccessReviewStatus) {
			return http.StatusInternalServerError, authorizationv1.SubjectAccessReviewStatus{}
		}
		a, _, reg := newTest(t, rm, nil)
		d, _, err := a.Authorize(context.Background(), listPods())
		if d != auth.NoOpinion || err == nil {
			t.Fatalf("got %v %v, want NoOpinion with an error", d, err)
		}
		if rm.calls() != 5 {
			t.Errorf("%d calls, want kube's 5 attempts", rm.calls())
		}
		if n := testutil.ToFloat64(a.metrics.evaluations.WithLabelValues("default", "error")); n != 5 {
			t.Errorf("evaluations{error} = %v, want 5", n)
		}
		if n := testutil.ToFloat64(a.metrics.failOpen.WithLabelValues("default", "error")); n != 1 {
			t.Errorf("fail open = %v, want 1", n)
		}
		if n, err := testutil.GatherAndCount(reg, "apiserver_authorization_webhook_duration_seconds", "apiserver_authorization_webhook_evaluations_total", "apiserver_authorization_webhook_evaluations_fail_open_total"); err != nil || n != 3 {
			t.Errorf("%d series of kube's webhook metrics on the registry (%v), want 3", n, err)
		}
		// A failure is not cached: the next request asks again.
		a.Authorize(context.Background(), listPods())
		if rm.calls() != 10 {
			t.Errorf("%d calls, want 10: failures are not cached", rm.calls())
		}
	})
	t.Run("a 500 then an answer succeeds", func(t *testing.T) {
		rm := startRemote(t)
		rm.answer = func(n int, _ *authorizationv1.SubjectAccessReview) (int, authorizationv1.SubjectAccessReviewStatus) {
			if n == 1 {
				return http.StatusInternalServerError, authorizationv1.SubjectAccessReviewStatus{}
			}
			return http.StatusOK, authorizationv1.SubjectAccessReviewStatus{Allowed: true}
		}
		a, _, _ := newTest(t, rm, nil)
		if d, _, err := a.Authorize(context.Background(), listPods()); d != auth.Allow || err != nil {
			t.Fatalf("got %v %v, want Allow after a retry", d, err)
		}
		if rm.calls() != 2 {
			t.Errorf("%d calls, want 2", rm.calls())
		}
	})
	t.Run("400 is not retried", func(t *testing.T) {
		rm := startRemote(t)
		rm.answer = func(int, *authorizationv1.SubjectAccessReview) (int, authorizationv1.SubjectAccessReviewStatus) {
			return http.StatusBadRequest, authorizationv1.SubjectAccessReviewStatus{}
		}
		a, _, _ := newTest(t, rm, nil)
		if d, _, err := a.Authorize(context.Background(), listPods()); d != auth.NoOpinion || err == nil {
			t.Fatalf("got %v %v", d, err)
		}
		if rm.calls() != 1 {
			t.Errorf("%d calls, want 1", rm.calls())
		}
	})
	t.Run("a service that is down: one attempt, NoOpinion with the error", func(t *testing.T) {
		rm := startRemote(t)
		a, _, _ := newTest(t, rm, nil)
		rm.Close()
		d, _, err := a.Authorize(context.Background(), listPods())
		if d != auth.NoOpinion || err == nil || !strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("got %v %v, want NoOpinion with connection refused", d, err)
		}
		if n := testutil.ToFloat64(a.metrics.evaluations.WithLabelValues("default", "error")); n != 1 {
			t.Errorf("evaluations{error} = %v, want 1 (refused connections are not retried)", n)
		}
	})
	t.Run("failurePolicy Deny denies with the error, counting no fail open", func(t *testing.T) {
		rm := startRemote(t)
		a, _, _ := newTest(t, rm, func(c *Config) { c.FailurePolicy = FailurePolicyDeny })
		rm.Close()
		if d, _, err := a.Authorize(context.Background(), listPods()); d != auth.Deny || err == nil {
			t.Fatalf("got %v %v, want Deny with an error", d, err)
		}
		if n := testutil.ToFloat64(a.metrics.failOpen.WithLabelValues("default", "error")); n != 0 {
			t.Errorf("fail open = %v, want 0", n)
		}
	})
	t.Run("a slow service times out after the timeout", func(t *testing.T) {
		rm := startRemote(t)
		release := make(chan struct{})
		rm.answer = func(int, *authorizationv1.SubjectAccessReview) (int, authorizationv1.SubjectAccessReviewStatus) {
			<-release
			return http.StatusOK, authorizationv1.SubjectAccessReviewStatus{Allowed: true}
		}
		defer close(release)
		a, _, _ := newTest(t, rm, func(c *Config) { c.Timeout = 200 * time.Millisecond })
		a.backoff.Steps = 1
		start := time.Now()
		d, _, err := a.Authorize(context.Background(), listPods())
		if d != auth.NoOpinion || err == nil || time.Since(start) > 10*time.Second {
			t.Fatalf("got %v %v after %s", d, err, time.Since(start))
		}
		if n := testutil.ToFloat64(a.metrics.evaluations.WithLabelValues("default", "timeout")); n != 1 {
			t.Errorf("evaluations{timeout} = %v, want 1", n)
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
		{"v1 or v1beta1", func(c *Config) { c.SubjectAccessReviewVersion = "v2" }, `subjectAccessReviewVersion: unsupported value "v2": supported values are "v1", "v1beta1"`},
		{"timeout at most 30s", func(c *Config) { c.Timeout = time.Minute }, "timeout: must be more than 0 and no more than 30s"},
		{"failurePolicy", func(c *Config) { c.FailurePolicy = "Allow" }, `failurePolicy: unsupported value "Allow"`},
		{"TTLs not negative", func(c *Config) { c.UnauthorizedTTL = -time.Second }, "unauthorizedTTL: must be 0 or more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := defaultConfig()
			c.KubeConfigFile = "/x"
			tc.edit(c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
	t.Run("strict decoding names the key", func(t *testing.T) {
		c := defaultConfig()
		err := config.Decode(map[string]any{"kubeConfigFile": "/x", "cacheTTL": "1m"}, c, "")
		if err == nil || !strings.Contains(err.Error(), "cacheTTL") {
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

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func TestMatchConditions(t *testing.T) {
	rm := startRemote(t)
	rm.answer = func(int, *authorizationv1.SubjectAccessReview) (int, authorizationv1.SubjectAccessReviewStatus) {
		return http.StatusOK, authorizationv1.SubjectAccessReviewStatus{Allowed: true}
	}
	conds := func(exprs ...string) func(*Config) {
		return func(c *Config) {
			c.AuthorizedTTL = 0
			for _, e := range exprs {
				c.MatchConditions = append(c.MatchConditions, MatchCondition{Expression: e})
			}
		}
	}
	for _, tc := range []struct {
		name     string
		exprs    []string
		attrs    *auth.Attributes
		want     auth.Decision
		wantErr  string
		called   bool
		excluded float64
		errors   float64
	}{
		{name: "all true: the webhook is asked", exprs: []string{
			"request.resourceAttributes.namespace == 'team'",
			"'dev' in request.groups && request.extra['scopes'] == ['a', 'b'] && request.uid == 'u-1'",
			"request.resourceAttributes.labelSelector.requirements.exists(r, r.key == 'app' && r.operator == 'In' && r.values == ['x'])",
			"!has(request.resourceAttributes.fieldSelector)",
		}, attrs: func() *auth.Attributes { a := listPods(); a.LabelSelector = "app=x"; return a }(), want: auth.Allow, called: true},
		{name: "one false: skipped with NoOpinion", exprs: []string{"request.user != 'alice'"}, attrs: listPods(), want: auth.NoOpinion, excluded: 1},
		{name: "an error: failurePolicy with the error", exprs: []string{"request.resourceAttributes.namespace == 'team'"},
			attrs: &auth.Attributes{User: alice, Verb: "get", Path: "/healthz"}, want: auth.NoOpinion, errors: 1,
			wantErr: "cel evaluation error: expression 'request.resourceAttributes.namespace == 'team'' resulted in error: no such key: resourceAttributes"},
		{name: "an error then a false: skipped, no error", exprs: []string{"request.resourceAttributes.verb == 'get'", "request.user == 'bob'"},
			attrs: &auth.Attributes{User: alice, Verb: "get", Path: "/healthz"}, want: auth.NoOpinion, errors: 1, excluded: 1},
		{name: "non-resource attributes", exprs: []string{"request.nonResourceAttributes.path.startsWith('/health')"},
			attrs: &auth.Attributes{User: alice, Verb: "get", Path: "/healthz"}, want: auth.Allow, called: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, _, _ := newTest(t, rm, conds(tc.exprs...))
			before := rm.calls()
			d, _, err := a.Authorize(context.Background(), tc.attrs)
			if d != tc.want {
				t.Errorf("decision %v, want %v (err %v)", d, tc.want, err)
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
			if called := rm.calls() > before; called != tc.called {
				t.Errorf("webhook called: %v, want %v", called, tc.called)
			}
			if n := testutil.ToFloat64(a.metrics.matchExclusions.WithLabelValues("Webhook", "default")); n != tc.excluded {
				t.Errorf("exclusions %v, want %v", n, tc.excluded)
			}
			if n := testutil.ToFloat64(a.metrics.matchErrors.WithLabelValues("Webhook", "default")); n != tc.errors {
				t.Errorf("evaluation errors %v, want %v", n, tc.errors)
			}
		})
	}
	t.Run("failurePolicy Deny denies on an evaluation error", func(t *testing.T) {
		a, _, _ := newTest(t, rm, func(c *Config) {
			c.FailurePolicy = FailurePolicyDeny
			conds("request.resourceAttributes.verb == 'get'")(c)
		})
		if d, _, err := a.Authorize(context.Background(), &auth.Attributes{User: alice, Verb: "get", Path: "/x"}); d != auth.Deny || err == nil {
			t.Fatalf("got %v %v", d, err)
		}
	})
	t.Run("validation compiles each expression", func(t *testing.T) {
		for expr, want := range map[string]string{
			"request.user":          "matchConditions[0].expression: must evaluate to bool but got string",
			"request.nope == 'x'":   "matchConditions[0].expression: compilation failed: ERROR: <input>:1:8: undefined field 'nope'",
			"object.metadata.name":  "matchConditions[0].expression: compilation failed: ERROR: <input>:1:1: undeclared reference to 'object'",
			"  ":                    "matchConditions[0].expression: is required",
			"request.user == 'x' (": "matchConditions[0].expression: compilation failed",
		} {
			c := defaultConfig()
			c.KubeConfigFile = "/x"
			conds(expr)(c)
			if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("%q: got %v, want %q", expr, err, want)
			}
		}
		c := defaultConfig()
		c.KubeConfigFile = "/x"
		conds("true", "true")(c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "matchConditions[1].expression: duplicate value") {
			t.Errorf("duplicates: %v", err)
		}
	})
	t.Run("decoded from YAML-like config", func(t *testing.T) {
		c := defaultConfig()
		if err := config.Decode(map[string]any{"kubeConfigFile": "/x", "matchConditions": []any{map[string]any{"expression": "true"}}}, c, ""); err != nil {
			t.Fatal(err)
		}
		if len(c.MatchConditions) != 1 || c.MatchConditions[0].Expression != "true" {
			t.Fatalf("%+v", c.MatchConditions)
		}
		if err := config.Decode(map[string]any{"matchConditions": []any{map[string]any{"expr": "true"}}}, defaultConfig(), ""); err == nil {
			t.Fatal("unknown key accepted")
		}
	})
}

func TestAuthorizeV1beta1(t *testing.T) {
	var got map[string]any
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion":"authorization.k8s.io/v1beta1","kind":"SubjectAccessReview","status":{"allowed":false,"denied":true,"reason":"old webhook says no"}}`))
	}))
	defer srv.Close()
	a, _, _ := newTest(t, &remote{Server: srv}, func(c *Config) { c.SubjectAccessReviewVersion = "v1beta1" })
	d, reason, err := a.Authorize(context.Background(), listPods())
	if d != auth.Deny || reason != "old webhook says no" || err != nil {
		t.Fatalf("got %v %q %v", d, reason, err)
	}
	spec, _ := got["spec"].(map[string]any)
	if got["apiVersion"] != "authorization.k8s.io/v1beta1" || got["kind"] != "SubjectAccessReview" || spec == nil {
		t.Fatalf("sent %v", got)
	}
	if g, ok := spec["group"].([]any); !ok || len(g) != 2 || spec["groups"] != nil {
		t.Errorf("v1beta1 names the groups `group`: sent %v", spec)
	}
	if ra, _ := spec["resourceAttributes"].(map[string]any); ra["resource"] != "pods" || ra["namespace"] != "team" {
		t.Errorf("resourceAttributes %v", spec["resourceAttributes"])
	}
}

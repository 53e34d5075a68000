package accesse2e

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

func createNamespaces(t *testing.T, cs kubernetes.Interface, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

func createSA(t *testing.T, cs kubernetes.Interface, ns, name string) *corev1.ServiceAccount {
	t.Helper()
	sa, err := cs.CoreV1().ServiceAccounts(ns).Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sa
}

// createToken runs `kubectl create token` as the admin.
func createToken(t *testing.T, ts *testserver.TestServer, ns, sa string, args ...string) string {
	t.Helper()
	out, err := e2eutil.Kubectl(t, ts, append([]string{"create", "token", sa, "-n", ns}, args...)...)
	if err != nil {
		t.Fatalf("kubectl create token: %v\n%s", err, out)
	}
	return strings.TrimSpace(out)
}

// TestServiceAccountTokens shares one server between its parts: each
// server start costs the whole package time.
func TestServiceAccountTokens(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{Configure: func(c *config.Config) {
		for i, e := range c.Pipeline {
			if e.Name == "authentication" {
				c.Pipeline[i].Config = map[string]any{"authenticators": []any{
					map[string]any{"name": "x509"},
					map[string]any{"name": "service-account", "config": map[string]any{"cacheTTL": tokenCacheTTL.String()}},
				}}
			}
		}
	}})
	t.Run("kubectl create token authenticates until the service account is deleted", func(t *testing.T) { testTokenLifecycle(t, ts) })
	t.Run("TokenRequest", func(t *testing.T) { testTokenRequest(t, ts) })
}

// tokenCacheTTL is the service-account authenticator's cacheTTL in
// TestServiceAccountTokens: long enough that a request right after a
// deletion is still inside it on a loaded machine.
const tokenCacheTTL = 4 * time.Second

func testTokenLifecycle(t *testing.T, ts *testserver.TestServer) {
	ctx := context.Background()
	admin := e2eutil.Clientset(t, ts.Config)
	createNamespaces(t, admin, "sa-tokens")
	sa := createSA(t, admin, "sa-tokens", "robot")

	token := createToken(t, ts, "sa-tokens", "robot")
	if strings.Count(token, ".") != 2 {
		t.Fatalf("kubectl create token printed %q, want a JWT", token)
	}

	// The token authenticates as kube's service account user.
	robot := e2eutil.Clientset(t, e2eutil.TokenConfig(ts, token))
	ssr, err := robot.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectReview with the token: %v", err)
	}
	ui := ssr.Status.UserInfo
	wantGroups := []string{"system:serviceaccounts", "system:serviceaccounts:sa-tokens", "system:authenticated"}
	if ui.Username != "system:serviceaccount:sa-tokens:robot" || ui.UID != string(sa.UID) || !slices.Equal(ui.Groups, wantGroups) {
		t.Errorf("user = %+v, want system:serviceaccount:sa-tokens:robot uid %s groups %v", ui, sa.UID, wantGroups)
	}
	if id := ui.Extra["authentication.kubernetes.io/credential-id"]; len(id) != 1 || !strings.HasPrefix(id[0], "JTI=") {
		t.Errorf("extra = %v, want a credential-id JTI=...", ui.Extra)
	}

	// kubectl auth whoami shows the user and groups.
	kc := e2eutil.TokenKubeconfig(t, ts, token)
	out, err := e2eutil.KubectlAs(t, kc, "auth", "whoami", "-o", "json")
	if err != nil {
		t.Fatalf("kubectl auth whoami: %v\n%s", err, out)
	}
	var who authenticationv1.SelfSubjectReview
	if err := json.Unmarshal([]byte(out), &who); err != nil {
		t.Fatalf("whoami output: %v\n%s", err, out)
	}
	if who.Status.UserInfo.Username != "system:serviceaccount:sa-tokens:robot" || !slices.Equal(who.Status.UserInfo.Groups, wantGroups) {
		t.Errorf("kubectl auth whoami = %+v", who.Status.UserInfo)
	}
	out, err = e2eutil.KubectlAs(t, kc, "auth", "whoami")
	if err != nil {
		t.Fatal(err, out)
	}
	e2eutil.MustContain(t, "kubectl auth whoami", out, "system:serviceaccount:sa-tokens:robot", "[system:serviceaccounts system:serviceaccounts:sa-tokens system:authenticated]")

	// A token's success is cached, as kube-apiserver's token cache does:
	// for cacheTTL the service account is not read again, so its deletion
	// is seen only once the entry expires. Then the token is refused with
	// 401. A fresh token, so the entry's start is known: it is no earlier
	// than cached.
	fresh := e2eutil.Clientset(t, e2eutil.TokenConfig(ts, createToken(t, ts, "sa-tokens", "robot")))
	review := func() error {
		_, err := fresh.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		return err
	}
	cached := time.Now()
	if err := review(); err != nil {
		t.Fatal(err)
	}
	hits := tokenCacheHits(t, ts)
	if err := review(); err != nil {
		t.Fatal(err)
	}
	if got := tokenCacheHits(t, ts); got <= hits {
		t.Errorf("authentication_token_cache_request_total{status=\"hit\"} went from %v to %v; want the token answered from the cache", hits, got)
	}
	if err := admin.CoreV1().ServiceAccounts("sa-tokens").Delete(ctx, "robot", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := review(); err != nil && time.Since(cached) < tokenCacheTTL/2 {
		t.Errorf("token right after its service account was deleted: %v; want it still cached", err)
	}
	e2eutil.Eventually(t, tokenCacheTTL+10*time.Second, "the deleted service account's token to be refused", func() bool {
		return apierrors.IsUnauthorized(review())
	})
	if d := time.Since(cached); d < tokenCacheTTL {
		t.Errorf("the token was refused %v after it was cached, before its entry (%v) expired", d, tokenCacheTTL)
	}
	// The first token's entry is older still: refused too.
	_, err = robot.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if !apierrors.IsUnauthorized(err) {
		t.Fatalf("token of a deleted service account: err = %v, want 401", err)
	}
	// A service account recreated under the same name has another uid: the
	// old token stays refused.
	createSA(t, admin, "sa-tokens", "robot")
	_, err = robot.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if !apierrors.IsUnauthorized(err) {
		t.Fatalf("token of a recreated service account: err = %v, want 401", err)
	}
}

func testTokenRequest(t *testing.T, ts *testserver.TestServer) {
	ctx := context.Background()
	admin := e2eutil.Clientset(t, ts.Config)
	createNamespaces(t, admin, "token-request")
	createSA(t, admin, "token-request", "app")

	tr := func(spec authenticationv1.TokenRequestSpec) (*authenticationv1.TokenRequest, error) {
		return admin.CoreV1().ServiceAccounts("token-request").CreateToken(ctx, "app", &authenticationv1.TokenRequest{Spec: spec}, metav1.CreateOptions{})
	}
	before := time.Now()
	got, err := tr(authenticationv1.TokenRequestSpec{})
	if err != nil {
		t.Fatal(err)
	}
	if exp := got.Spec.ExpirationSeconds; exp == nil || *exp != 3600 {
		t.Errorf("expirationSeconds = %v, want kube's default 3600", exp)
	}
	if !slices.Equal(got.Spec.Audiences, []string{"https://kubernetes.default.svc.cluster.local"}) {
		t.Errorf("audiences = %v, want the API audiences", got.Spec.Audiences)
	}
	if d := got.Status.ExpirationTimestamp.Sub(before); d < 59*time.Minute || d > 61*time.Minute {
		t.Errorf("expirationTimestamp is %v from now, want an hour", d)
	}
	if got.Name != "app" || got.Namespace != "token-request" || got.UID == "" {
		t.Errorf("metadata = %+v, want the service account's", got.ObjectMeta)
	}

	// kube's bounds on expirationSeconds.
	short := int64(599)
	_, err = tr(authenticationv1.TokenRequestSpec{ExpirationSeconds: &short})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes") {
		t.Errorf("599s: err = %v, want 422 with kube's message", err)
	}
	// A missing service account is 404.
	_, err = admin.CoreV1().ServiceAccounts("token-request").CreateToken(ctx, "nobody", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), `serviceaccounts "nobody" not found`) {
		t.Errorf("missing service account: err = %v, want 404", err)
	}

	// A token for another audience does not authenticate to the API, and
	// TokenReview tells so; asked for its audience, TokenReview accepts it.
	other, err := tr(authenticationv1.TokenRequestSpec{Audiences: []string{"vault"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e2eutil.Clientset(t, e2eutil.TokenConfig(ts, other.Status.Token)).CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if !apierrors.IsUnauthorized(err) {
		t.Errorf("token for audience vault used on the API: err = %v, want 401", err)
	}
	review := func(token string, auds ...string) authenticationv1.TokenReviewStatus {
		t.Helper()
		r, err := admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: auds}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Status
	}
	if st := review(other.Status.Token); st.Authenticated || !strings.Contains(st.Error, "token audiences") {
		t.Errorf("TokenReview for the API audience = %+v, want refused", st)
	}
	if st := review(other.Status.Token, "vault"); !st.Authenticated || st.User.Username != "system:serviceaccount:token-request:app" || !slices.Equal(st.Audiences, []string{"vault"}) {
		t.Errorf("TokenReview for vault = %+v, want authenticated for vault", st)
	}
	if st := review(got.Status.Token); !st.Authenticated || !slices.Equal(st.Audiences, []string{"https://kubernetes.default.svc.cluster.local"}) {
		t.Errorf("TokenReview of an API token = %+v", st)
	}
	if st := review("not-a-token"); st.Authenticated {
		t.Errorf("TokenReview of garbage = %+v", st)
	}

	// A token bound to a secret dies with the secret.
	sec, err := admin.CoreV1().Secrets("token-request").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "holder"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bound, err := tr(authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: "holder", UID: sec.UID}})
	if err != nil {
		t.Fatal(err)
	}
	if st := review(bound.Status.Token); !st.Authenticated {
		t.Fatalf("bound token before the secret is deleted: %+v", st)
	}
	if err := admin.CoreV1().Secrets("token-request").Delete(ctx, "holder", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Once its cached success expires (cacheTTL).
	var st authenticationv1.TokenReviewStatus
	e2eutil.Eventually(t, tokenCacheTTL+10*time.Second, "the bound token to be refused once the secret is gone", func() bool {
		st = review(bound.Status.Token)
		return !st.Authenticated
	})
	if st.Error != "service account token has been invalidated" {
		t.Errorf("bound token after the secret is deleted: %+v", st)
	}

	// The subresource is in discovery as kube shows it.
	list, err := admin.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range list.APIResources {
		if r.Name == "serviceaccounts/token" {
			found = true
			if r.Group != "authentication.k8s.io" || r.Version != "v1" || r.Kind != "TokenRequest" || !slices.Equal(r.Verbs, []string{"create"}) || !r.Namespaced {
				t.Errorf("discovery: %+v", r)
			}
		}
	}
	if !found {
		t.Error("serviceaccounts/token is not in /api/v1 discovery")
	}
}

// tokenCacheHits reads authentication_token_cache_request_total{status="hit"}
// from /metrics as the admin.
func tokenCacheHits(t *testing.T, ts *testserver.TestServer) float64 {
	t.Helper()
	code, body := e2eutil.Get(t, ts.HTTPClient(t), ts.URL()+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, `authentication_token_cache_request_total{status="hit"} `); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	return 0
}

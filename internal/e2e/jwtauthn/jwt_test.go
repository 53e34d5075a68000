package jwtauthn

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
	"github.com/kpipe/kpipe/plugins/authentication/jwt/jwttest"
)

const (
	audience = "kpipe-e2e"
	ns       = "jwt-e2e"
)

// startWithIssuers starts a server whose authenticators are x509, the
// service-account one, jwt and anonymous. jwt trusts iss (its CA given
// as a file) with claim mappings, ci (its CA inline) with CEL ones, and
// down, an issuer nothing answers at.
func startWithIssuers(t *testing.T, iss, ci *jwttest.Issuer, down string) *testserver.TestServer {
	t.Helper()
	caFile := filepath.Join(t.TempDir(), "oidc-ca.pem")
	if err := os.WriteFile(caFile, iss.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return testserver.Start(t, testserver.Options{Configure: func(c *config.Config) {
		for i, e := range c.Pipeline {
			if e.Name != "authentication" {
				continue
			}
			c.Pipeline[i].Config = map[string]any{"authenticators": []any{
				map[string]any{"name": "x509"},
				map[string]any{"name": "service-account"},
				map[string]any{"name": "jwt", "config": map[string]any{"issuers": []any{map[string]any{
					"url":                  iss.URL,
					"audiences":            []any{audience},
					"certificateAuthority": caFile,
					"claimMappings": map[string]any{
						"username": map[string]any{"claim": "sub", "prefix": "oidc:"},
						"groups":   map[string]any{"claim": "groups", "prefix": "oidc:"},
						"uid":      map[string]any{"claim": "uid"},
					},
				}, map[string]any{
					"url":                  ci.URL,
					"audiences":            []any{"other", audience},
					"audienceMatchPolicy":  "MatchAny",
					"certificateAuthority": string(ci.CAPEM),
					"claimMappings": map[string]any{
						"username": map[string]any{"expression": "'ci:' + claims.sub"},
						"groups":   map[string]any{"expression": "claims.pipelines.map(p, 'pipeline:' + p)"},
						"extra":    []any{map[string]any{"key": "example.com/repository", "valueExpression": "claims.repository"}},
					},
					"claimValidationRules": []any{map[string]any{"expression": "claims.ref == 'refs/heads/main'", "message": "only the main branch"}},
				}, map[string]any{
					"url":           down,
					"audiences":     []any{audience},
					"claimMappings": map[string]any{"username": map[string]any{"claim": "sub", "prefix": ""}},
				}}}},
				map[string]any{"name": "anonymous"},
			}}
		}
	}})
}

func claims(sub string, extra map[string]any) map[string]any {
	c := map[string]any{"sub": sub, "aud": audience, "uid": sub + "-uid", "exp": time.Now().Add(time.Hour).Unix(), "jti": sub + "-jti"}
	for k, v := range extra {
		c[k] = v
	}
	return c
}

func wantUnauthorized(t *testing.T, what string, code int, body []byte) {
	t.Helper()
	if code != http.StatusUnauthorized {
		t.Fatalf("%s: code = %d, want 401: %s", what, code, body)
	}
	var st metav1.Status
	if err := json.Unmarshal(body, &st); err != nil || st.Reason != metav1.StatusReasonUnauthorized || st.Message != "Unauthorized" {
		t.Errorf("%s: status %s (%v)", what, body, err)
	}
}

// TestJWTAuthenticator shares one server and one issuer between its parts:
// each server start costs the whole package time.
func TestJWTAuthenticator(t *testing.T) {
	iss := jwttest.NewIssuer(t, jwttest.NewRSAKey(t, "key-1"))
	ci := jwttest.NewIssuer(t, jwttest.NewECKey(t, "ci-1"))
	down := "https://127.0.0.1:" + testserver.FreePorts(t, 1)[0]
	ts := startWithIssuers(t, iss, ci, down)
	raw := e2eutil.RawClient(t, ts, nil)
	alice := iss.Sign(t, claims("alice", map[string]any{"groups": []string{"devs"}}))

	// The issuer is discovered in the background once the stage is built;
	// the server waits a moment for it, but is ready without it, as
	// kube's.
	e2eutil.Eventually(t, 15*time.Second, "the issuer's token to authenticate", func() bool {
		code, _ := e2eutil.Do(t, raw, ts, "/version", alice)
		return code == http.StatusOK
	})

	t.Run("kubectl auth whoami shows the mapped user", func(t *testing.T) {
		kc := e2eutil.TokenKubeconfig(t, ts, alice)
		out, err := e2eutil.KubectlAs(t, kc, "auth", "whoami", "-o", "json")
		if err != nil {
			t.Fatalf("kubectl auth whoami: %v\n%s", err, out)
		}
		var who authenticationv1.SelfSubjectReview
		if err := json.Unmarshal([]byte(out), &who); err != nil {
			t.Fatalf("whoami output: %v\n%s", err, out)
		}
		ui := who.Status.UserInfo
		if ui.Username != "oidc:alice" || ui.UID != "alice-uid" || !slices.Equal(ui.Groups, []string{"oidc:devs", "system:authenticated"}) {
			t.Errorf("user = %+v", ui)
		}
		if id := ui.Extra["authentication.kubernetes.io/credential-id"]; !slices.Equal(id, authenticationv1.ExtraValue{"JTI=alice-jti"}) {
			t.Errorf("credential-id = %v, want JTI=alice-jti", id)
		}
		out, err = e2eutil.KubectlAs(t, kc, "auth", "whoami")
		if err != nil {
			t.Fatal(err, out)
		}
		e2eutil.MustContain(t, "kubectl auth whoami", out, "oidc:alice", "[oidc:devs system:authenticated]")
	})

	t.Run("a second issuer with CEL mappings", func(t *testing.T) {
		build := ci.Sign(t, map[string]any{"sub": "build-7", "aud": audience, "exp": time.Now().Add(time.Hour).Unix(),
			"pipelines": []string{"release", "test"}, "repository": "kpipe/kpipe", "ref": "refs/heads/main"})
		e2eutil.Eventually(t, 15*time.Second, "the second issuer's token to authenticate", func() bool {
			code, _ := e2eutil.Do(t, raw, ts, "/version", build)
			return code == http.StatusOK
		})
		out, err := e2eutil.KubectlAs(t, e2eutil.TokenKubeconfig(t, ts, build), "auth", "whoami", "-o", "json")
		if err != nil {
			t.Fatalf("kubectl auth whoami: %v\n%s", err, out)
		}
		var who authenticationv1.SelfSubjectReview
		if err := json.Unmarshal([]byte(out), &who); err != nil {
			t.Fatalf("whoami output: %v\n%s", err, out)
		}
		ui := who.Status.UserInfo
		if ui.Username != "ci:build-7" || !slices.Equal(ui.Groups, []string{"pipeline:release", "pipeline:test", "system:authenticated"}) ||
			!slices.Equal(ui.Extra["example.com/repository"], authenticationv1.ExtraValue{"kpipe/kpipe"}) {
			t.Errorf("user = %+v", ui)
		}
		branch := ci.Sign(t, map[string]any{"sub": "build-8", "aud": audience, "exp": time.Now().Add(time.Hour).Unix(),
			"pipelines": []string{"test"}, "repository": "kpipe/kpipe", "ref": "refs/heads/feature"})
		code, body := e2eutil.Do(t, raw, ts, "/version", branch)
		wantUnauthorized(t, "a token failing the claim validation rule", code, body)
	})

	t.Run("RBAC on the mapped group", func(t *testing.T) {
		ctx := context.Background()
		admin := e2eutil.Clientset(t, ts.Config)
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "devs-view"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "oidc:devs"}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		kc := e2eutil.TokenKubeconfig(t, ts, alice)
		e2eutil.Eventually(t, 10*time.Second, "the binding to reach RBAC", func() bool {
			_, err := e2eutil.KubectlAs(t, kc, "get", "configmaps", "-n", ns)
			return err == nil
		})
		out, err := e2eutil.KubectlAs(t, kc, "get", "configmaps", "-n", "default")
		if err == nil {
			t.Fatalf("listing configmaps outside the bound namespace worked:\n%s", out)
		}
		e2eutil.MustContain(t, "kubectl get configmaps -n default", out,
			`configmaps is forbidden: User "oidc:alice" cannot list resource "configmaps" in API group "" in the namespace "default"`)

		// Another user of the issuer, not in the group, is not bound.
		bob := e2eutil.TokenKubeconfig(t, ts, iss.Sign(t, claims("bob", map[string]any{"groups": []string{"testers"}})))
		out, err = e2eutil.KubectlAs(t, bob, "get", "configmaps", "-n", ns)
		if err == nil {
			t.Fatalf("bob, not in oidc:devs, listed configmaps:\n%s", out)
		}
		e2eutil.MustContain(t, "bob's kubectl get configmaps", out, `User "oidc:bob" cannot list resource "configmaps"`)
	})

	t.Run("invalid tokens of the issuer are 401", func(t *testing.T) {
		stranger := jwttest.NewRSAKey(t, "key-1") // the issuer's kid, another key
		unknown := jwttest.NewRSAKey(t, "key-unknown")
		for _, tc := range []struct{ name, token string }{
			{"another audience", iss.Sign(t, claims("alice", map[string]any{"aud": "someone-else"}))},
			{"expired", iss.Sign(t, claims("alice", map[string]any{"exp": time.Now().Add(-time.Minute).Unix()}))},
			{"signed by an unknown key", jwttest.SignWith(t, unknown, claims("alice", map[string]any{"iss": iss.URL}))},
			{"signed by another key with the issuer's kid", jwttest.SignWith(t, stranger, claims("alice", map[string]any{"iss": iss.URL}))},
		} {
			code, body := e2eutil.Do(t, raw, ts, "/version", tc.token)
			wantUnauthorized(t, tc.name, code, body)
		}
		// kubectl says so too.
		out, err := e2eutil.KubectlAs(t, e2eutil.TokenKubeconfig(t, ts, iss.Sign(t, claims("alice", map[string]any{"aud": "someone-else"}))), "get", "namespaces")
		if err == nil {
			t.Fatalf("kubectl with a token of another audience:\n%s", out)
		}
		e2eutil.MustContain(t, "kubectl with a token of another audience", out, "Unauthorized")
	})

	t.Run("TokenReview reports the issuer's error alone", func(t *testing.T) {
		admin := e2eutil.Clientset(t, ts.Config)
		expired := iss.Sign(t, claims("alice", map[string]any{"exp": time.Now().Add(-time.Minute).Unix()}))
		tr, err := admin.AuthenticationV1().TokenReviews().Create(context.Background(), &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: expired}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if tr.Status.Authenticated || !strings.HasPrefix(tr.Status.Error, "oidc: verify token: oidc: token is expired (Token Expiry: ") || strings.Contains(tr.Status.Error, "\n") {
			t.Errorf("status = %+v; want the jwt authenticator's error only", tr.Status)
		}
		tr, err = admin.AuthenticationV1().TokenReviews().Create(context.Background(), &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: alice}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !tr.Status.Authenticated || tr.Status.User.Username != "oidc:alice" {
			t.Errorf("status = %+v", tr.Status)
		}
	})

	t.Run("service account tokens stay the service-account authenticator's", func(t *testing.T) {
		ctx := context.Background()
		admin := e2eutil.Clientset(t, ts.Config)
		if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		tr, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "robot", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out, err := e2eutil.KubectlAs(t, e2eutil.TokenKubeconfig(t, ts, tr.Status.Token), "auth", "whoami")
		if err != nil {
			t.Fatalf("kubectl auth whoami with a service account token: %v\n%s", err, out)
		}
		e2eutil.MustContain(t, "kubectl auth whoami", out, "system:serviceaccount:"+ns+":robot")
		// A service account token for another audience is refused by the
		// service-account authenticator alone: the jwt one does not
		// claim the server's own issuer.
		other, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "robot", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: []string{"elsewhere"}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rv, err := admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: other.Status.Token}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if rv.Status.Authenticated || rv.Status.Error == "" || strings.Contains(rv.Status.Error, "oidc") {
			t.Errorf("status = %+v; want the service-account authenticator's error only", rv.Status)
		}
	})

	t.Run("an issuer that is down fails its tokens alone", func(t *testing.T) {
		// The server is ready (testserver waited for /readyz) with an
		// issuer it never reached, as kube-apiserver.
		tok := jwttest.SignWith(t, jwttest.NewRSAKey(t, "x"), claims("mallory", map[string]any{"iss": down}))
		code, body := e2eutil.Do(t, raw, ts, "/version", tok)
		wantUnauthorized(t, "a token of an issuer that is down", code, body)
		admin := e2eutil.Clientset(t, ts.Config)
		tr, err := admin.AuthenticationV1().TokenReviews().Create(context.Background(), &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: tok}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if tr.Status.Authenticated || tr.Status.Error != "oidc: authenticator not initialized" {
			t.Errorf("status = %+v", tr.Status)
		}
	})

	t.Run("kube's latency metric per issuer", func(t *testing.T) {
		code, body := e2eutil.Get(t, ts.HTTPClient(t), ts.URL()+"/metrics")
		if code != http.StatusOK {
			t.Fatalf("/metrics: %d", code)
		}
		for _, u := range []string{iss.URL, ci.URL} {
			hash := fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(u)))
			for _, result := range []string{"success", "failure"} {
				e2eutil.MustContain(t, "/metrics", body, `apiserver_authentication_jwt_authenticator_latency_seconds_count{jwt_issuer_hash="`+hash+`",result="`+result+`"}`)
			}
		}
	})

	t.Run("key rotation at the issuer is picked up", func(t *testing.T) {
		iss.Rotate(jwttest.NewRSAKey(t, "key-2"))
		carol := iss.Sign(t, claims("carol", nil))
		// A token naming a new kid makes the key set be fetched again, at
		// most once per 5 s.
		e2eutil.Eventually(t, 15*time.Second, "a token of the new key to authenticate", func() bool {
			code, _ := e2eutil.Do(t, raw, ts, "/version", carol)
			return code == http.StatusOK
		})
		out, err := e2eutil.KubectlAs(t, e2eutil.TokenKubeconfig(t, ts, carol), "auth", "whoami")
		if err != nil {
			t.Fatal(err, out)
		}
		e2eutil.MustContain(t, "kubectl auth whoami", out, "oidc:carol")
	})
}

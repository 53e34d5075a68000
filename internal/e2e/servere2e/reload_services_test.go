package servere2e

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/testserver"
)

// failsAtProvision is a stage whose Provision always fails: a reload
// listing it is built, partly provisioned, and never served.
const failsAtProvision = "test-fails-at-provision"

type provisionFailure struct{}

func (provisionFailure) Middleware(next http.Handler) http.Handler { return next }
func (provisionFailure) Provision(*pipeline.Env) error {
	return errors.New("this stage never provisions")
}

// servicesServer is a server whose pipeline each Reload takes from next,
// with the settings it started with.
type servicesServer struct {
	ts    *testserver.TestServer
	admin kubernetes.Interface
	next  []config.Entry
}

func startServices(t *testing.T, p []config.Entry) *servicesServer {
	t.Helper()
	ss := &servicesServer{}
	ss.ts = testserver.Start(t, testserver.Options{
		Register: func(r *pipeline.Registry) {
			r.MustRegister(pipeline.Plugin{Name: failsAtProvision, Kind: pipeline.KindStage,
				New: func(any) (any, error) { return provisionFailure{}, nil }})
		},
		Configure: func(c *config.Config) { c.Pipeline = p },
		Reload: func() (*config.Loaded, error) {
			c := *ss.ts.Settings()
			c.Pipeline = ss.next
			return config.FromConfig(&c)
		},
	})
	ss.admin = e2eutil.Clientset(t, ss.ts.Config)
	return ss
}

func (ss *servicesServer) reload(t *testing.T, p []config.Entry) error {
	t.Helper()
	ss.next = p
	return ss.ts.Reload()
}

// accessPipeline is the default pipeline with x509 and the token file
// as authenticators, the given authorizers (no authorization stage when
// there are none), and extra stages before the terminal one.
func accessPipeline(tokens string, authorizers []string, extra ...string) []config.Entry {
	var p []config.Entry
	for _, n := range config.DefaultPipeline {
		e := config.Entry{Name: n}
		switch n {
		case "authentication":
			e.Config = map[string]any{"authenticators": []any{
				map[string]any{"name": "x509"},
				map[string]any{"name": "token-file", "config": map[string]any{"tokenAuthFile": tokens}},
			}}
		case "authorization":
			if len(authorizers) == 0 {
				continue
			}
			var list []any
			for _, a := range authorizers {
				list = append(list, map[string]any{"name": a})
			}
			e.Config = map[string]any{"authorizers": list}
		case "etcd-writer":
			for _, x := range extra {
				p = append(p, config.Entry{Name: x})
			}
		}
		p = append(p, e)
	}
	return p
}

// impersonate has alice ask who she is (a SelfSubjectReview, which any
// authenticated user may) as bob: an error when alice may not impersonate
// bob.
func impersonate(t *testing.T, ts *testserver.TestServer) error {
	t.Helper()
	cfg := e2eutil.TokenConfig(ts, "alice-token")
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "bob"}
	ssr, err := e2eutil.Clientset(t, cfg).AuthenticationV1().SelfSubjectReviews().Create(context.Background(),
		&authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err == nil && ssr.Status.UserInfo.Username != "bob" {
		t.Fatalf("impersonating bob, the review saw %q", ssr.Status.UserInfo.Username)
	}
	return err
}

// mayImpersonate asks a SubjectAccessReview whether alice may impersonate bob.
func mayImpersonate(t *testing.T, admin kubernetes.Interface) authzv1.SubjectAccessReviewStatus {
	t.Helper()
	sar, err := admin.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), &authzv1.SubjectAccessReview{
		Spec: authzv1.SubjectAccessReviewSpec{User: "alice", ResourceAttributes: &authzv1.ResourceAttributes{
			Verb: "impersonate", Resource: "users", Name: "bob"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SubjectAccessReview: %v", err)
	}
	return sar.Status
}

// reviewToken asks a TokenReview who token is: "" when not authenticated.
func reviewToken(t *testing.T, admin kubernetes.Interface, token string) string {
	t.Helper()
	tr, err := admin.AuthenticationV1().TokenReviews().Create(context.Background(), &authnv1.TokenReview{
		Spec: authnv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenReview: %v", err)
	}
	if !tr.Status.Authenticated {
		return ""
	}
	return tr.Status.User.Username
}

// wantImpersonationRefused wants kube's 403 for alice impersonating bob.
func wantImpersonationRefused(t *testing.T, err error) {
	t.Helper()
	const msg = `users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope`
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), msg) {
		t.Errorf("impersonation: %v, want 403 Forbidden %q", err, msg)
	}
}

// wantNoAuthorizer wants the access review's fail-closed answer.
func wantNoAuthorizer(t *testing.T, st authzv1.SubjectAccessReviewStatus) {
	t.Helper()
	if st.Allowed || st.Denied || st.EvaluationError != "no authorizer is configured" {
		t.Errorf("SubjectAccessReview status %+v, want not allowed with evaluationError %q", st, "no authorizer is configured")
	}
}

// A reload that removes the authorization stage leaves nothing answering
// from the retired authorizer: impersonation and the access reviews fail
// closed, whichever authorizer it held.
func TestReloadRemovingAuthorizationFailsClosed(t *testing.T) {
	for _, authorizer := range []string{"always-allow", "rbac"} {
		t.Run(authorizer, func(t *testing.T) {
			tokens := e2eutil.TokenFile(t, "alice")
			ss := startServices(t, accessPipeline(tokens, []string{authorizer}))
			if authorizer == "rbac" {
				ctx := context.Background()
				if _, err := ss.admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
					ObjectMeta: metav1.ObjectMeta{Name: "impersonate-bob"},
					Rules:      []rbacv1.PolicyRule{{Verbs: []string{"impersonate"}, APIGroups: []string{""}, Resources: []string{"users"}, ResourceNames: []string{"bob"}}},
				}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				if _, err := ss.admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
					ObjectMeta: metav1.ObjectMeta{Name: "alice-impersonates-bob"},
					RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "impersonate-bob"},
					Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}},
				}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			e2eutil.Eventually(t, 10*time.Second, "alice to impersonate bob", func() bool { return impersonate(t, ss.ts) == nil })
			if st := mayImpersonate(t, ss.admin); !st.Allowed {
				t.Fatalf("before the reload: SubjectAccessReview %+v, want allowed", st)
			}

			if err := ss.reload(t, accessPipeline(tokens, nil)); err != nil {
				t.Fatalf("reload without authorization: %v", err)
			}
			wantImpersonationRefused(t, impersonate(t, ss.ts))
			wantNoAuthorizer(t, mayImpersonate(t, ss.admin))
			// Authentication still serves: TokenReview answers from it.
			if u := reviewToken(t, ss.admin, "alice-token"); u != "alice" {
				t.Errorf("TokenReview of alice's token: %q", u)
			}
		})
	}
}

// A reload that fails at Provision, after new authentication and
// authorization stages were provisioned, leaves TokenReview and the
// authorizer on the serving generation's; the reload that then succeeds
// swaps both to its own.
func TestFailedReloadKeepsServingServices(t *testing.T) {
	aliceTokens, carolTokens := e2eutil.TokenFile(t, "alice"), e2eutil.TokenFile(t, "carol")
	ss := startServices(t, accessPipeline(aliceTokens, []string{"always-allow"}))
	e2eutil.Eventually(t, 10*time.Second, "alice to impersonate bob", func() bool { return impersonate(t, ss.ts) == nil })

	steps := []struct {
		name     string
		pipeline []config.Entry
		wantErr  string
		// who the tokens are, and what the authorizer answers
		alice, carol string
		allowed      bool
		denied       bool
	}{
		{
			name:     "a reload failing at Provision keeps the serving instances",
			pipeline: accessPipeline(carolTokens, []string{"always-deny"}, failsAtProvision),
			wantErr:  "this stage never provisions",
			alice:    "alice", carol: "", allowed: true,
		},
		{
			name:     "a reload that succeeds swaps to the new instances",
			pipeline: accessPipeline(carolTokens, []string{"always-deny"}),
			// always-deny has no opinion, as kube's AlwaysDeny.
			alice: "", carol: "carol",
		},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			err := ss.reload(t, st.pipeline)
			if st.wantErr == "" && err != nil || st.wantErr != "" && (err == nil || !strings.Contains(err.Error(), st.wantErr)) {
				t.Fatalf("reload: %v, want error %q", err, st.wantErr)
			}
			if u := reviewToken(t, ss.admin, "alice-token"); u != st.alice {
				t.Errorf("TokenReview of alice's token: %q, want %q", u, st.alice)
			}
			if u := reviewToken(t, ss.admin, "carol-token"); u != st.carol {
				t.Errorf("TokenReview of carol's token: %q, want %q", u, st.carol)
			}
			if s := mayImpersonate(t, ss.admin); s.Allowed != st.allowed || s.Denied != st.denied {
				t.Errorf("SubjectAccessReview %+v, want allowed %v denied %v", s, st.allowed, st.denied)
			}
		})
	}
}

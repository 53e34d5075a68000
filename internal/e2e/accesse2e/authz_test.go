package accesse2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/internal/testserver"
	"github.com/kpipe/kpipe/plugins/authorization/rbac"
)

// testUserStage stands in for authentication while it is a pass-through:
// X-Test-User (and X-Test-Group) name the user; otherwise a user already
// set is kept, the loopback token is system:masters, a client certificate
// is its CN and O, and anything else is anonymous.
type testUserStage struct{ token string }

func (s *testUserStage) Provision(env *pipeline.Env) error {
	s.token = env.Shared.LoopbackToken
	return nil
}

func (s *testUserStage) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		_, have := request.UserFrom(ctx)
		switch {
		case r.Header.Get("X-Test-User") != "":
			groups := append(r.Header.Values("X-Test-Group"), request.AllAuthenticated)
			request.SetUser(ctx, &request.User{Name: r.Header.Get("X-Test-User"), Groups: groups})
		case s.token != "" && r.Header.Get("Authorization") == "Bearer "+s.token:
			request.SetUser(ctx, &request.User{Name: request.APIServerUser, Groups: []string{request.SystemPrivileged, request.AllAuthenticated}})
		case have:
		case r.TLS != nil && len(r.TLS.PeerCertificates) > 0:
			c := r.TLS.PeerCertificates[0]
			request.SetUser(ctx, &request.User{Name: c.Subject.CommonName, Groups: append(c.Subject.Organization, request.AllAuthenticated)})
		default:
			request.SetUser(ctx, &request.User{Name: request.Anonymous, Groups: []string{request.AllUnauthenticated}})
		}
		next.ServeHTTP(w, r)
	})
}

// certStub trusts the client certificate the TLS handshake verified.
type certStub struct{}

func (certStub) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	c := r.TLS.PeerCertificates[0]
	return &request.User{Name: c.Subject.CommonName, Groups: append(c.Subject.Organization, request.AllAuthenticated)}, true, nil
}

type anonymousStub struct{}

func (anonymousStub) AuthenticateRequest(*http.Request) (*request.User, bool, error) {
	return &request.User{Name: request.Anonymous, Groups: []string{request.AllUnauthenticated}}, true, nil
}

// startAuthz starts a server with the test-user stage right after
// authentication.
func startAuthz(t *testing.T) *testserver.TestServer {
	t.Helper()
	return testserver.Start(t, testserver.Options{
		Register: func(r *pipeline.Registry) {
			// Authentication is being built in parallel: stand in for the
			// default authenticators it lists but has not registered yet.
			for name, a := range map[string]auth.Authenticator{"x509": certStub{}, "anonymous": anonymousStub{}} {
				if _, ok := r.Lookup(pipeline.KindAuthenticator, name); !ok {
					r.MustRegister(pipeline.Plugin{Name: name, Kind: pipeline.KindAuthenticator, Description: "test stub",
						New: func(any) (any, error) { return a, nil }})
				}
			}
			r.MustRegister(pipeline.Plugin{
				Name: "test-user", Kind: pipeline.KindStage, Description: "test users",
				New:      func(any) (any, error) { return &testUserStage{}, nil },
				Requires: []string{"authentication"},
			})
		},
		Configure: func(c *config.Config) {
			var p []config.Entry
			for _, e := range c.Pipeline {
				p = append(p, e)
				if e.Name == "authentication" {
					p = append(p, config.Entry{Name: "test-user"})
				}
			}
			c.Pipeline = p
		},
	})
}

// userConfig talks to ts as name, with no credential of its own.
func userConfig(ts *testserver.TestServer, name string, groups ...string) *rest.Config {
	cfg := &rest.Config{Host: ts.Config.Host, TLSClientConfig: rest.TLSClientConfig{CAData: ts.Config.CAData, CAFile: ts.Config.CAFile, ServerName: ts.Config.ServerName}}
	if name == "" {
		return cfg
	}
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			r = r.Clone(r.Context())
			r.Header.Set("X-Test-User", name)
			for _, g := range groups {
				r.Header.Add("X-Test-Group", g)
			}
			return rt.RoundTrip(r)
		})
	}
	return cfg
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func mustForbidden(t *testing.T, err error, msg string) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Fatalf("got %v, want Forbidden", err)
	}
	if err.Error() != msg {
		t.Fatalf("message:\n got %q\nwant %q", err.Error(), msg)
	}
}

func TestAuthzRBAC(t *testing.T) {
	ts := startAuthz(t)
	ctx := context.Background()
	admin := e2eutil.Clientset(t, ts.Config)
	for _, ns := range []string{"team-a", "team-b"} {
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("admin creates namespace %s: %v", ns, err)
		}
	}
	_, err := admin.RbacV1().RoleBindings("team-a").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "alice-view"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	alice := e2eutil.Clientset(t, userConfig(ts, "alice"))

	t.Run("view in team-a lists pods", func(t *testing.T) {
		e2eutil.Eventually(t, 2*time.Second, "alice may list pods in team-a", func() bool {
			_, err := alice.CoreV1().Pods("team-a").List(ctx, metav1.ListOptions{})
			return err == nil
		})
	})
	t.Run("team-b refused with kube's message", func(t *testing.T) {
		_, err := alice.CoreV1().Pods("team-b").List(ctx, metav1.ListOptions{})
		mustForbidden(t, err, `pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-b"`)
	})
	t.Run("writes refused", func(t *testing.T) {
		_, err := alice.CoreV1().ConfigMaps("team-a").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
		mustForbidden(t, err, `configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "team-a"`)
		err = alice.CoreV1().ConfigMaps("team-a").Delete(ctx, "x", metav1.DeleteOptions{})
		mustForbidden(t, err, `configmaps "x" is forbidden: User "alice" cannot delete resource "configmaps" in API group "" in the namespace "team-a"`)
	})
	t.Run("cluster scope refused", func(t *testing.T) {
		_, err := alice.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		mustForbidden(t, err, `namespaces is forbidden: User "alice" cannot list resource "namespaces" in API group "" at the cluster scope`)
	})
	t.Run("anonymous reads readyz but not pods", func(t *testing.T) {
		c, err := rest.HTTPClientFor(userConfig(ts, ""))
		if err != nil {
			t.Fatal(err)
		}
		if code, body := e2eutil.Get(t, c, ts.URL()+"/readyz"); code != http.StatusOK {
			t.Fatalf("/readyz: %d %s", code, body)
		}
		code, body := e2eutil.Get(t, c, ts.URL()+"/api/v1/pods")
		if code != http.StatusForbidden {
			t.Fatalf("/api/v1/pods: %d %s", code, body)
		}
		e2eutil.MustContain(t, "body", body, `"reason":"Forbidden"`, `pods is forbidden: User \"system:anonymous\" cannot list resource \"pods\" in API group \"\" at the cluster scope`)
		code, body = e2eutil.Get(t, c, ts.URL()+"/metrics")
		if code != http.StatusForbidden {
			t.Fatalf("/metrics: %d %s", code, body)
		}
		e2eutil.MustContain(t, "body", body, `forbidden: User \"system:anonymous\" cannot get path \"/metrics\"`)
	})
	t.Run("admin can do everything", func(t *testing.T) {
		if _, err := admin.CoreV1().ConfigMaps("team-b").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := admin.CoreV1().ConfigMaps("team-b").Delete(ctx, "x", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("new binding takes effect within a second", func(t *testing.T) {
		bob := e2eutil.Clientset(t, userConfig(ts, "bob", "devs"))
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bobs"}}
		if _, err := bob.CoreV1().ConfigMaps("team-a").Create(ctx, cm, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
			t.Fatalf("before the binding: %v", err)
		}
		_, err := admin.RbacV1().RoleBindings("team-a").Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "devs-edit"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "devs"}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e2eutil.Eventually(t, time.Second, "bob may create configmaps", func() bool {
			_, err := bob.CoreV1().ConfigMaps("team-a").Create(ctx, cm, metav1.CreateOptions{})
			return err == nil
		})
		if err := admin.RbacV1().RoleBindings("team-a").Delete(ctx, "devs-edit", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e2eutil.Eventually(t, time.Second, "bob refused again", func() bool {
			err := bob.CoreV1().ConfigMaps("team-a").Delete(ctx, "bobs", metav1.DeleteOptions{})
			return apierrors.IsForbidden(err)
		})
	})
	t.Run("service account by its groups and name", func(t *testing.T) {
		_, err := admin.RbacV1().RoleBindings("team-b").Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "sa-view"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "robot"}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sa := e2eutil.Clientset(t, userConfig(ts, "system:serviceaccount:team-b:robot", "system:serviceaccounts", "system:serviceaccounts:team-b"))
		e2eutil.Eventually(t, time.Second, "the service account may list configmaps", func() bool {
			_, err := sa.CoreV1().ConfigMaps("team-b").List(ctx, metav1.ListOptions{})
			return err == nil
		})
	})
	t.Run("readiness waits for the cache", func(t *testing.T) {
		code, body := e2eutil.Get(t, e2eutil.MustLoopbackClient(t, ts), ts.URL()+"/readyz?verbose")
		if code != http.StatusOK {
			t.Fatalf("/readyz: %d", code)
		}
		e2eutil.MustContain(t, "/readyz", body, "poststarthook/rbac/cache-sync ok", "poststarthook/rbac/bootstrap-roles ok")
	})
}

func TestAuthzBootstrapRoles(t *testing.T) {
	ts := startAuthz(t)
	ctx := context.Background()
	admin := e2eutil.Clientset(t, ts.Config)
	roles := admin.RbacV1().ClusterRoles()

	t.Run("defaults carry kube's marks", func(t *testing.T) {
		for _, name := range []string{"cluster-admin", "system:discovery", "system:basic-user", "system:public-info-viewer", "admin", "edit", "view"} {
			r, err := roles.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if r.Labels[rbac.BootstrappingLabel] != "rbac-defaults" || r.Annotations[rbac.AutoUpdateAnnotation] != "true" {
				t.Errorf("%s: labels %v annotations %v", name, r.Labels, r.Annotations)
			}
		}
		b, err := admin.RbacV1().ClusterRoleBindings().Get(ctx, "system:public-info-viewer", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Subjects) != 2 || b.Subjects[0].Name != "system:authenticated" || b.Subjects[1].Name != "system:unauthenticated" {
			t.Errorf("subjects %v", b.Subjects)
		}
	})
	t.Run("missing recreated, autoupdate false left alone", func(t *testing.T) {
		if err := roles.Delete(ctx, "system:discovery", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		r, err := roles.Get(ctx, "system:basic-user", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r.Annotations[rbac.AutoUpdateAnnotation] = "false"
		r.Rules = nil
		if _, err := roles.Update(ctx, r, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := rbac.Reconcile(ctx, admin); err != nil {
			t.Fatal(err)
		}
		if _, err := roles.Get(ctx, "system:discovery", metav1.GetOptions{}); err != nil {
			t.Fatalf("system:discovery not recreated: %v", err)
		}
		r, err = roles.Get(ctx, "system:basic-user", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Rules) != 0 {
			t.Errorf("autoupdate=false role was changed: %v", r.Rules)
		}
	})
	t.Run("edited default gets its rules back", func(t *testing.T) {
		r, err := roles.Get(ctx, "system:public-info-viewer", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r.Rules = []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/extra"}}}
		if _, err := roles.Update(ctx, r, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := rbac.Reconcile(ctx, admin); err != nil {
			t.Fatal(err)
		}
		r, err = roles.Get(ctx, "system:public-info-viewer", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := []string{}
		for _, rule := range r.Rules {
			got = append(got, strings.Join(rule.NonResourceURLs, ","))
		}
		if len(got) != 2 || got[0] != "/extra" {
			t.Errorf("rules after reconcile: %v", got)
		}
	})
}

package accesse2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

// startWithTokens starts a server whose authentication lists x509, the
// given token file and anonymous: the real authenticators, so kubectl
// can be each user.
func startWithTokens(t *testing.T, tokens string, configure func(*config.Config)) *testserver.TestServer {
	t.Helper()
	return testserver.Start(t, testserver.Options{Configure: func(c *config.Config) {
		for i, e := range c.Pipeline {
			if e.Name == "authentication" {
				c.Pipeline[i].Config = map[string]any{"authenticators": []any{
					map[string]any{"name": "x509"},
					map[string]any{"name": "token-file", "config": map[string]any{"tokenAuthFile": tokens}},
					map[string]any{"name": "anonymous"},
				}}
			}
		}
		if configure != nil {
			configure(c)
		}
	}})
}

func mustCreate[T any](t *testing.T, what string, f func(context.Context, T, metav1.CreateOptions) (T, error), obj T) {
	t.Helper()
	if _, err := f(context.Background(), obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create %s: %v", what, err)
	}
}

func TestImpersonation(t *testing.T) {
	ts := startWithTokens(t, e2eutil.TokenFile(t, "bob", "carol"), nil)
	admin := e2eutil.Clientset(t, ts.Config)
	ctx := context.Background()
	for _, ns := range []string{"team-a", "team-b"} {
		mustCreate(t, ns, admin.CoreV1().Namespaces().Create, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	// alice may view team-a; the group devs may view team-b.
	mustCreate(t, "alice-view", admin.RbacV1().RoleBindings("team-a").Create, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "alice-view"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}},
	})
	mustCreate(t, "devs-view", admin.RbacV1().RoleBindings("team-b").Create, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "devs-view"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "devs"}},
	})
	// carol may impersonate alice, and nothing else.
	mustCreate(t, "impersonate-alice", admin.RbacV1().ClusterRoles().Create, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "impersonate-alice"},
		Rules:      []rbacv1.PolicyRule{{Verbs: []string{"impersonate"}, APIGroups: []string{""}, Resources: []string{"users"}, ResourceNames: []string{"alice"}}},
	})
	mustCreate(t, "carol-impersonates-alice", admin.RbacV1().ClusterRoleBindings().Create, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "carol-impersonates-alice"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "impersonate-alice"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "carol"}},
	})

	t.Run("kubectl --as works for the admin, as the impersonated user", func(t *testing.T) {
		e2eutil.Eventually(t, 5*time.Second, "alice's binding in the RBAC cache", func() bool {
			_, err := e2eutil.Kubectl(t, ts, "--as", "alice", "get", "pods", "-n", "team-a")
			return err == nil
		})
		out, err := e2eutil.Kubectl(t, ts, "--as", "alice", "get", "pods", "-n", "team-b")
		if err == nil {
			t.Fatalf("alice listed pods in team-b:\n%s", out)
		}
		e2eutil.MustContain(t, "kubectl output", out,
			`pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-b"`)
	})
	t.Run("kubectl --as-group adds the group", func(t *testing.T) {
		e2eutil.Eventually(t, 5*time.Second, "devs' binding in the RBAC cache", func() bool {
			_, err := e2eutil.Kubectl(t, ts, "--as", "alice", "--as-group", "devs", "get", "configmaps", "-n", "team-b")
			return err == nil
		})
		// The groups given are the authority: alice's own binding is by
		// user, so team-a still works.
		if out, err := e2eutil.Kubectl(t, ts, "--as", "alice", "--as-group", "devs", "get", "pods", "-n", "team-a"); err != nil {
			t.Fatalf("as alice in devs, team-a: %v\n%s", err, out)
		}
	})
	t.Run("kubectl --as is refused for a user without impersonate rights", func(t *testing.T) {
		out, err := e2eutil.KubectlAs(t, e2eutil.TokenKubeconfig(t, ts, "bob-token"), "--as", "alice", "get", "pods", "-n", "team-a")
		if err == nil {
			t.Fatalf("bob impersonated alice:\n%s", out)
		}
		e2eutil.MustContain(t, "kubectl output", out,
			`users "alice" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope`)
	})
	t.Run("impersonate rights are per name and per kind", func(t *testing.T) {
		carol := e2eutil.TokenKubeconfig(t, ts, "carol-token")
		e2eutil.Eventually(t, 5*time.Second, "carol's binding in the RBAC cache", func() bool {
			_, err := e2eutil.KubectlAs(t, carol, "--as", "alice", "get", "pods", "-n", "team-a")
			return err == nil
		})
		out, err := e2eutil.KubectlAs(t, carol, "--as", "dave", "get", "pods", "-n", "team-a")
		if err == nil {
			t.Fatalf("carol impersonated dave:\n%s", out)
		}
		e2eutil.MustContain(t, "kubectl output", out, `users "dave" is forbidden: User "carol" cannot impersonate resource "users" in API group ""`)
		out, err = e2eutil.KubectlAs(t, carol, "--as", "alice", "--as-group", "system:masters", "get", "pods", "-n", "team-a")
		if err == nil {
			t.Fatalf("carol impersonated system:masters:\n%s", out)
		}
		e2eutil.MustContain(t, "kubectl output", out, `groups "system:masters" is forbidden: User "carol" cannot impersonate resource "groups" in API group ""`)
	})
	t.Run("client-go Impersonate", func(t *testing.T) {
		cfg := rest.CopyConfig(ts.Config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:team-a:robot"}
		_, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Pods("team-a").List(ctx, metav1.ListOptions{})
		mustForbidden(t, err, `pods is forbidden: User "system:serviceaccount:team-a:robot" cannot list resource "pods" in API group "" in the namespace "team-a"`)

		cfg = e2eutil.TokenConfig(ts, "bob-token")
		cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:team-a:robot"}
		_, err = kubernetes.NewForConfigOrDie(cfg).CoreV1().Pods("team-a").List(ctx, metav1.ListOptions{})
		mustForbidden(t, err, `serviceaccounts "robot" is forbidden: User "bob" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "team-a"`)

		cfg = e2eutil.TokenConfig(ts, "bob-token")
		cfg.Impersonate = rest.ImpersonationConfig{Groups: []string{"devs"}}
		_, err = kubernetes.NewForConfigOrDie(cfg).CoreV1().Pods("team-a").List(ctx, metav1.ListOptions{})
		if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "without impersonating a user") {
			t.Fatalf("groups without a user: %v, want 400", err)
		}
	})
}

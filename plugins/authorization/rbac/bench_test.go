package rbac

import (
	"context"
	"fmt"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/request"
)

// benchAuthorizer is an authorizer whose cache holds kube's default policy
// plus n Roles with n RoleBindings (spread over 50 namespaces) and n
// ClusterRoles with n ClusterRoleBindings, each bound to its own user: a
// cluster of 1,000 tenants when n is 1,000.
func benchAuthorizer(b *testing.B, n int) *Authorizer {
	b.Helper()
	c := newCache()
	for _, r := range DefaultClusterRoles() {
		c.put(&r)
	}
	for _, rb := range DefaultClusterRoleBindings() {
		c.put(&rb)
	}
	rules := []rbacv1.PolicyRule{
		resRule(read, core, "configmaps", "secrets"),
		resRule(readWrite, []string{"apps"}, "deployments", "deployments/scale"),
		{Verbs: get, APIGroups: core, Resources: []string{"pods"}, ResourceNames: []string{"a", "b"}},
	}
	for i := range n {
		ns := fmt.Sprintf("ns-%d", i%50)
		name := fmt.Sprintf("r-%d", i)
		c.put(&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules})
		c.put(&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: fmt.Sprintf("user-%d", i)}},
		})
		c.put(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "c-" + name}, Rules: rules})
		c.put(&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "c-" + name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "c-" + name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: fmt.Sprintf("cluster-user-%d", i)}},
		})
	}
	c.aggregate()
	c.pending = 0
	close(c.syncedCh)
	return &Authorizer{cache: c}
}

// BenchmarkAuthorize is the per-request cost of the rbac authorizer over
// a cache of 1,000 Roles, RoleBindings, ClusterRoles and
// ClusterRoleBindings each. Every request walks all ClusterRoleBindings
// (as kube's RBAC does) before the namespace's RoleBindings.
func BenchmarkAuthorize(b *testing.B) {
	z := benchAuthorizer(b, 1000)
	user := func(name string) *request.User {
		return &request.User{Name: name, Groups: []string{"team", request.AllAuthenticated}}
	}
	cases := []struct {
		name string
		a    *auth.Attributes
		want auth.Decision
	}{
		{"namespaced allow", &auth.Attributes{User: user("user-999"), Verb: "list", Namespace: "ns-49", Resource: "configmaps", ResourceRequest: true}, auth.Allow},
		{"cluster allow", &auth.Attributes{User: user("cluster-user-999"), Verb: "patch", Namespace: "x", APIGroup: "apps", Resource: "deployments", Subresource: "scale", Name: "web", ResourceRequest: true}, auth.Allow},
		{"namespaced deny", &auth.Attributes{User: user("user-1"), Verb: "delete", Namespace: "ns-1", Resource: "pods", Name: "c", ResourceRequest: true}, auth.NoOpinion},
		{"non-resource allow", &auth.Attributes{User: user("user-1"), Verb: "get", Path: "/readyz"}, auth.Allow},
		{"non-resource deny", &auth.Attributes{User: user("user-1"), Verb: "get", Path: "/metrics"}, auth.NoOpinion},
	}
	ctx := context.Background()
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			if d, _, _ := z.Authorize(ctx, tc.a); d != tc.want {
				b.Fatalf("decision = %v, want %v", d, tc.want)
			}
			b.ReportAllocs()
			for b.Loop() {
				z.Authorize(ctx, tc.a)
			}
		})
	}
}

package rbac

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/request"
)

func res(verb, group, resource, sub, name string) *auth.Attributes {
	return &auth.Attributes{Verb: verb, APIGroup: group, Resource: resource, Subresource: sub, Name: name, ResourceRequest: true}
}

func url(verb, path string) *auth.Attributes { return &auth.Attributes{Verb: verb, Path: path} }

func TestRuleAllows(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule rbacv1.PolicyRule
		a    *auth.Attributes
		want bool
	}{
		{"verb listed", resRule([]string{"get", "list"}, core, "pods"), res("list", "", "pods", "", ""), true},
		{"verb not listed", resRule([]string{"get"}, core, "pods"), res("delete", "", "pods", "", ""), false},
		{"verb wildcard", resRule([]string{"*"}, core, "pods"), res("deletecollection", "", "pods", "", ""), true},
		{"group mismatch", resRule(get, []string{"apps"}, "deployments"), res("get", "extensions", "deployments", "", ""), false},
		{"group wildcard", resRule(get, []string{"*"}, "deployments"), res("get", "apps", "deployments", "", ""), true},
		{"core group is empty string", resRule(get, core, "pods"), res("get", "apps", "pods", "", ""), false},
		{"resource wildcard", resRule(get, core, "*"), res("get", "", "secrets", "", ""), true},
		{"resource wildcard covers subresources", resRule(get, core, "*"), res("get", "", "pods", "log", ""), true},
		{"resource does not cover subresource", resRule(get, core, "pods"), res("get", "", "pods", "status", ""), false},
		{"subresource listed", resRule(get, core, "pods/status"), res("get", "", "pods", "status", ""), true},
		{"subresource does not cover resource", resRule(get, core, "pods/status"), res("get", "", "pods", "", ""), false},
		{"star slash subresource", resRule(get, []string{"*"}, "*/scale"), res("get", "apps", "deployments", "scale", ""), true},
		{"star slash other subresource", resRule(get, []string{"*"}, "*/scale"), res("get", "apps", "deployments", "status", ""), false},
		{"star slash without subresource", resRule(get, []string{"*"}, "*/scale"), res("get", "apps", "deployments", "", ""), false},
		{"resourceNames match", withNames(resRule(get, core, "configmaps"), "a", "b"), res("get", "", "configmaps", "", "b"), true},
		{"resourceNames other name", withNames(resRule(get, core, "configmaps"), "a"), res("get", "", "configmaps", "", "c"), false},
		{"resourceNames never match a list", withNames(resRule(read, core, "configmaps"), "a"), res("list", "", "configmaps", "", ""), false},
		{"url exact", urlRule(get, "/healthz"), url("get", "/healthz"), true},
		{"url other", urlRule(get, "/healthz"), url("get", "/healthz/etcd"), false},
		{"url star suffix", urlRule(get, "/healthz/*"), url("get", "/healthz/etcd"), true},
		{"url star suffix prefix only", urlRule(get, "/api*"), url("get", "/apis/apps"), true},
		{"url wildcard", urlRule([]string{"*"}, "*"), url("post", "/anything"), true},
		{"url verb", urlRule(get, "/version"), url("post", "/version"), false},
		{"url rule ignores resources", urlRule(get, "*"), res("get", "", "pods", "", ""), false},
		{"resource rule ignores urls", resRule(get, []string{"*"}, "*"), url("get", "/healthz"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ruleAllows(tc.a, &tc.rule); got != tc.want {
				t.Fatalf("ruleAllows = %v, want %v", got, tc.want)
			}
		})
	}
}

func withNames(r rbacv1.PolicyRule, names ...string) rbacv1.PolicyRule {
	r.ResourceNames = names
	return r
}

func TestAppliesTo(t *testing.T) {
	sa := &request.User{Name: "system:serviceaccount:ns1:robot", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:ns1", request.AllAuthenticated}}
	alice := &request.User{Name: "alice", Groups: []string{"devs"}}
	for _, tc := range []struct {
		name    string
		u       *request.User
		subject rbacv1.Subject
		ns      string
		want    bool
	}{
		{"user", alice, rbacv1.Subject{Kind: "User", Name: "alice"}, "", true},
		{"other user", alice, rbacv1.Subject{Kind: "User", Name: "bob"}, "", false},
		{"group", alice, rbacv1.Subject{Kind: "Group", Name: "devs"}, "", true},
		{"user is not a group", alice, rbacv1.Subject{Kind: "Group", Name: "alice"}, "", false},
		{"service account with namespace", sa, rbacv1.Subject{Kind: "ServiceAccount", Name: "robot", Namespace: "ns1"}, "", true},
		{"service account other namespace", sa, rbacv1.Subject{Kind: "ServiceAccount", Name: "robot", Namespace: "ns2"}, "", false},
		{"service account takes binding namespace", sa, rbacv1.Subject{Kind: "ServiceAccount", Name: "robot"}, "ns1", true},
		{"service account without any namespace", sa, rbacv1.Subject{Kind: "ServiceAccount", Name: "robot"}, "", false},
		{"all service accounts group", sa, rbacv1.Subject{Kind: "Group", Name: "system:serviceaccounts"}, "", true},
		{"namespace service accounts group", sa, rbacv1.Subject{Kind: "Group", Name: "system:serviceaccounts:ns1"}, "", true},
		{"unknown kind", alice, rbacv1.Subject{Kind: "Robot", Name: "alice"}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := appliesTo(tc.u, []rbacv1.Subject{tc.subject}, tc.ns); got != tc.want {
				t.Fatalf("appliesTo = %v, want %v", got, tc.want)
			}
		})
	}
}

func fill(c *cache, objs ...runtime.Object) {
	for _, o := range objs {
		c.upsert(o)
	}
	for range resources {
		c.markSynced()
	}
}

func TestAuthorize(t *testing.T) {
	c := newCache()
	var objs []runtime.Object
	for i := range DefaultClusterRoles() {
		objs = append(objs, &DefaultClusterRoles()[i])
	}
	for i := range DefaultClusterRoleBindings() {
		objs = append(objs, &DefaultClusterRoleBindings()[i])
	}
	objs = append(objs,
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "crd-viewer", Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
			Rules: []rbacv1.PolicyRule{resRule(read, []string{"example.com"}, "widgets")}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "alice-view"},
			RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"}, Subjects: []rbacv1.Subject{{Kind: "User", Name: "alice"}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "bob-admin"},
			RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "admin"}, Subjects: []rbacv1.Subject{{Kind: "User", Name: "bob"}}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "cm-one"},
			Rules: []rbacv1.PolicyRule{withNames(resRule([]string{"update"}, core, "configmaps"), "one")}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "carol-cm"},
			RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "cm-one"}, Subjects: []rbacv1.Subject{{Kind: "User", Name: "carol"}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "dave-missing"},
			RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "gone"}, Subjects: []rbacv1.Subject{{Kind: "User", Name: "dave"}}},
	)
	fill(c, objs...)
	z := &Authorizer{cache: c}

	alice := &request.User{Name: "alice", Groups: []string{request.AllAuthenticated}}
	bob := &request.User{Name: "bob", Groups: []string{request.AllAuthenticated}}
	carol := &request.User{Name: "carol", Groups: []string{request.AllAuthenticated}}
	dave := &request.User{Name: "dave", Groups: []string{request.AllAuthenticated}}
	anon := &request.User{Name: request.Anonymous, Groups: []string{request.AllUnauthenticated}}
	in := func(u *request.User, ns string, a *auth.Attributes) *auth.Attributes {
		a.User, a.Namespace = u, ns
		return a
	}
	for _, tc := range []struct {
		name       string
		a          *auth.Attributes
		want       auth.Decision
		wantReason string
	}{
		{"view binding in its namespace", in(alice, "team-a", res("list", "", "pods", "", "")), auth.Allow, ""},
		{"view binding scoped to its namespace", in(alice, "team-b", res("list", "", "pods", "", "")), auth.NoOpinion, ""},
		{"view is read only", in(alice, "team-a", res("create", "", "configmaps", "", "")), auth.NoOpinion, ""},
		{"view has no secrets", in(alice, "team-a", res("get", "", "secrets", "", "")), auth.NoOpinion, ""},
		{"view aggregates a custom role", in(alice, "team-a", res("list", "example.com", "widgets", "", "")), auth.Allow, ""},
		{"view reads pods/log", in(alice, "team-a", res("get", "", "pods", "log", "p")), auth.Allow, ""},
		{"admin aggregates edit and view", in(bob, "team-a", res("delete", "apps", "deployments", "", "web")), auth.Allow, ""},
		{"admin aggregates view transitively", in(bob, "team-a", res("watch", "example.com", "widgets", "", "")), auth.Allow, ""},
		{"admin grants rolebindings", in(bob, "team-a", res("create", rbacv1.GroupName, "rolebindings", "", "")), auth.Allow, ""},
		{"role with resourceNames", in(carol, "team-a", res("update", "", "configmaps", "", "one")), auth.Allow, ""},
		{"role other name", in(carol, "team-a", res("update", "", "configmaps", "", "two")), auth.NoOpinion, ""},
		{"missing role is the reason", in(dave, "team-a", res("get", "", "pods", "", "")), auth.NoOpinion, `RBAC: role.rbac.authorization.k8s.io "gone" not found`},
		{"anonymous reads readyz", in(anon, "", url("get", "/readyz")), auth.Allow, ""},
		{"anonymous no discovery", in(anon, "", url("get", "/apis")), auth.NoOpinion, ""},
		{"authenticated discovery", in(alice, "", url("get", "/apis/apps/v1")), auth.Allow, ""},
		{"anonymous no pods", in(anon, "", res("list", "", "pods", "", "")), auth.NoOpinion, ""},
		{"basic user self review", in(alice, "", res("create", "authorization.k8s.io", "selfsubjectaccessreviews", "", "")), auth.Allow, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, reason, err := z.Authorize(t.Context(), tc.a)
			if err != nil {
				t.Fatal(err)
			}
			if d != tc.want {
				t.Fatalf("decision %v, want %v (reason %q)", d, tc.want, reason)
			}
			if d != auth.Allow && reason != tc.wantReason {
				t.Fatalf("reason %q, want %q", reason, tc.wantReason)
			}
			if d == auth.Allow && !strings.HasPrefix(reason, "RBAC: allowed by ") {
				t.Fatalf("allow reason %q", reason)
			}
		})
	}
}

func TestAggregationFollowsChanges(t *testing.T) {
	c := newCache()
	agg := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "agg"}, AggregationRule: &rbacv1.AggregationRule{
		ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"to": "agg"}}}}}
	part := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "part", Labels: map[string]string{"to": "agg"}},
		Rules: []rbacv1.PolicyRule{resRule(get, core, "pods")}}
	loop := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "loop", Labels: map[string]string{"to": "agg"}}, AggregationRule: &rbacv1.AggregationRule{
		ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"to": "agg"}}}}}
	for _, tc := range []struct {
		name string
		step func()
		want int
	}{
		{"no parts yet", func() { c.upsert(agg) }, 0},
		{"a labelled role joins", func() { c.upsert(part) }, 1},
		{"a cycle terminates", func() { c.upsert(loop) }, 1},
		{"a duplicate rule is kept once", func() {
			dup := part.DeepCopy()
			dup.Name = "part2"
			c.upsert(dup)
		}, 1},
		{"the label removed", func() {
			p := part.DeepCopy()
			p.Labels = nil
			c.upsert(p)
			c.remove(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "part2"}})
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.step()
			c.mu.RLock()
			defer c.mu.RUnlock()
			if got := len(c.effective["agg"]); got != tc.want {
				t.Fatalf("agg has %d rules, want %d: %v", got, tc.want, c.effective["agg"])
			}
		})
	}
}

func TestNotSynced(t *testing.T) {
	z := &Authorizer{cache: newCache()}
	d, reason, _ := z.Authorize(t.Context(), &auth.Attributes{User: &request.User{Name: "a"}, Verb: "get", Path: "/"})
	if d != auth.NoOpinion || reason != "RBAC: the RBAC cache has not synced yet" {
		t.Fatalf("%v %q", d, reason)
	}
}

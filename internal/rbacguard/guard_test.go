package rbacguard

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

func TestCompactString(t *testing.T) {
	tests := []struct {
		name string
		rule rbacv1.PolicyRule
		want string
	}{
		{name: "resource", rule: rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list"}},
			want: `{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}`},
		{name: "names", rule: rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, ResourceNames: []string{"web"}, Verbs: []string{"delete"}},
			want: `{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["web"], Verbs:["delete"]}`},
		{name: "url", rule: rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}},
			want: `{NonResourceURLs:["/metrics"], Verbs:["get"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := compactString(tt.rule); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestCompact(t *testing.T) {
	// Covers breaks rules down to one verb and one resource each; compact
	// merges them back by resource, as kube's CompactRules.
	in := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"delete"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"a"}, Verbs: []string{"update"}},
		{NonResourceURLs: []string{"/x"}, Verbs: []string{"get"}},
	}
	var got []string
	for _, r := range compact(in) {
		got = append(got, compactString(r))
	}
	want := []string{
		`{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}`,
		`{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}`,
		`{APIGroups:[""], Resources:["secrets"], ResourceNames:["a"], Verbs:["update"]}`,
		`{NonResourceURLs:["/x"], Verbs:["get"]}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestOnlyGCFields(t *testing.T) {
	old := &rbacv1.Role{Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}}}}
	gc := old.DeepCopy()
	gc.Finalizers = []string{"x"}
	if !onlyGCFields(gc, old) {
		t.Error("a finalizer change is a GC-only change")
	}
	wider := old.DeepCopy()
	wider.Rules[0].Verbs = append(wider.Rules[0].Verbs, "list")
	if onlyGCFields(wider, old) {
		t.Error("a rule change is not a GC-only change")
	}
}

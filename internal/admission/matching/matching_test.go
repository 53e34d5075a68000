package matching

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestRule(t *testing.T) {
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	deploys := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	nodes := schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	ns := admissionregistrationv1.NamespacedScope
	cluster := admissionregistrationv1.ClusterScope
	rule := func(ops []admissionregistrationv1.OperationType, groups, versions, resources []string, scope *admissionregistrationv1.ScopeType) admissionregistrationv1.RuleWithOperations {
		return admissionregistrationv1.RuleWithOperations{Operations: ops, Rule: admissionregistrationv1.Rule{APIGroups: groups, APIVersions: versions, Resources: resources, Scope: scope}}
	}
	all := []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll}
	create := []admissionregistrationv1.OperationType{admissionregistrationv1.Create}
	star := []string{"*"}
	core := []string{""}
	tests := []struct {
		name string
		rule admissionregistrationv1.RuleWithOperations
		req  Request
		want bool
	}{
		{"everything", rule(all, star, star, []string{"*/*"}, nil), Request{Operation: "UPDATE", Resource: pods, Subresource: "status", Namespace: "a"}, true},
		{"* is no subresource", rule(all, star, star, star, nil), Request{Operation: "UPDATE", Resource: pods, Subresource: "status", Namespace: "a"}, false},
		{"pods/*", rule(all, core, star, []string{"pods/*"}, nil), Request{Operation: "UPDATE", Resource: pods, Subresource: "status", Namespace: "a"}, true},
		{"*/status", rule(all, star, star, []string{"*/status"}, nil), Request{Operation: "UPDATE", Resource: deploys, Subresource: "status", Namespace: "a"}, true},
		{"operation", rule(create, star, star, star, nil), Request{Operation: "DELETE", Resource: pods, Namespace: "a"}, false},
		{"group", rule(all, core, star, star, nil), Request{Operation: "CREATE", Resource: deploys, Namespace: "a"}, false},
		{"version", rule(all, star, []string{"v2"}, star, nil), Request{Operation: "CREATE", Resource: pods, Namespace: "a"}, false},
		{"namespaced scope on namespaced", rule(all, star, star, star, &ns), Request{Operation: "CREATE", Resource: pods, Namespace: "a"}, true},
		{"namespaced scope on a namespace", rule(all, star, star, star, &ns), Request{Operation: "CREATE", Resource: namespacesGVR, Namespace: "a"}, false},
		{"cluster scope on a namespace", rule(all, star, star, star, &cluster), Request{Operation: "CREATE", Resource: namespacesGVR, Namespace: "a"}, true},
		{"cluster scope on a node", rule(all, star, star, star, &cluster), Request{Operation: "CREATE", Resource: nodes}, true},
		{"cluster scope on a pod", rule(all, star, star, star, &cluster), Request{Operation: "CREATE", Resource: pods, Namespace: "a"}, false},
	}
	for _, tt := range tests {
		if got := Rule(tt.rule, tt.req); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestObjectSelector(t *testing.T) {
	labeled := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "1"}}}
	plain := &corev1.Pod{}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"a": "1"}}
	for _, tt := range []struct {
		name     string
		sel      *metav1.LabelSelector
		obj, old *corev1.Pod
		want     bool
	}{
		{"empty selects all", &metav1.LabelSelector{}, plain, nil, true},
		{"nil selects all", nil, nil, nil, true},
		{"object labeled", sel, labeled, nil, true},
		{"old object labeled", sel, plain, labeled, true},
		{"neither", sel, plain, plain, false},
		{"delete without objects", sel, nil, nil, false},
	} {
		r := Request{}
		if tt.obj != nil {
			r.Object = tt.obj
		}
		if tt.old != nil {
			r.OldObject = tt.old
		}
		got, err := ObjectSelector(tt.sel, r)
		if err != nil || got != tt.want {
			t.Errorf("%s: got %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
	if _, err := ObjectSelector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}}, Request{}); err == nil {
		t.Error("a bad selector is no error")
	}
}

func TestNamedRules(t *testing.T) {
	r := Request{Operation: "CREATE", Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: "a", Name: "x"}
	rule := admissionregistrationv1.NamedRuleWithOperations{
		RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
		},
	}
	if !NamedRules([]admissionregistrationv1.NamedRuleWithOperations{rule}, r) {
		t.Error("no resourceNames should match every name")
	}
	rule.ResourceNames = []string{"y"}
	if NamedRules([]admissionregistrationv1.NamedRuleWithOperations{rule}, r) {
		t.Error("resourceNames [y] matched x")
	}
}

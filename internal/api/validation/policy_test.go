package validation

import (
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
)

var pdbGK = schema.GroupKind{Group: "policy", Kind: "PodDisruptionBudget"}

func pdb(mut ...func(*policyv1.PodDisruptionBudget)) *policyv1.PodDisruptionBudget {
	p := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Generation: 1},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr(intstr.FromInt32(1)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		},
	}
	for _, m := range mut {
		m(p)
	}
	return p
}

func badExpression(p *policyv1.PodDisruptionBudget) {
	p.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"-x-"}}}
}

func TestPodDisruptionBudget(t *testing.T) {
	check(t, []testCase{
		{name: "valid", obj: pdb(), gk: pdbGK},
		{name: "percent", obj: pdb(func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable = ptr(intstr.FromString("50%")) }), gk: pdbGK},
		{name: "no selector, max unavailable", obj: pdb(func(p *policyv1.PodDisruptionBudget) {
			p.Spec.MinAvailable, p.Spec.Selector, p.Spec.MaxUnavailable = nil, nil, ptr(intstr.FromInt32(0))
		}), gk: pdbGK},
		{name: "both set", obj: pdb(func(p *policyv1.PodDisruptionBudget) { p.Spec.MaxUnavailable = ptr(intstr.FromInt32(1)) }), gk: pdbGK,
			want: `PodDisruptionBudget.policy "web" is invalid: spec: Invalid value: {"MinAvailable":1,"Selector":{"matchLabels":{"app":"web"}},"MaxUnavailable":1,"UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set`},
		{name: "negative and over 100%", obj: pdb(func(p *policyv1.PodDisruptionBudget) {
			p.Spec.MinAvailable, p.Spec.MaxUnavailable = nil, ptr(intstr.FromString("120%"))
		}), gk: pdbGK,
			want: `PodDisruptionBudget.policy "web" is invalid: spec.maxUnavailable: Invalid value: "120%": must not be greater than 100%`},
		{name: "negative int, bad percent", obj: pdb(func(p *policyv1.PodDisruptionBudget) {
			p.Spec.MinAvailable = ptr(intstr.FromInt32(-1))
		}), gk: pdbGK,
			want: `PodDisruptionBudget.policy "web" is invalid: spec.minAvailable: Invalid value: -1: must be greater than or equal to 0`},
		{name: "not a percent", obj: pdb(func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable = ptr(intstr.FromString("half")) }), gk: pdbGK,
			want: `PodDisruptionBudget.policy "web" is invalid: spec.minAvailable: Invalid value: "half": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')`},
		{name: "bad selector and policy", obj: pdb(func(p *policyv1.PodDisruptionBudget) {
			p.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "-x-"}}
			p.Spec.UnhealthyPodEvictionPolicy = ptr(policyv1.UnhealthyPodEvictionPolicyType("Never"))
		}), gk: pdbGK,
			want: `PodDisruptionBudget.policy "web" is invalid: [spec.selector.matchLabels: Invalid value: "-x-": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'), spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget"]`},
		// kube checks a budget's name only as a path segment.
		{name: "uppercase name", obj: pdb(func(p *policyv1.PodDisruptionBudget) { p.Name = "Web" }), gk: pdbGK},
		{name: "name with a slash after a valid spec", obj: pdb(func(p *policyv1.PodDisruptionBudget) { p.Name = "a/b" }), gk: pdbGK,
			want: `PodDisruptionBudget.policy "a/b" is invalid: metadata.name: Invalid value: "a/b": may not contain '/'`},
		{name: "name with a slash and an invalid spec", obj: pdb(func(p *policyv1.PodDisruptionBudget) { p.Name = "a/b"; p.Spec.MinAvailable = ptr(intstr.FromInt32(-1)) }), gk: pdbGK,
			want: `PodDisruptionBudget.policy "a/b" is invalid: spec.minAvailable: Invalid value: -1: must be greater than or equal to 0`},
		{name: "update keeps an invalid stored selector",
			op:  update,
			old: pdb(badExpression),
			obj: withRV(pdb(badExpression, func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable = ptr(intstr.FromInt32(2)) })), gk: pdbGK},
		{name: "create with an invalid expression value", obj: pdb(badExpression), gk: pdbGK,
			want: `PodDisruptionBudget.policy "web" is invalid: spec.selector.matchExpressions[0].values[0]: Invalid value: "-x-": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
		{name: "update to both set", op: update, old: pdb(),
			obj: withRV(pdb(func(p *policyv1.PodDisruptionBudget) { p.Spec.MaxUnavailable = ptr(intstr.FromString("10%")) })), gk: pdbGK,
			want: `PodDisruptionBudget.policy "web" is invalid: spec: Invalid value: {"MinAvailable":1,"Selector":{"matchLabels":{"app":"web"}},"MaxUnavailable":"10%","UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set`},
		{name: "status", op: status, old: pdb(),
			obj: withRV(pdb(func(p *policyv1.PodDisruptionBudget) {
				p.Status = policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1, CurrentHealthy: 2, DesiredHealthy: 1, ExpectedPods: 2}
			})), gk: pdbGK},
		{name: "negative status", op: status, old: pdb(),
			obj: withRV(pdb(func(p *policyv1.PodDisruptionBudget) {
				p.Status = policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: -1, CurrentHealthy: -2, DesiredHealthy: -3, ExpectedPods: -4}
			})), gk: pdbGK,
			want: `PodDisruptionBudget.policy "web" is invalid: [status.disruptionsAllowed: Invalid value: -1: must be greater than or equal to 0, status.currentHealthy: Invalid value: -2: must be greater than or equal to 0, status.desiredHealthy: Invalid value: -3: must be greater than or equal to 0, status.expectedPods: Invalid value: -4: must be greater than or equal to 0]`},
		{name: "status condition without type", op: status, old: pdb(),
			obj: withRV(pdb(func(p *policyv1.PodDisruptionBudget) {
				p.Status.Conditions = []metav1.Condition{{Status: metav1.ConditionTrue, Reason: "SufficientPods", LastTransitionTime: metav1.Now()}}
			})), gk: pdbGK,
			prefix: `PodDisruptionBudget.policy "web" is invalid: status.conditions[0].type: Required value`},
	})
}

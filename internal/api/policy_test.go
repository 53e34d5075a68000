package api

import (
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPDBStrategyStripsV1beta1Marker(t *testing.T) {
	marker := func(op metav1.LabelSelectorOperator) metav1.LabelSelectorRequirement {
		return metav1.LabelSelectorRequirement{Key: pdbV1beta1Label, Operator: op}
	}
	app := metav1.LabelSelectorRequirement{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}}
	pdb := func(sel *metav1.LabelSelector) *policyv1.PodDisruptionBudget {
		return &policyv1.PodDisruptionBudget{Spec: policyv1.PodDisruptionBudgetSpec{Selector: sel}}
	}
	cases := []struct {
		name      string
		sel, want *metav1.LabelSelector
	}{
		{"marker among others is dropped",
			&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{app, marker(metav1.LabelSelectorOpDoesNotExist)}},
			&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{app}}},
		{"v1beta1's match-none selector is kept",
			&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{marker(metav1.LabelSelectorOpExists)}},
			&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{marker(metav1.LabelSelectorOpExists)}}},
		{"empty selector is kept", &metav1.LabelSelector{}, &metav1.LabelSelector{}},
		{"nil selector is kept", nil, nil},
	}
	s := newPDBStrategy()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := pdb(tc.sel.DeepCopy())
			p.Status.DisruptionsAllowed = 3
			s.PrepareForCreate(p)
			if !equality.Semantic.DeepEqual(p.Spec.Selector, tc.want) {
				t.Errorf("selector = %v, want %v", p.Spec.Selector, tc.want)
			}
			if p.Generation != 1 || p.Status.DisruptionsAllowed != 0 {
				t.Errorf("generation %d, disruptionsAllowed %d; want 1, 0", p.Generation, p.Status.DisruptionsAllowed)
			}
		})
	}
	t.Run("an unchanged selector keeps the marker on update", func(t *testing.T) {
		sel := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{app, marker(metav1.LabelSelectorOpDoesNotExist)}}
		old, p := pdb(sel.DeepCopy()), pdb(sel.DeepCopy())
		old.Generation = 4
		s.PrepareForUpdate(p, old)
		if !equality.Semantic.DeepEqual(p.Spec.Selector, sel) || p.Generation != 4 {
			t.Errorf("selector = %v, generation %d; want %v, 4", p.Spec.Selector, p.Generation, sel)
		}
	})
}

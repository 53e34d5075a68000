package api

import (
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	policyV1      = schema.GroupVersion{Group: "policy", Version: "v1"}
	autoscalingV2 = schema.GroupVersion{Group: "autoscaling", Version: "v2"}
)

// evictionSubresource is pods/eviction, a policy/v1 Eviction: the
// terminal stage deletes the pod if its disruption budget allows.
var evictionSubresource = &Subresource{Name: "eviction", Kind: "Eviction", GroupVersion: policyV1, Verbs: []string{"create"}, CheckedByWriter: true}

// pdbV1beta1Label is the key policy/v1beta1 used to tell an empty
// selector (matching nothing there) from one matching everything.
const pdbV1beta1Label = "pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match"

// newPDBStrategy is kube's PodDisruptionBudget strategy: status reset on
// create and kept on update, generation 1 then bumped on spec changes,
// and the v1beta1 marker dropped from a new or changed selector.
func newPDBStrategy() Generic {
	return Generic{HasStatus: true, Generation: true,
		Create: func(obj runtime.Object) { stripPDBV1beta1Label(obj.(*policyv1.PodDisruptionBudget), nil) },
		Update: func(obj, old runtime.Object) {
			stripPDBV1beta1Label(obj.(*policyv1.PodDisruptionBudget), old.(*policyv1.PodDisruptionBudget))
		}}
}

// stripPDBV1beta1Label is kube's dropDisabledFields: a selector other than
// the two v1beta1 compatibility selectors loses requirements on the marker
// label, unless it did not change.
func stripPDBV1beta1Label(pdb, old *policyv1.PodDisruptionBudget) {
	sel := pdb.Spec.Selector
	if sel == nil || old != nil && equality.Semantic.DeepEqual(old.Spec.Selector, sel) {
		return
	}
	matchNone := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: pdbV1beta1Label, Operator: metav1.LabelSelectorOpExists}}}
	if equality.Semantic.DeepEqual(sel, matchNone) || equality.Semantic.DeepEqual(sel, &metav1.LabelSelector{}) {
		return
	}
	kept := sel.MatchExpressions[:0]
	for _, e := range sel.MatchExpressions {
		if e.Key != pdbV1beta1Label {
			kept = append(kept, e)
		}
	}
	sel.MatchExpressions = kept
}

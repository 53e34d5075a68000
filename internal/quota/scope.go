package quota

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kpipe/kpipe/internal/api"
)

// Matches reports whether quota q applies to obj: a quota without scopes
// covers every object; scopes (Terminating, NotTerminating, BestEffort,
// NotBestEffort, PriorityClass) select pods only, as kube's do.
func Matches(q *corev1.ResourceQuota, res *api.Resource, obj runtime.Object) bool {
	var reqs []corev1.ScopedResourceSelectorRequirement
	for _, s := range q.Spec.Scopes {
		reqs = append(reqs, corev1.ScopedResourceSelectorRequirement{ScopeName: s, Operator: corev1.ScopeSelectorOpExists})
	}
	if q.Spec.ScopeSelector != nil {
		reqs = append(reqs, q.Spec.ScopeSelector.MatchExpressions...)
	}
	if len(reqs) == 0 {
		return true
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return false
	}
	for _, r := range reqs {
		if !scopeMatches(r, pod) {
			return false
		}
	}
	return true
}

func scopeMatches(r corev1.ScopedResourceSelectorRequirement, pod *corev1.Pod) bool {
	switch r.ScopeName {
	case corev1.ResourceQuotaScopeTerminating:
		return pod.Spec.ActiveDeadlineSeconds != nil && *pod.Spec.ActiveDeadlineSeconds >= 0
	case corev1.ResourceQuotaScopeNotTerminating:
		return pod.Spec.ActiveDeadlineSeconds == nil
	case corev1.ResourceQuotaScopeBestEffort:
		return bestEffort(pod)
	case corev1.ResourceQuotaScopeNotBestEffort:
		return !bestEffort(pod)
	case corev1.ResourceQuotaScopePriorityClass:
		name := pod.Spec.PriorityClassName
		switch r.Operator {
		case corev1.ScopeSelectorOpExists:
			return name != ""
		case corev1.ScopeSelectorOpDoesNotExist:
			return name == ""
		case corev1.ScopeSelectorOpIn, corev1.ScopeSelectorOpNotIn:
			in := false
			for _, v := range r.Values {
				in = in || v == name
			}
			return in == (r.Operator == corev1.ScopeSelectorOpIn)
		}
	}
	return false
}

func bestEffort(pod *corev1.Pod) bool {
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for _, c := range cs {
			for _, l := range []corev1.ResourceList{c.Resources.Requests, c.Resources.Limits} {
				for n := range l {
					if n == corev1.ResourceCPU || n == corev1.ResourceMemory {
						return false
					}
				}
			}
		}
	}
	return true
}

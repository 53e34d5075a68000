package validation

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func init() {
	register(true, validatePodDisruptionBudget, validatePodDisruptionBudgetUpdate, validatePodDisruptionBudgetStatusUpdate)
}

// supportedUnhealthyPodEvictionPolicies, sorted as kube lists them.
var supportedUnhealthyPodEvictionPolicies = []string{string(policyv1.AlwaysAllow), string(policyv1.IfHealthyBudget)}

// validatePodDisruptionBudget is kube's ValidatePodDisruptionBudget: the
// spec only. The metadata is checked by the generic create path once the
// spec is valid.
func validatePodDisruptionBudget(pdb *policyv1.PodDisruptionBudget) field.ErrorList {
	return validatePodDisruptionBudgetSpec(&pdb.Spec, false, field.NewPath("spec"))
}

// validatePodDisruptionBudgetUpdate lets a budget whose stored selector
// already has an invalid label value keep it, as kube's strategy does.
func validatePodDisruptionBudgetUpdate(pdb, old *policyv1.PodDisruptionBudget) field.ErrorList {
	allowInvalid := old.Spec.Selector != nil &&
		len(metav1validation.ValidateLabelSelector(old.Spec.Selector, metav1validation.LabelSelectorValidationOptions{}, nil)) > 0
	return validatePodDisruptionBudgetSpec(&pdb.Spec, allowInvalid, field.NewPath("spec"))
}

func validatePodDisruptionBudgetSpec(s *policyv1.PodDisruptionBudgetSpec, allowInvalidLabelValue bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.MinAvailable != nil && s.MaxUnavailable != nil {
		// kube shows its internal spec, Go field names and all.
		errs = append(errs, field.Invalid(p, internal{s}, "minAvailable and maxUnavailable cannot be both set"))
	}
	if s.MinAvailable != nil {
		errs = append(errs, positiveIntOrPercent(*s.MinAvailable, p.Child("minAvailable"))...)
		errs = append(errs, notMoreThan100Percent(*s.MinAvailable, p.Child("minAvailable"))...)
	}
	if s.MaxUnavailable != nil {
		errs = append(errs, positiveIntOrPercent(*s.MaxUnavailable, p.Child("maxUnavailable"))...)
		errs = append(errs, notMoreThan100Percent(*s.MaxUnavailable, p.Child("maxUnavailable"))...)
	}
	errs = append(errs, metav1validation.ValidateLabelSelector(s.Selector,
		metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalidLabelValue}, p.Child("selector"))...)
	if v := s.UnhealthyPodEvictionPolicy; v != nil && *v != policyv1.AlwaysAllow && *v != policyv1.IfHealthyBudget {
		errs = append(errs, field.NotSupported(p.Child("unhealthyPodEvictionPolicy"), *v, supportedUnhealthyPodEvictionPolicies))
	}
	return errs
}

// validatePodDisruptionBudgetStatusUpdate is kube's
// ValidatePodDisruptionBudgetStatusUpdate for policy/v1.
func validatePodDisruptionBudgetStatusUpdate(pdb, _ *policyv1.PodDisruptionBudget) field.ErrorList {
	p := field.NewPath("status")
	s := &pdb.Status
	errs := metav1validation.ValidateConditions(s.Conditions, p.Child("conditions"))
	errs = append(errs, nonNegative(int64(s.DisruptionsAllowed), p.Child("disruptionsAllowed"))...)
	errs = append(errs, nonNegative(int64(s.CurrentHealthy), p.Child("currentHealthy"))...)
	errs = append(errs, nonNegative(int64(s.DesiredHealthy), p.Child("desiredHealthy"))...)
	return append(errs, nonNegative(int64(s.ExpectedPods), p.Child("expectedPods"))...)
}

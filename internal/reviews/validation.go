package reviews

import (
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateSAR is kube's check of a (Local)SubjectAccessReview.
func validateSAR(spec *authorizationv1.SubjectAccessReviewSpec, om metav1.ObjectMeta, local bool) field.ErrorList {
	specPath := field.NewPath("spec")
	errs := validateAttributes(specPath, spec.ResourceAttributes, spec.NonResourceAttributes)
	if spec.User == "" && len(spec.Groups) == 0 {
		errs = append(errs, field.Invalid(specPath.Child("user"), spec.User, `at least one of user or group must be specified`))
	}
	errs = append(errs, validateSelectors(spec.ResourceAttributes)...)
	namespace := om.Namespace
	om.ManagedFields = nil
	if local {
		om.Namespace = ""
	}
	if !equality.Semantic.DeepEqual(metav1.ObjectMeta{}, om) {
		msg := `must be empty`
		if local {
			msg = `must be empty except for namespace`
		}
		errs = append(errs, field.Invalid(field.NewPath("metadata"), om, msg))
	}
	if local {
		if spec.ResourceAttributes != nil && spec.ResourceAttributes.Namespace != namespace {
			errs = append(errs, field.Invalid(field.NewPath("spec.resourceAttributes.namespace"), spec.ResourceAttributes.Namespace, `must match metadata.namespace`))
		}
		if spec.NonResourceAttributes != nil {
			errs = append(errs, field.Invalid(field.NewPath("spec.nonResourceAttributes"), spec.NonResourceAttributes, `disallowed on this kind of request`))
		}
	}
	return errs
}

func validateSelfSAR(sar *authorizationv1.SelfSubjectAccessReview) field.ErrorList {
	errs := validateAttributes(field.NewPath("spec"), sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes)
	errs = append(errs, validateSelectors(sar.Spec.ResourceAttributes)...)
	om := sar.ObjectMeta
	om.ManagedFields = nil
	if !equality.Semantic.DeepEqual(metav1.ObjectMeta{}, om) {
		errs = append(errs, field.Invalid(field.NewPath("metadata"), sar.ObjectMeta, `must be empty`))
	}
	return errs
}

func validateAttributes(specPath *field.Path, ra *authorizationv1.ResourceAttributes, nra *authorizationv1.NonResourceAttributes) field.ErrorList {
	if (ra == nil) == (nra == nil) {
		return field.ErrorList{field.Invalid(specPath, nra, `exactly one of nonResourceAttributes or resourceAttributes must be specified`)}
	}
	return nil
}

// validateSelectors checks the field and label selector attributes, as
// kube's validateResourceAttributes.
func validateSelectors(ra *authorizationv1.ResourceAttributes) field.ErrorList {
	if ra == nil {
		return nil
	}
	var errs field.ErrorList
	p := field.NewPath("spec.resourceAttributes")
	if fs := ra.FieldSelector; fs != nil {
		fp := p.Child("fieldSelector")
		if fs.RawSelector != "" && len(fs.Requirements) > 0 {
			errs = append(errs, field.Invalid(fp.Child("rawSelector"), fs.RawSelector, "may not specified at the same time as requirements"))
		}
		if fs.RawSelector == "" && len(fs.Requirements) == 0 {
			errs = append(errs, field.Required(fp.Child("requirements"), fmt.Sprintf("when %s is specified, requirements or rawSelector is required", fp)))
		}
		opts := metav1validation.FieldSelectorValidationOptions{AllowUnknownOperatorInRequirement: true}
		for i, r := range fs.Requirements {
			errs = append(errs, metav1validation.ValidateFieldSelectorRequirement(r, opts, fp.Child("requirements").Index(i))...)
		}
	}
	if ls := ra.LabelSelector; ls != nil {
		lp := p.Child("labelSelector")
		if ls.RawSelector != "" && len(ls.Requirements) > 0 {
			errs = append(errs, field.Invalid(lp.Child("rawSelector"), ls.RawSelector, "may not specified at the same time as requirements"))
		}
		if ls.RawSelector == "" && len(ls.Requirements) == 0 {
			errs = append(errs, field.Required(lp.Child("requirements"), fmt.Sprintf("when %s is specified, requirements or rawSelector is required", lp)))
		}
		opts := metav1validation.LabelSelectorValidationOptions{AllowUnknownOperatorInRequirement: true}
		for i, r := range ls.Requirements {
			errs = append(errs, metav1validation.ValidateLabelSelectorRequirement(r, opts, lp.Child("requirements").Index(i))...)
		}
	}
	return errs
}

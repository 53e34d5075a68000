package validation

import (
	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// RBAC objects take any name that fits in a URL path segment, as in
// OpenShift, where these types came from.

func init() {
	register(true,
		func(r *rbacv1.Role) field.ErrorList { return validateRole(r, nil) },
		func(r, old *rbacv1.Role) field.ErrorList {
			return append(validateRole(r, old), objectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta, metadataPath)...)
		}, nil)
	register(false,
		func(r *rbacv1.ClusterRole) field.ErrorList { return validateClusterRole(r, nil) },
		func(r, old *rbacv1.ClusterRole) field.ErrorList {
			return append(validateClusterRole(r, old), objectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta, metadataPath)...)
		}, nil)
	register(true,
		func(b *rbacv1.RoleBinding) field.ErrorList {
			return validateBinding(&b.ObjectMeta, true, b.RoleRef, b.Subjects, nil, nil)
		},
		func(b, old *rbacv1.RoleBinding) field.ErrorList {
			errs := validateBinding(&b.ObjectMeta, true, b.RoleRef, b.Subjects, &old.RoleRef, old.Subjects)
			errs = append(errs, objectMetaUpdate(&b.ObjectMeta, &old.ObjectMeta, metadataPath)...)
			return append(errs, roleRefImmutable(b.RoleRef, old.RoleRef)...)
		}, nil)
	register(false,
		func(b *rbacv1.ClusterRoleBinding) field.ErrorList {
			return validateBinding(&b.ObjectMeta, false, b.RoleRef, b.Subjects, nil, nil)
		},
		func(b, old *rbacv1.ClusterRoleBinding) field.ErrorList {
			errs := validateBinding(&b.ObjectMeta, false, b.RoleRef, b.Subjects, &old.RoleRef, old.Subjects)
			errs = append(errs, objectMetaUpdate(&b.ObjectMeta, &old.ObjectMeta, metadataPath)...)
			return append(errs, roleRefImmutable(b.RoleRef, old.RoleRef)...)
		}, nil)
}

// roleRefImmutable: a binding's role cannot be swapped; delete and recreate.
// v1.37 words this with the generic immutability message, showing the new
// roleRef as kube's internal type.
func roleRefImmutable(ref, old rbacv1.RoleRef) field.ErrorList {
	if ref == old {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("roleRef"), internal{ref}, apimachineryvalidation.FieldImmutableErrorMsg)}
}

func validateRole(r, old *rbacv1.Role) field.ErrorList {
	errs := objectMeta(&r.ObjectMeta, true, pathSegmentName, metadataPath)
	return append(errs, validateRules(r.Rules, oldRules(old), old != nil, true)...)
}

func oldRules(old *rbacv1.Role) []rbacv1.PolicyRule {
	if old == nil {
		return nil
	}
	return old.Rules
}

func validateClusterRole(r, old *rbacv1.ClusterRole) field.ErrorList {
	errs := objectMeta(&r.ObjectMeta, false, pathSegmentName, metadataPath)
	var prev []rbacv1.PolicyRule
	allowInvalid := false
	if old != nil {
		prev = old.Rules
		// Stored selectors with bad label values stay acceptable.
		if old.AggregationRule != nil {
			for i := range old.AggregationRule.ClusterRoleSelectors {
				allowInvalid = allowInvalid || metav1validation.LabelSelectorHasInvalidLabelValue(&old.AggregationRule.ClusterRoleSelectors[i])
			}
		}
	}
	errs = append(errs, validateRules(r.Rules, prev, old != nil, false)...)
	if r.AggregationRule != nil {
		p := field.NewPath("aggregationRule", "clusterRoleSelectors")
		if len(r.AggregationRule.ClusterRoleSelectors) == 0 {
			errs = append(errs, field.Required(p, "at least one clusterRoleSelector required if aggregationRule is non-nil"))
		}
		opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalid}
		for i := range r.AggregationRule.ClusterRoleSelectors {
			sel := &r.AggregationRule.ClusterRoleSelectors[i]
			errs = append(errs, metav1validation.ValidateLabelSelector(sel, opts, p.Index(i))...)
			if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
				// kube shows the (nil) parsed selector here.
				errs = append(errs, field.Invalid(p.Index(i), nil, "invalid label selector."))
			}
		}
	}
	return errs
}

// validateRules checks policy rules. Missing verbs is a declarative rule at
// beta in v1.37: kube then reports it last and without detail, unless an
// update left the rules as they were.
func validateRules(rules, old []rbacv1.PolicyRule, update, namespaced bool) field.ErrorList {
	declarative := !update || !apiequality.Semantic.DeepEqual(rules, old)
	var errs field.ErrorList
	for i, rule := range rules {
		p := field.NewPath("rules").Index(i)
		if len(rule.Verbs) == 0 {
			if declarative {
				errs = append(errs, field.Required(p.Child("verbs"), "").MarkBeta())
			} else {
				errs = append(errs, field.Required(p.Child("verbs"), "verbs must contain at least one value"))
			}
		}
		if len(rule.NonResourceURLs) > 0 {
			if namespaced {
				errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), rule.NonResourceURLs, "namespaced rules cannot apply to non-resource URLs"))
			}
			if len(rule.APIGroups) > 0 || len(rule.Resources) > 0 || len(rule.ResourceNames) > 0 {
				errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), rule.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
			}
			continue
		}
		if len(rule.APIGroups) == 0 {
			errs = append(errs, field.Required(p.Child("apiGroups"), "resource rules must supply at least one api group"))
		}
		if len(rule.Resources) == 0 {
			errs = append(errs, field.Required(p.Child("resources"), "resource rules must supply at least one resource"))
		}
	}
	return errs
}

// validateBinding covers RoleBinding and ClusterRoleBinding. oldRef is nil on
// create. The declarative rules for roleRef.name and subjects[*].name are at
// beta; see validateRules.
func validateBinding(m *metav1.ObjectMeta, namespaced bool, ref rbacv1.RoleRef, subjects []rbacv1.Subject, oldRef *rbacv1.RoleRef, oldSubjects []rbacv1.Subject) field.ErrorList {
	errs := objectMeta(m, namespaced, pathSegmentName, metadataPath)
	rp := field.NewPath("roleRef")
	if ref.APIGroup != rbacv1.GroupName {
		errs = append(errs, field.NotSupported(rp.Child("apiGroup"), ref.APIGroup, []string{rbacv1.GroupName}))
	}
	kinds := []string{"ClusterRole"}
	if namespaced {
		kinds = []string{"Role", "ClusterRole"}
	}
	if !containsString(kinds, ref.Kind) {
		errs = append(errs, field.NotSupported(rp.Child("kind"), ref.Kind, kinds))
	}
	if ref.Name == "" {
		req := field.Required(rp.Child("name"), "")
		// On update kube's declarative check stops at the (alpha)
		// immutability rule, so only create sees the beta error.
		if oldRef == nil {
			req = req.MarkBeta()
		}
		errs = append(errs, req)
	} else {
		errs = append(errs, nameErrs(pathSegmentName, ref.Name, rp.Child("name"))...)
	}
	declarative := oldRef == nil || !apiequality.Semantic.DeepEqual(subjects, oldSubjects)
	for i, s := range subjects {
		errs = append(errs, validateSubject(s, namespaced, declarative, field.NewPath("subjects").Index(i))...)
	}
	return errs
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func validateSubject(s rbacv1.Subject, namespaced, declarative bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Name == "" {
		req := field.Required(p.Child("name"), "")
		if declarative {
			req = req.MarkBeta()
		}
		errs = append(errs, req)
	}
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		if s.Name != "" {
			errs = append(errs, nameErrs(apimachineryvalidation.ValidateServiceAccountName, s.Name, p.Child("name"))...)
		}
		if s.APIGroup != "" {
			errs = append(errs, field.NotSupported(p.Child("apiGroup"), s.APIGroup, []string{""}))
		}
		if !namespaced && s.Namespace == "" {
			errs = append(errs, field.Required(p.Child("namespace"), ""))
		}
	case rbacv1.UserKind, rbacv1.GroupKind:
		if s.APIGroup != rbacv1.GroupName {
			errs = append(errs, field.NotSupported(p.Child("apiGroup"), s.APIGroup, []string{rbacv1.GroupName}))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("kind"), s.Kind, []string{rbacv1.ServiceAccountKind, rbacv1.UserKind, rbacv1.GroupKind}))
	}
	return errs
}

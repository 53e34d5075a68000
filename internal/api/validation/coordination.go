package validation

import (
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func init() {
	register(true, validateLease, validateLeaseUpdate, nil)
}

// Leases use the generic metadata rules, without core's finalizer check.
func validateLease(l *coordinationv1.Lease) field.ErrorList {
	errs := apimachineryvalidation.ValidateObjectMeta(&l.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	return append(errs, validateLeaseSpec(&l.Spec, field.NewPath("spec"))...)
}

func validateLeaseUpdate(l, old *coordinationv1.Lease) field.ErrorList {
	errs := apimachineryvalidation.ValidateObjectMetaUpdate(&l.ObjectMeta, &old.ObjectMeta, metadataPath)
	return append(errs, validateLeaseSpec(&l.Spec, field.NewPath("spec"))...)
}

var validLeaseStrategies = []coordinationv1.CoordinatedLeaseStrategy{coordinationv1.OldestEmulationVersion}

func validateLeaseSpec(s *coordinationv1.LeaseSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.LeaseDurationSeconds != nil && *s.LeaseDurationSeconds <= 0 {
		errs = append(errs, field.Invalid(p.Child("leaseDurationSeconds"), s.LeaseDurationSeconds, "must be greater than 0"))
	}
	if s.LeaseTransitions != nil && *s.LeaseTransitions < 0 {
		errs = append(errs, field.Invalid(p.Child("leaseTransitions"), s.LeaseTransitions, "must be greater than or equal to 0"))
	}
	if s.Strategy != nil {
		errs = append(errs, validateLeaseStrategy(*s.Strategy, p.Child("strategy"))...)
	}
	if s.PreferredHolder != nil && *s.PreferredHolder != "" && (s.Strategy == nil || *s.Strategy == "") {
		errs = append(errs, field.Forbidden(p.Child("preferredHolder"), "may only be specified if `strategy` is defined"))
	}
	return errs
}

// validateLeaseStrategy: unqualified names are Kubernetes-defined, others
// must be qualified names. kube nests the path one level too deep.
func validateLeaseStrategy(s coordinationv1.CoordinatedLeaseStrategy, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !strings.Contains(string(s), "/") {
		for _, v := range validLeaseStrategies {
			if v == s {
				return nil
			}
		}
		return field.ErrorList{field.NotSupported(p.Child("strategy"), s, validLeaseStrategies)}
	}
	for _, msg := range validation.IsQualifiedName(string(s)) {
		errs = append(errs, field.Invalid(p.Child("strategy"), s, msg))
	}
	return errs
}

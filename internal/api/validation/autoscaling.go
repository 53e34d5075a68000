package validation

import (
	"errors"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func init() {
	register(true, validateHPA, validateHPAUpdate, validateHPAStatusUpdate)
}

const (
	maxHPAPeriodSeconds              int32 = 1800
	maxHPAStabilizationWindowSeconds int32 = 3600
)

var (
	validSelectPolicies = []string{string(autoscalingv2.DisabledPolicySelect), string(autoscalingv2.MaxChangePolicySelect), string(autoscalingv2.MinChangePolicySelect)}
	validPolicyTypes    = []string{string(autoscalingv2.PercentScalingPolicy), string(autoscalingv2.PodsScalingPolicy)}
	validMetricSources  = []string{
		string(autoscalingv2.ContainerResourceMetricSourceType), string(autoscalingv2.ExternalMetricSourceType),
		string(autoscalingv2.ObjectMetricSourceType), string(autoscalingv2.PodsMetricSourceType),
		string(autoscalingv2.ResourceMetricSourceType),
	}
)

// refOptions are kube's CrossVersionObjectReferenceValidationOptions.
type refOptions struct {
	allowEmptyAPIGroup, allowInvalidAPIVersion bool
}

// hpaOptions are what kube's strategy decides from the old object. With
// HPAScaleToZero on (beta, on by default in 1.37) minReplicas may be 0.
type hpaOptions struct {
	scaleTargetRef, objectMetrics refOptions
}

func hpaValidationOptions(hpa, old *autoscalingv2.HorizontalPodAutoscaler) hpaOptions {
	o := hpaOptions{objectMetrics: refOptions{allowEmptyAPIGroup: true}}
	ref := hpa.Spec.ScaleTargetRef
	switch {
	case old != nil && old.Spec.ScaleTargetRef.APIVersion == ref.APIVersion && old.Spec.ScaleTargetRef.Kind == ref.Kind:
		o.scaleTargetRef.allowInvalidAPIVersion = true
	case ref.Kind == "ReplicationController":
		o.scaleTargetRef.allowEmptyAPIGroup = true
	}
	if old != nil {
		for _, m := range old.Spec.Metrics {
			if m.Type == autoscalingv2.ObjectMetricSourceType && m.Object != nil &&
				apiVersionError(m.Object.DescribedObject, o.objectMetrics) != nil {
				o.objectMetrics.allowInvalidAPIVersion = true
				break
			}
		}
	}
	return o
}

func validateHPA(hpa *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	errs := objectMeta(&hpa.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	return append(errs, validateHPASpec(&hpa.Spec, field.NewPath("spec"), hpaValidationOptions(hpa, nil))...)
}

func validateHPAUpdate(hpa, old *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	errs := objectMetaUpdate(&hpa.ObjectMeta, &old.ObjectMeta, metadataPath)
	return append(errs, validateHPASpec(&hpa.Spec, field.NewPath("spec"), hpaValidationOptions(hpa, old))...)
}

// validateHPAStatusUpdate is kube's ValidateHorizontalPodAutoscalerStatusUpdate
// (the metadata is checked by the caller).
func validateHPAStatusUpdate(hpa, _ *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	var errs field.ErrorList
	s := &hpa.Status
	for i, c := range s.Conditions {
		if c.ObservedGeneration != nil {
			errs = append(errs, nonNegative(*c.ObservedGeneration, field.NewPath("status", "conditions").Index(i).Child("observedGeneration"))...)
		}
	}
	errs = append(errs, nonNegative(int64(s.CurrentReplicas), field.NewPath("status", "currentReplicas"))...)
	return append(errs, nonNegative(int64(s.DesiredReplicas), field.NewPath("status", "desiredReplicas"))...)
}

// validateHPASpec is kube's validateHorizontalPodAutoscalerSpec. The
// minimum checks of minReplicas and maxReplicas are kube's declarative
// rules at beta level, which replace the handwritten ones and come last.
func validateHPASpec(s *autoscalingv2.HorizontalPodAutoscalerSpec, p *field.Path, o hpaOptions) field.ErrorList {
	var errs field.ErrorList
	if s.MinReplicas != nil && *s.MinReplicas < 0 {
		errs = append(errs, field.Invalid(p.Child("minReplicas"), *s.MinReplicas, content.MinError(int32(0))).WithOrigin("minimum").MarkBeta())
	}
	if s.MaxReplicas == 0 {
		errs = append(errs, field.Required(p.Child("maxReplicas"), "").MarkBeta())
	} else if s.MaxReplicas < 0 {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), s.MaxReplicas, content.MinError(int32(1))).WithOrigin("minimum").MarkBeta())
	}
	if s.MinReplicas != nil && s.MaxReplicas < *s.MinReplicas {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), s.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	errs = append(errs, validateCrossVersionObjectReference(s.ScaleTargetRef, p.Child("scaleTargetRef"), o.scaleTargetRef)...)
	errs = append(errs, validateHPAMetrics(s.Metrics, p.Child("metrics"), s.MinReplicas, o.objectMetrics)...)
	if b := s.Behavior; b != nil {
		errs = append(errs, validateHPAScalingRules(b.ScaleUp, p.Child("behavior", "scaleUp"))...)
		errs = append(errs, validateHPAScalingRules(b.ScaleDown, p.Child("behavior", "scaleDown"))...)
	}
	return errs
}

func validateCrossVersionObjectReference(ref autoscalingv2.CrossVersionObjectReference, p *field.Path, o refOptions) field.ErrorList {
	var errs field.ErrorList
	if ref.Kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	} else {
		for _, msg := range content.IsPathSegmentName(ref.Kind) {
			errs = append(errs, field.Invalid(p.Child("kind"), ref.Kind, msg))
		}
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		for _, msg := range content.IsPathSegmentName(ref.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), ref.Name, msg))
		}
	}
	if err := apiVersionError(ref, o); err != nil {
		errs = append(errs, field.Invalid(p.Child("apiVersion"), ref.APIVersion, err.Error()))
	}
	return errs
}

func apiVersionError(ref autoscalingv2.CrossVersionObjectReference, o refOptions) error {
	if o.allowInvalidAPIVersion {
		return nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return err
	}
	if !o.allowEmptyAPIGroup && gv.Group == "" {
		return errors.New("apiVersion must specify API group")
	}
	return nil
}

func validateHPAMetrics(metrics []autoscalingv2.MetricSpec, p *field.Path, minReplicas *int32, o refOptions) field.ErrorList {
	var errs field.ErrorList
	objectOrExternal := false
	for i := range metrics {
		errs = append(errs, validateMetricSpec(&metrics[i], p.Index(i), o)...)
		if t := metrics[i].Type; t == autoscalingv2.ObjectMetricSourceType || t == autoscalingv2.ExternalMetricSourceType {
			objectOrExternal = true
		}
	}
	if minReplicas != nil && *minReplicas == 0 && !objectOrExternal {
		errs = append(errs, field.Forbidden(p, "must specify at least one Object or External metric to support scaling to zero replicas"))
	}
	return errs
}

func validateHPAScalingRules(r *autoscalingv2.HPAScalingRules, p *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if w := r.StabilizationWindowSeconds; w != nil && *w < 0 {
		errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), *w, "must be greater than or equal to zero"))
	}
	if w := r.StabilizationWindowSeconds; w != nil && *w > maxHPAStabilizationWindowSeconds {
		errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), *w, fmt.Sprintf("must be less than or equal to %v", maxHPAStabilizationWindowSeconds)))
	}
	if sp := r.SelectPolicy; sp != nil && *sp != autoscalingv2.MaxChangePolicySelect && *sp != autoscalingv2.MinChangePolicySelect && *sp != autoscalingv2.DisabledPolicySelect {
		errs = append(errs, field.NotSupported(p.Child("selectPolicy"), *sp, validSelectPolicies))
	}
	pp := p.Child("policies")
	if len(r.Policies) == 0 {
		errs = append(errs, field.Required(pp, "must specify at least one Policy"))
	}
	for i, pol := range r.Policies {
		ip := pp.Index(i)
		if pol.Type != autoscalingv2.PodsScalingPolicy && pol.Type != autoscalingv2.PercentScalingPolicy {
			errs = append(errs, field.NotSupported(ip.Child("type"), pol.Type, validPolicyTypes))
		}
		if pol.Value <= 0 {
			errs = append(errs, field.Invalid(ip.Child("value"), pol.Value, "must be greater than zero"))
		}
		if pol.PeriodSeconds <= 0 {
			errs = append(errs, field.Invalid(ip.Child("periodSeconds"), pol.PeriodSeconds, "must be greater than zero"))
		}
		if pol.PeriodSeconds > maxHPAPeriodSeconds {
			errs = append(errs, field.Invalid(ip.Child("periodSeconds"), pol.PeriodSeconds, fmt.Sprintf("must be less than or equal to %v", maxHPAPeriodSeconds)))
		}
	}
	if t := r.Tolerance; t != nil && t.Cmp(resource.Quantity{}) < 0 {
		errs = append(errs, field.Invalid(p.Child("tolerance"), t.String(), "must be greater than or equal to 0"))
	}
	return errs
}

func validMetricSource(t autoscalingv2.MetricSourceType) bool {
	for _, v := range validMetricSources {
		if string(t) == v {
			return true
		}
	}
	return false
}

// validateMetricSpec is kube's validateMetricSpec: the type, the one
// source it names, and only that source.
func validateMetricSpec(s *autoscalingv2.MetricSpec, p *field.Path, o refOptions) field.ErrorList {
	var errs field.ErrorList
	if s.Type == "" {
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric source type"))
	}
	if !validMetricSource(s.Type) {
		errs = append(errs, field.NotSupported(p.Child("type"), s.Type, validMetricSources))
	}
	// The sources present, in kube's order; only the first is checked.
	var present []string
	if s.Object != nil {
		if present = append(present, "object"); len(present) == 1 {
			errs = append(errs, validateObjectMetricSource(s.Object, p.Child("object"), o)...)
		}
	}
	if s.External != nil {
		if present = append(present, "external"); len(present) == 1 {
			errs = append(errs, validateExternalMetricSource(s.External, p.Child("external"))...)
		}
	}
	if s.Pods != nil {
		if present = append(present, "pods"); len(present) == 1 {
			errs = append(errs, validatePodsMetricSource(s.Pods, p.Child("pods"))...)
		}
	}
	if s.Resource != nil {
		if present = append(present, "resource"); len(present) == 1 {
			errs = append(errs, validateResourceMetricSource(s.Resource, p.Child("resource"))...)
		}
	}
	if s.ContainerResource != nil {
		if present = append(present, "containerResource"); len(present) == 1 {
			errs = append(errs, validateContainerResourceMetricSource(s.ContainerResource, p.Child("containerResource"))...)
		}
	}
	var expected string
	missing := func(name string, isNil bool) {
		if isNil {
			errs = append(errs, field.Required(p.Child(name), "must populate information for the given metric source"))
		}
		expected = name
	}
	switch s.Type {
	case autoscalingv2.ObjectMetricSourceType:
		missing("object", s.Object == nil)
	case autoscalingv2.PodsMetricSourceType:
		missing("pods", s.Pods == nil)
	case autoscalingv2.ResourceMetricSourceType:
		missing("resource", s.Resource == nil)
	case autoscalingv2.ExternalMetricSourceType:
		missing("external", s.External == nil)
	case autoscalingv2.ContainerResourceMetricSourceType:
		missing("containerResource", s.ContainerResource == nil)
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), s.Type, validMetricSources))
	}
	if len(present) != 1 {
		// kube ranges over a set here; its order is Go's map order.
		for _, typ := range present {
			if typ != expected {
				errs = append(errs, field.Forbidden(p.Child(typ), "must populate the given metric source only"))
			}
		}
	}
	return errs
}

func validateObjectMetricSource(src *autoscalingv2.ObjectMetricSource, p *field.Path, o refOptions) field.ErrorList {
	errs := validateCrossVersionObjectReference(src.DescribedObject, p.Child("describedObject"), o)
	errs = append(errs, validateMetricIdentifier(src.Metric, p.Child("metric"))...)
	errs = append(errs, validateMetricTarget(src.Target, p.Child("target"))...)
	if src.Target.Value == nil && src.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must set either a target value or averageValue"))
	}
	return errs
}

func validateExternalMetricSource(src *autoscalingv2.ExternalMetricSource, p *field.Path) field.ErrorList {
	errs := validateMetricIdentifier(src.Metric, p.Child("metric"))
	errs = append(errs, validateMetricTarget(src.Target, p.Child("target"))...)
	if src.Target.Value == nil && src.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must set either a target value for metric or a per-pod target"))
	}
	if src.Target.Value != nil && src.Target.AverageValue != nil {
		errs = append(errs, field.Forbidden(p.Child("target", "value"), "may not set both a target value for metric and a per-pod target"))
	}
	return errs
}

func validatePodsMetricSource(src *autoscalingv2.PodsMetricSource, p *field.Path) field.ErrorList {
	errs := validateMetricIdentifier(src.Metric, p.Child("metric"))
	errs = append(errs, validateMetricTarget(src.Target, p.Child("target"))...)
	if src.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must specify a positive target averageValue"))
	}
	return errs
}

func validateContainerResourceMetricSource(src *autoscalingv2.ContainerResourceMetricSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if src.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), "must specify a resource name"))
	} else {
		errs = append(errs, containerResourceName(src.Name, p.Child("name"))...)
	}
	if src.Container == "" {
		errs = append(errs, field.Required(p.Child("container"), "must specify a container"))
	} else {
		errs = append(errs, dns1123Label(src.Container, p.Child("container"))...)
	}
	return append(errs, utilizationOrValue(src.Target, p.Child("target"))...)
}

func validateResourceMetricSource(src *autoscalingv2.ResourceMetricSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if src.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), "must specify a resource name"))
	}
	return append(errs, utilizationOrValue(src.Target, p.Child("target"))...)
}

// utilizationOrValue: a resource target is a utilization or a raw value.
func utilizationOrValue(t autoscalingv2.MetricTarget, p *field.Path) field.ErrorList {
	errs := validateMetricTarget(t, p)
	if t.AverageUtilization == nil && t.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("averageUtilization"), "must set either a target raw value or a target utilization"))
	}
	if t.AverageUtilization != nil && t.AverageValue != nil {
		errs = append(errs, field.Forbidden(p.Child("averageValue"), "may not set both a target raw value and a target utilization"))
	}
	return errs
}

func validateMetricTarget(t autoscalingv2.MetricTarget, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Type == "" {
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric target type"))
	}
	if t.Type != autoscalingv2.UtilizationMetricType && t.Type != autoscalingv2.ValueMetricType && t.Type != autoscalingv2.AverageValueMetricType {
		errs = append(errs, field.Invalid(p.Child("type"), t.Type, "must be either Utilization, Value, or AverageValue"))
	}
	if t.Value != nil && t.Value.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("value"), t.Value, "must be positive"))
	}
	if t.AverageValue != nil && t.AverageValue.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("averageValue"), t.AverageValue, "must be positive"))
	}
	if t.AverageUtilization != nil && *t.AverageUtilization < 1 {
		errs = append(errs, field.Invalid(p.Child("averageUtilization"), *t.AverageUtilization, "must be greater than 0"))
	}
	return errs
}

func validateMetricIdentifier(id autoscalingv2.MetricIdentifier, p *field.Path) field.ErrorList {
	if id.Name == "" {
		return field.ErrorList{field.Required(p.Child("name"), "must specify a metric name")}
	}
	var errs field.ErrorList
	for _, msg := range content.IsPathSegmentName(id.Name) {
		errs = append(errs, field.Invalid(p.Child("name"), id.Name, msg))
	}
	return errs
}

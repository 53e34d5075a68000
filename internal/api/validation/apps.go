package validation

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func init() {
	register(true, validateDeployment, validateDeploymentUpdate, validateDeploymentStatusUpdate)
	register(true, validateReplicaSet, validateReplicaSetUpdate, validateReplicaSetStatusUpdate)
	register(true, validateStatefulSet, validateStatefulSetUpdate, validateStatefulSetStatusUpdate)
	register(true, validateDaemonSet, validateDaemonSetUpdate, validateDaemonSetStatusUpdate)
}

const selectorMismatch = "`selector` does not match template `labels`"

// replicas reads a defaulted *int32; a nil count validates as zero.
func replicas(r *int32) int32 {
	if r == nil {
		return 0
	}
	return *r
}

// strictSelector is the selector rule shared by Deployments, ReplicaSets and
// StatefulSets. what names the kind in the empty-selector message, which
// kube also gets wrong for ReplicaSets ("deployment").
func strictSelector(sel *metav1.LabelSelector, what string, p *field.Path) field.ErrorList {
	if sel == nil {
		return field.ErrorList{field.Required(p, "")}
	}
	errs := metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, p)
	if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(p, sel, "empty selector is invalid for "+what))
	}
	return errs
}

// validateReplicaSetTemplate is kube's ValidatePodTemplateSpecForReplicaSet,
// shared by Deployments and ReplicaSets.
func validateReplicaSetTemplate(t *corev1.PodTemplateSpec, sel labels.Selector, kind string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !sel.Empty() && !sel.Matches(labels.Set(t.Labels)) {
		errs = append(errs, field.Invalid(p.Child("metadata", "labels"), t.Labels, selectorMismatch))
	}
	errs = append(errs, validatePodTemplateSpec(t, p, podOptions{})...)
	if t.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(p.Child("spec", "restartPolicy"), t.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(p.Child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in "+kind+" is not Supported"))
	}
	return errs
}

// --- Deployment ---

func validateDeployment(d *appsv1.Deployment) field.ErrorList {
	errs := objectMeta(&d.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	return append(errs, validateDeploymentSpec(&d.Spec, field.NewPath("spec"))...)
}

func validateDeploymentSpec(s *appsv1.DeploymentSpec, p *field.Path) field.ErrorList {
	errs := nonNegative(int64(replicas(s.Replicas)), p.Child("replicas"))
	errs = append(errs, strictSelector(s.Selector, "deployment", p.Child("selector"))...)
	if sel, err := metav1.LabelSelectorAsSelector(s.Selector); err != nil {
		errs = append(errs, field.Invalid(p.Child("selector"), s.Selector, "invalid label selector"))
	} else {
		errs = append(errs, validateReplicaSetTemplate(&s.Template, sel, "ReplicaSet", p.Child("template"))...)
	}
	errs = append(errs, validateDeploymentStrategy(&s.Strategy, p.Child("strategy"))...)
	errs = append(errs, nonNegative(int64(s.MinReadySeconds), p.Child("minReadySeconds"))...)
	if s.RevisionHistoryLimit != nil {
		errs = append(errs, nonNegative(int64(*s.RevisionHistoryLimit), p.Child("revisionHistoryLimit"))...)
	}
	if s.ProgressDeadlineSeconds != nil {
		errs = append(errs, nonNegative(int64(*s.ProgressDeadlineSeconds), p.Child("progressDeadlineSeconds"))...)
		if *s.ProgressDeadlineSeconds <= s.MinReadySeconds {
			errs = append(errs, field.Invalid(p.Child("progressDeadlineSeconds"), s.ProgressDeadlineSeconds, "must be greater than minReadySeconds"))
		}
	}
	return errs
}

func validateDeploymentStrategy(s *appsv1.DeploymentStrategy, p *field.Path) field.ErrorList {
	switch s.Type {
	case appsv1.RecreateDeploymentStrategyType:
		if s.RollingUpdate != nil {
			return field.ErrorList{field.Forbidden(p.Child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'")}
		}
	case appsv1.RollingUpdateDeploymentStrategyType:
		ru := s.RollingUpdate
		if ru == nil {
			return field.ErrorList{field.Required(p.Child("rollingUpdate"), "this should be defaulted and never be nil")}
		}
		rp := p.Child("rollingUpdate")
		unavailable, surge := intOrZero(ru.MaxUnavailable), intOrZero(ru.MaxSurge)
		errs := positiveIntOrPercent(unavailable, rp.Child("maxUnavailable"))
		errs = append(errs, positiveIntOrPercent(surge, rp.Child("maxSurge"))...)
		if intOrPercentValue(unavailable) == 0 && intOrPercentValue(surge) == 0 {
			errs = append(errs, field.Invalid(rp.Child("maxUnavailable"), unavailable, "may not be 0 when `maxSurge` is 0"))
		}
		return append(errs, notMoreThan100Percent(unavailable, rp.Child("maxUnavailable"))...)
	default:
		return field.ErrorList{field.NotSupported(p, internal{s}, []string{string(appsv1.RecreateDeploymentStrategyType), string(appsv1.RollingUpdateDeploymentStrategyType)})}
	}
	return nil
}

func intOrZero(v *intstr.IntOrString) intstr.IntOrString {
	if v == nil {
		return intstr.FromInt32(0)
	}
	return *v
}

func positiveIntOrPercent(v intstr.IntOrString, p *field.Path) field.ErrorList {
	switch v.Type {
	case intstr.String:
		var errs field.ErrorList
		for _, msg := range validation.IsValidPercent(v.StrVal) {
			errs = append(errs, field.Invalid(p, v, msg))
		}
		return errs
	case intstr.Int:
		return nonNegative(int64(v.IntValue()), p)
	default:
		return field.ErrorList{field.Invalid(p, v, "must be an integer or percentage (e.g '5%%')")}
	}
}

func percentValue(v intstr.IntOrString) (int, bool) {
	if v.Type != intstr.String || len(validation.IsValidPercent(v.StrVal)) != 0 {
		return 0, false
	}
	n, _ := strconv.Atoi(v.StrVal[:len(v.StrVal)-1])
	return n, true
}

func intOrPercentValue(v intstr.IntOrString) int {
	if n, ok := percentValue(v); ok {
		return n
	}
	return v.IntValue()
}

func notMoreThan100Percent(v intstr.IntOrString, p *field.Path) field.ErrorList {
	if n, ok := percentValue(v); ok && n > 100 {
		return field.ErrorList{field.Invalid(p, v, "must not be greater than 100%")}
	}
	return nil
}

func validateDeploymentUpdate(d, old *appsv1.Deployment) field.ErrorList {
	errs := objectMetaUpdate(&d.ObjectMeta, &old.ObjectMeta, metadataPath)
	errs = append(errs, validateDeploymentSpec(&d.Spec, field.NewPath("spec"))...)
	// apps/v1 fixes the selector at creation.
	return append(errs, apimachineryvalidation.ValidateImmutableField(d.Spec.Selector, old.Spec.Selector, field.NewPath("spec", "selector"))...)
}

func validateDeploymentStatusUpdate(d, old *appsv1.Deployment) field.ErrorList {
	errs := objectMetaUpdate(&d.ObjectMeta, &old.ObjectMeta, metadataPath)
	p := field.NewPath("status")
	s := &d.Status
	errs = append(errs, nonNegative(s.ObservedGeneration, p.Child("observedGeneration"))...)
	errs = append(errs, nonNegative(int64(s.Replicas), p.Child("replicas"))...)
	errs = append(errs, nonNegative(int64(s.UpdatedReplicas), p.Child("updatedReplicas"))...)
	errs = append(errs, nonNegative(int64(s.ReadyReplicas), p.Child("readyReplicas"))...)
	errs = append(errs, nonNegative(int64(s.AvailableReplicas), p.Child("availableReplicas"))...)
	errs = append(errs, nonNegative(int64(s.UnavailableReplicas), p.Child("unavailableReplicas"))...)
	if s.TerminatingReplicas != nil {
		errs = append(errs, nonNegative(int64(*s.TerminatingReplicas), p.Child("terminatingReplicas"))...)
	}
	if s.CollisionCount != nil {
		errs = append(errs, nonNegative(int64(*s.CollisionCount), p.Child("collisionCount"))...)
	}
	const msg = "cannot be greater than status.replicas"
	if s.UpdatedReplicas > s.Replicas {
		errs = append(errs, field.Invalid(p.Child("updatedReplicas"), s.UpdatedReplicas, msg))
	}
	if s.ReadyReplicas > s.Replicas {
		errs = append(errs, field.Invalid(p.Child("readyReplicas"), s.ReadyReplicas, msg))
	}
	if s.AvailableReplicas > s.Replicas {
		errs = append(errs, field.Invalid(p.Child("availableReplicas"), s.AvailableReplicas, msg))
	}
	if s.AvailableReplicas > s.ReadyReplicas {
		errs = append(errs, field.Invalid(p.Child("availableReplicas"), s.AvailableReplicas, "cannot be greater than readyReplicas"))
	}
	return append(errs, collisionCountDecrement(s.CollisionCount, old.Status.CollisionCount, p.Child("collisionCount"))...)
}

func collisionCountDecrement(cur, old *int32, p *field.Path) field.ErrorList {
	if old == nil || (cur != nil && *cur >= *old) {
		return nil
	}
	return field.ErrorList{field.Invalid(p, replicas(cur), "cannot be decremented")}
}

// --- ReplicaSet ---

func validateReplicaSet(rs *appsv1.ReplicaSet) field.ErrorList {
	errs := objectMeta(&rs.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	return append(errs, validateReplicaSetSpec(&rs.Spec, field.NewPath("spec"))...)
}

func validateReplicaSetSpec(s *appsv1.ReplicaSetSpec, p *field.Path) field.ErrorList {
	errs := nonNegative(int64(replicas(s.Replicas)), p.Child("replicas"))
	errs = append(errs, nonNegative(int64(s.MinReadySeconds), p.Child("minReadySeconds"))...)
	errs = append(errs, strictSelector(s.Selector, "deployment", p.Child("selector"))...)
	if sel, err := metav1.LabelSelectorAsSelector(s.Selector); err != nil {
		errs = append(errs, field.Invalid(p.Child("selector"), s.Selector, "invalid label selector"))
	} else {
		errs = append(errs, validateReplicaSetTemplate(&s.Template, sel, "ReplicaSet", p.Child("template"))...)
	}
	return errs
}

func validateReplicaSetUpdate(rs, old *appsv1.ReplicaSet) field.ErrorList {
	errs := objectMetaUpdate(&rs.ObjectMeta, &old.ObjectMeta, metadataPath)
	errs = append(errs, validateReplicaSetSpec(&rs.Spec, field.NewPath("spec"))...)
	return append(errs, apimachineryvalidation.ValidateImmutableField(rs.Spec.Selector, old.Spec.Selector, field.NewPath("spec", "selector"))...)
}

func validateReplicaSetStatusUpdate(rs, old *appsv1.ReplicaSet) field.ErrorList {
	errs := objectMetaUpdate(&rs.ObjectMeta, &old.ObjectMeta, metadataPath)
	p := field.NewPath("status")
	s := &rs.Status
	errs = append(errs, nonNegative(int64(s.Replicas), p.Child("replicas"))...)
	errs = append(errs, nonNegative(int64(s.FullyLabeledReplicas), p.Child("fullyLabeledReplicas"))...)
	errs = append(errs, nonNegative(int64(s.ReadyReplicas), p.Child("readyReplicas"))...)
	errs = append(errs, nonNegative(int64(s.AvailableReplicas), p.Child("availableReplicas"))...)
	errs = append(errs, nonNegative(s.ObservedGeneration, p.Child("observedGeneration"))...)
	if s.TerminatingReplicas != nil {
		errs = append(errs, nonNegative(int64(*s.TerminatingReplicas), p.Child("terminatingReplicas"))...)
	}
	const msg = "cannot be greater than status.replicas"
	if s.FullyLabeledReplicas > s.Replicas {
		errs = append(errs, field.Invalid(p.Child("fullyLabeledReplicas"), s.FullyLabeledReplicas, msg))
	}
	if s.ReadyReplicas > s.Replicas {
		errs = append(errs, field.Invalid(p.Child("readyReplicas"), s.ReadyReplicas, msg))
	}
	if s.AvailableReplicas > s.Replicas {
		errs = append(errs, field.Invalid(p.Child("availableReplicas"), s.AvailableReplicas, msg))
	}
	if s.AvailableReplicas > s.ReadyReplicas {
		errs = append(errs, field.Invalid(p.Child("availableReplicas"), s.AvailableReplicas, "cannot be greater than readyReplicas"))
	}
	return errs
}

// --- StatefulSet ---

// statefulSetOptions mirror kube's: update tolerates what create rejects.
type statefulSetOptions struct {
	allowInvalidServiceName bool
	skipTemplate            bool
	skipClaimTemplates      bool
}

// validateStatefulSet: names are DNS labels because pod names append an
// ordinal. serviceName is optional since v1.33 (empty means no governing
// service).
func validateStatefulSet(ss *appsv1.StatefulSet) field.ErrorList {
	errs := objectMeta(&ss.ObjectMeta, true, apimachineryvalidation.NameIsDNSLabel, metadataPath)
	return append(errs, validateStatefulSetSpec(&ss.Spec, field.NewPath("spec"), statefulSetOptions{})...)
}

func validateStatefulSetSpec(s *appsv1.StatefulSetSpec, p *field.Path, o statefulSetOptions) field.ErrorList {
	var errs field.ErrorList
	switch s.PodManagementPolicy {
	case "":
		errs = append(errs, field.Required(p.Child("podManagementPolicy"), ""))
	case appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	default:
		errs = append(errs, field.Invalid(p.Child("podManagementPolicy"), s.PodManagementPolicy, fmt.Sprintf("must be '%s' or '%s'", appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement)))
	}
	up := p.Child("updateStrategy")
	switch s.UpdateStrategy.Type {
	case "":
		errs = append(errs, field.Required(up, ""))
	case appsv1.OnDeleteStatefulSetStrategyType:
		if s.UpdateStrategy.RollingUpdate != nil {
			errs = append(errs, field.Invalid(up.Child("rollingUpdate"), internal{s.UpdateStrategy.RollingUpdate}, fmt.Sprintf("only allowed for updateStrategy '%s'", appsv1.RollingUpdateStatefulSetStrategyType)))
		}
	case appsv1.RollingUpdateStatefulSetStrategyType:
		if ru := s.UpdateStrategy.RollingUpdate; ru != nil {
			rp := up.Child("rollingUpdate")
			errs = append(errs, nonNegative(int64(replicas(ru.Partition)), rp.Child("partition"))...)
			if ru.MaxUnavailable != nil {
				mp := rp.Child("maxUnavailable")
				errs = append(errs, positiveIntOrPercent(*ru.MaxUnavailable, mp)...)
				if intOrPercentValue(*ru.MaxUnavailable) == 0 {
					errs = append(errs, field.Invalid(mp, *ru.MaxUnavailable, "cannot be 0"))
				}
				errs = append(errs, notMoreThan100Percent(*ru.MaxUnavailable, mp)...)
			}
		}
	default:
		// StatefulSetRecreateStrategy is alpha and off in v1.37.
		errs = append(errs, field.Invalid(up, internal{s.UpdateStrategy}, fmt.Sprintf("must be '%s' or '%s'", appsv1.RollingUpdateStatefulSetStrategyType, appsv1.OnDeleteStatefulSetStrategyType)))
	}
	if pol := s.PersistentVolumeClaimRetentionPolicy; pol != nil {
		errs = append(errs, validateRetentionPolicyType(pol.WhenDeleted, p.Child("persistentVolumeClaimRetentionPolicy", "whenDeleted"))...)
		errs = append(errs, validateRetentionPolicyType(pol.WhenScaled, p.Child("persistentVolumeClaimRetentionPolicy", "whenScaled"))...)
	}
	if !o.skipClaimTemplates {
		for i := range s.VolumeClaimTemplates {
			errs = append(errs, validatePVCSpec(&s.VolumeClaimTemplates[i].Spec, p.Child("volumeClaimTemplates").Index(i).Child("spec"))...)
		}
	}
	errs = append(errs, nonNegative(int64(replicas(s.Replicas)), p.Child("replicas"))...)
	errs = append(errs, nonNegative(int64(s.MinReadySeconds), p.Child("minReadySeconds"))...)
	if s.Ordinals != nil {
		errs = append(errs, nonNegative(int64(s.Ordinals.Start), p.Child("ordinals.start"))...)
	}
	if !o.allowInvalidServiceName && s.ServiceName != "" {
		errs = append(errs, dns1123Label(s.ServiceName, p.Child("serviceName"))...)
	}
	if s.Selector == nil {
		errs = append(errs, field.Required(p.Child("selector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(s.Selector, metav1validation.LabelSelectorValidationOptions{}, p.Child("selector"))...)
		if len(s.Selector.MatchLabels)+len(s.Selector.MatchExpressions) == 0 {
			errs = append(errs, field.Invalid(p.Child("selector"), s.Selector, "empty selector is invalid for statefulset"))
		}
	}
	if sel, err := metav1.LabelSelectorAsSelector(s.Selector); err != nil {
		errs = append(errs, field.Invalid(p.Child("selector"), s.Selector, ""))
	} else {
		errs = append(errs, validateStatefulSetTemplate(s, sel, p.Child("template"), o)...)
	}
	if s.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(p.Child("template", "spec", "restartPolicy"), s.Template.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	if s.Template.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(p.Child("template", "spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in StatefulSet is not Supported"))
	}
	return errs
}

func validateRetentionPolicyType(t appsv1.PersistentVolumeClaimRetentionPolicyType, p *field.Path) field.ErrorList {
	switch t {
	case appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType:
		return nil
	}
	return field.ErrorList{field.NotSupported(p, t, []string{string(appsv1.RetainPersistentVolumeClaimRetentionPolicyType), string(appsv1.DeletePersistentVolumeClaimRetentionPolicyType)})}
}

// validateStatefulSetTemplate validates the template as the controller will
// use it: hostname and subdomain are overwritten, and claim templates become
// volumes.
func validateStatefulSetTemplate(s *appsv1.StatefulSetSpec, sel labels.Selector, p *field.Path, o statefulSetOptions) field.ErrorList {
	t := &s.Template
	if t.Spec.Subdomain != "" || t.Spec.Hostname != "" || len(s.VolumeClaimTemplates) > 0 {
		t = t.DeepCopy()
		t.Spec.Subdomain, t.Spec.Hostname = "", ""
		if len(s.VolumeClaimTemplates) > 0 {
			fromClaims := map[string]bool{}
			var vols []corev1.Volume
			for _, c := range s.VolumeClaimTemplates {
				if !fromClaims[c.Name] {
					vols = append(vols, corev1.Volume{Name: c.Name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c.Name}}})
				}
				fromClaims[c.Name] = true
			}
			for _, v := range t.Spec.Volumes {
				if !fromClaims[v.Name] {
					vols = append(vols, v)
				}
			}
			t.Spec.Volumes = vols
		}
	}
	var errs field.ErrorList
	if !sel.Empty() && !sel.Matches(labels.Set(t.Labels)) {
		errs = append(errs, field.Invalid(p.Child("metadata", "labels"), t.Labels, selectorMismatch))
	}
	if !o.skipTemplate {
		errs = append(errs, validatePodTemplateSpec(t, p, podOptions{})...)
	}
	errs = append(errs, metav1validation.ValidateLabels(t.Labels, p.Child("labels"))...)
	errs = append(errs, apimachineryvalidation.ValidateAnnotations(t.Annotations, p.Child("annotations"))...)
	return append(errs, validatePodAnnotations(t.Annotations, &t.Spec, p.Child("annotations"))...)
}

func validateStatefulSetUpdate(ss, old *appsv1.StatefulSet) field.ErrorList {
	// The name is not revalidated: older releases accepted subdomains.
	errs := objectMetaUpdate(&ss.ObjectMeta, &old.ObjectMeta, metadataPath)
	o := statefulSetOptions{allowInvalidServiceName: true, skipClaimTemplates: true}
	if len(validateStatefulSetSpec(&old.Spec, nil, o)) > 0 {
		// Tolerate a stored template that no longer validates.
		o.skipTemplate = true
	}
	sp := field.NewPath("spec")
	errs = append(errs, validateStatefulSetSpec(&ss.Spec, sp, o)...)
	errs = append(errs, apimachineryvalidation.ValidateImmutableField(ss.Spec.Selector, old.Spec.Selector, sp.Child("selector"))...)
	errs = append(errs, apimachineryvalidation.ValidateImmutableField(internalClaims(ss.Spec.VolumeClaimTemplates), internalClaims(old.Spec.VolumeClaimTemplates), sp.Child("volumeClaimTemplates"))...)
	errs = append(errs, apimachineryvalidation.ValidateImmutableField(ss.Spec.ServiceName, old.Spec.ServiceName, sp.Child("serviceName"))...)
	return append(errs, apimachineryvalidation.ValidateImmutableField(ss.Spec.PodManagementPolicy, old.Spec.PodManagementPolicy, sp.Child("podManagementPolicy"))...)
}

// internalClaims compares claim templates semantically but renders them as
// kube's internal types.
type internalClaims []corev1.PersistentVolumeClaim

func (c internalClaims) MarshalJSON() ([]byte, error) {
	return internal{[]corev1.PersistentVolumeClaim(c)}.MarshalJSON()
}

func validateStatefulSetStatusUpdate(ss, old *appsv1.StatefulSet) field.ErrorList {
	p := field.NewPath("status")
	s := &ss.Status
	errs := nonNegative(int64(s.Replicas), p.Child("replicas"))
	errs = append(errs, nonNegative(int64(s.ReadyReplicas), p.Child("readyReplicas"))...)
	errs = append(errs, nonNegative(int64(s.CurrentReplicas), p.Child("currentReplicas"))...)
	errs = append(errs, nonNegative(int64(s.UpdatedReplicas), p.Child("updatedReplicas"))...)
	errs = append(errs, nonNegative(int64(s.AvailableReplicas), p.Child("availableReplicas"))...)
	errs = append(errs, nonNegative(s.ObservedGeneration, p.Child("observedGeneration"))...)
	if s.CollisionCount != nil {
		errs = append(errs, nonNegative(int64(*s.CollisionCount), p.Child("collisionCount"))...)
	}
	const msg = "cannot be greater than status.replicas"
	if s.ReadyReplicas > s.Replicas {
		errs = append(errs, field.Invalid(p.Child("readyReplicas"), s.ReadyReplicas, msg))
	}
	if s.CurrentReplicas > s.Replicas {
		errs = append(errs, field.Invalid(p.Child("currentReplicas"), s.CurrentReplicas, msg))
	}
	if s.UpdatedReplicas > s.Replicas {
		errs = append(errs, field.Invalid(p.Child("updatedReplicas"), s.UpdatedReplicas, msg))
	}
	if s.AvailableReplicas > s.Replicas {
		errs = append(errs, field.Invalid(p.Child("availableReplicas"), s.AvailableReplicas, msg))
	}
	if s.AvailableReplicas > s.ReadyReplicas {
		errs = append(errs, field.Invalid(p.Child("availableReplicas"), s.AvailableReplicas, "cannot be greater than status.readyReplicas"))
	}
	errs = append(errs, objectMetaUpdate(&ss.ObjectMeta, &old.ObjectMeta, metadataPath)...)
	return append(errs, collisionCountDecrement(s.CollisionCount, old.Status.CollisionCount, p.Child("collisionCount"))...)
}

// --- DaemonSet ---

func validateDaemonSet(ds *appsv1.DaemonSet) field.ErrorList {
	errs := objectMeta(&ds.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	return append(errs, validateDaemonSetSpec(&ds.Spec, field.NewPath("spec"), false)...)
}

func validateDaemonSetSpec(s *appsv1.DaemonSetSpec, p *field.Path, allowInvalidLabelValue bool) field.ErrorList {
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalidLabelValue}
	errs := metav1validation.ValidateLabelSelector(s.Selector, opts, p.Child("selector"))
	if sel, err := metav1.LabelSelectorAsSelector(s.Selector); err == nil && !sel.Matches(labels.Set(s.Template.Labels)) {
		errs = append(errs, field.Invalid(p.Child("template", "metadata", "labels"), s.Template.Labels, selectorMismatch))
	}
	if s.Selector != nil && len(s.Selector.MatchLabels)+len(s.Selector.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(p.Child("selector"), s.Selector, "empty selector is invalid for daemonset"))
	}
	errs = append(errs, validatePodTemplateSpec(&s.Template, p.Child("template"), podOptions{})...)
	if s.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(p.Child("template", "spec", "restartPolicy"), s.Template.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	if s.Template.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(p.Child("template", "spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in DaemonSet is not Supported"))
	}
	errs = append(errs, nonNegative(int64(s.MinReadySeconds), p.Child("minReadySeconds"))...)
	// apps/v1 has no templateGeneration; kube checks a zero value here.
	errs = append(errs, validateDaemonSetUpdateStrategy(&s.UpdateStrategy, p.Child("updateStrategy"))...)
	if s.RevisionHistoryLimit != nil {
		errs = append(errs, nonNegative(int64(*s.RevisionHistoryLimit), p.Child("revisionHistoryLimit"))...)
	}
	return errs
}

func validateDaemonSetUpdateStrategy(s *appsv1.DaemonSetUpdateStrategy, p *field.Path) field.ErrorList {
	switch s.Type {
	case appsv1.OnDeleteDaemonSetStrategyType:
		return nil
	case appsv1.RollingUpdateDaemonSetStrategyType:
		if s.RollingUpdate == nil {
			return field.ErrorList{field.Required(p.Child("rollingUpdate"), "")}
		}
		rp := p.Child("rollingUpdate")
		unavailable, surge := intOrZero(s.RollingUpdate.MaxUnavailable), intOrZero(s.RollingUpdate.MaxSurge)
		errs := positiveIntOrPercent(unavailable, rp.Child("maxUnavailable"))
		errs = append(errs, positiveIntOrPercent(surge, rp.Child("maxSurge"))...)
		errs = append(errs, notMoreThan100Percent(unavailable, rp.Child("maxUnavailable"))...)
		errs = append(errs, notMoreThan100Percent(surge, rp.Child("maxSurge"))...)
		hasUnavailable, hasSurge := intOrPercentValue(unavailable) != 0, intOrPercentValue(surge) != 0
		switch {
		case hasUnavailable && hasSurge:
			errs = append(errs, field.Invalid(rp.Child("maxSurge"), surge, "may not be set when maxUnavailable is non-zero"))
		case !hasUnavailable && !hasSurge:
			errs = append(errs, field.Required(rp.Child("maxUnavailable"), "cannot be 0 when maxSurge is 0"))
		}
		return errs
	default:
		return field.ErrorList{field.NotSupported(p, internal{s}, []string{string(appsv1.RollingUpdateDaemonSetStrategyType), string(appsv1.OnDeleteDaemonSetStrategyType)})}
	}
}

func validateDaemonSetUpdate(ds, old *appsv1.DaemonSet) field.ErrorList {
	errs := objectMetaUpdate(&ds.ObjectMeta, &old.ObjectMeta, metadataPath)
	errs = append(errs, apimachineryvalidation.ValidateImmutableField(ds.Spec.Selector, old.Spec.Selector, field.NewPath("spec", "selector"))...)
	// A stored selector with a bad label value keeps validating.
	allowInvalid := metav1validation.LabelSelectorHasInvalidLabelValue(old.Spec.Selector)
	return append(errs, validateDaemonSetSpec(&ds.Spec, field.NewPath("spec"), allowInvalid)...)
}

func validateDaemonSetStatusUpdate(ds, old *appsv1.DaemonSet) field.ErrorList {
	errs := objectMetaUpdate(&ds.ObjectMeta, &old.ObjectMeta, metadataPath)
	p := field.NewPath("status")
	s := &ds.Status
	errs = append(errs, nonNegative(int64(s.CurrentNumberScheduled), p.Child("currentNumberScheduled"))...)
	errs = append(errs, nonNegative(int64(s.NumberMisscheduled), p.Child("numberMisscheduled"))...)
	errs = append(errs, nonNegative(int64(s.DesiredNumberScheduled), p.Child("desiredNumberScheduled"))...)
	errs = append(errs, nonNegative(int64(s.NumberReady), p.Child("numberReady"))...)
	errs = append(errs, nonNegative(s.ObservedGeneration, p.Child("observedGeneration"))...)
	errs = append(errs, nonNegative(int64(s.UpdatedNumberScheduled), p.Child("updatedNumberScheduled"))...)
	errs = append(errs, nonNegative(int64(s.NumberAvailable), p.Child("numberAvailable"))...)
	errs = append(errs, nonNegative(int64(s.NumberUnavailable), p.Child("numberUnavailable"))...)
	if s.CollisionCount != nil {
		errs = append(errs, nonNegative(int64(*s.CollisionCount), p.Child("collisionCount"))...)
	}
	return append(errs, collisionCountDecrement(s.CollisionCount, old.Status.CollisionCount, p.Child("collisionCount"))...)
}

package validation

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"
)

// batch/v1 Jobs and CronJobs, as kube's pkg/apis/batch/validation with the
// options its registry strategies pass at the v1.37 feature-gate defaults
// (JobManagedBy GA, so the strict status checks always apply).

func init() {
	register(true, validateJob, validateJobUpdate, validateJobStatusUpdate)
	register(true, validateCronJob, validateCronJobUpdate, validateCronJobStatusUpdate)
}

const (
	maxParallelismForIndexedJob             = 100000
	maxFailedIndexesForIndexedJob           = 100_000
	completionsSoftLimit                    = 100_000
	parallelismLimitForHighCompletions      = 10_000
	maxFailedIndexesLimitForHighCompletions = 10_000
	maxPodFailurePolicyRules                = 20
	maxPodFailurePolicyOnExitCodesValues    = 255
	maxPodFailurePolicyOnPodConditions      = 20
	maxManagedByLength                      = 63
	maxSuccessPolicySucceededIndexes        = 64 * 1024
	maxSuccessPolicyRules                   = 20
)

// The labels kube's Job strategy puts on a generated pod template.
const (
	JobControllerUIDLabel       = "batch.kubernetes.io/controller-uid"
	JobNameLabel                = "batch.kubernetes.io/job-name"
	LegacyJobControllerUIDLabel = "controller-uid"
	LegacyJobNameLabel          = "job-name"
)

var (
	podFailurePolicyActions = sets.New(
		batchv1.PodFailurePolicyActionCount,
		batchv1.PodFailurePolicyActionFailIndex,
		batchv1.PodFailurePolicyActionFailJob,
		batchv1.PodFailurePolicyActionIgnore)
	onExitCodesOperators = sets.New(batchv1.PodFailurePolicyOnExitCodesOpIn, batchv1.PodFailurePolicyOnExitCodesOpNotIn)
	onPodConditionStatus = sets.New(corev1.ConditionFalse, corev1.ConditionTrue, corev1.ConditionUnknown)
	podReplacementPolicy = sets.New(batchv1.Failed, batchv1.TerminatingOrFailed)
)

// jobOptions are kube's JobValidationOptions that differ between create and
// update.
type jobOptions struct {
	allowInvalidLabelValueInSelector bool
	allowMutableSchedulingDirectives bool
	requirePrefixedLabels            bool
}

// immutable is kube's ValidateImmutableField on the internal type, whose
// value renders with Go field names.
func immutable(v, old any, p *field.Path) field.ErrorList {
	if apiequality.Semantic.DeepEqual(v, old) {
		return nil
	}
	return field.ErrorList{field.Invalid(p, internal{v}, apimachineryvalidation.FieldImmutableErrorMsg).WithOrigin("immutable")}
}

// --- Job ---

func validateJob(j *batchv1.Job) field.ErrorList {
	opts := jobOptions{requirePrefixedLabels: true}
	errs := objectMeta(&j.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	errs = append(errs, validateGeneratedSelector(j, opts.requirePrefixedLabels)...)
	errs = append(errs, validateJobSpecWithSelector(&j.Spec, nil, field.NewPath("spec"), opts)...)
	return append(errs, validateNameAllowsCompletions(j)...)
}

// validateGeneratedSelector checks that a generated selector and the
// template's labels are the ones the strategy generated.
func validateGeneratedSelector(j *batchv1.Job, batchLabels bool) field.ErrorList {
	if utilptr.Deref(j.Spec.ManualSelector, false) || j.Spec.Selector == nil {
		return nil
	}
	var errs field.ErrorList
	if j.UID == "" {
		errs = append(errs, field.Required(metadataPath.Child("uid"), ""))
	}
	tp := field.NewPath("spec", "template", "metadata")
	uid, name := string(j.UID), j.Name
	errs = append(errs, hasLabel(&j.Spec.Template.ObjectMeta, tp, LegacyJobControllerUIDLabel, uid)...)
	errs = append(errs, hasLabel(&j.Spec.Template.ObjectMeta, tp, LegacyJobNameLabel, name)...)
	expected := map[string]string{}
	if batchLabels {
		errs = append(errs, hasLabel(&j.Spec.Template.ObjectMeta, tp, JobControllerUIDLabel, uid)...)
		errs = append(errs, hasLabel(&j.Spec.Template.ObjectMeta, tp, JobNameLabel, name)...)
		expected[JobControllerUIDLabel] = uid
		expected[JobNameLabel] = name
	}
	expected[LegacyJobControllerUIDLabel] = uid
	expected[LegacyJobNameLabel] = name
	if sel, err := metav1.LabelSelectorAsSelector(j.Spec.Selector); err == nil && !sel.Matches(labels.Set(expected)) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "selector"), j.Spec.Selector, "`selector` not auto-generated"))
	}
	return errs
}

// hasLabel is kube's ValidateHasLabel.
func hasLabel(m *metav1.ObjectMeta, p *field.Path, key, want string) field.ErrorList {
	got, ok := m.Labels[key]
	if !ok {
		return field.ErrorList{field.Required(p.Child("labels").Key(key), fmt.Sprintf("must be '%s'", want))}
	}
	if got != want {
		return field.ErrorList{field.Invalid(p.Child("labels").Key(key), m.Labels, fmt.Sprintf("must be '%s'", want))}
	}
	return nil
}

// validateNameAllowsCompletions: an Indexed Job's pods get hostnames
// <name>-<index>, which must be DNS labels.
func validateNameAllowsCompletions(j *batchv1.Job) field.ErrorList {
	s := &j.Spec
	if utilptr.Deref(s.CompletionMode, "") != batchv1.IndexedCompletion || s.Completions == nil || *s.Completions <= 0 {
		return nil
	}
	host := fmt.Sprintf("%s-%d", j.Name, *s.Completions-1)
	if len(validation.IsDNS1123Label(host)) > 0 {
		return field.ErrorList{field.Invalid(metadataPath.Child("name"), j.Name, "will not able to create pod with invalid DNS label: "+host)}
	}
	return nil
}

// validateJobSpecWithSelector is kube's ValidateJobSpec: the spec, a
// required selector, and a template its selector matches.
func validateJobSpecWithSelector(s, old *batchv1.JobSpec, p *field.Path, opts jobOptions) field.ErrorList {
	errs := validateJobSpec(s, old, p)
	if s.Selector == nil {
		errs = append(errs, field.Required(p.Child("selector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(s.Selector, metav1validation.LabelSelectorValidationOptions{
			AllowInvalidLabelValueInSelector: opts.allowInvalidLabelValueInSelector,
		}, p.Child("selector"))...)
	}
	if sel, err := metav1.LabelSelectorAsSelector(s.Selector); err == nil && !sel.Matches(labels.Set(s.Template.Labels)) {
		errs = append(errs, field.Invalid(p.Child("template", "metadata", "labels"), s.Template.Labels, selectorMismatch))
	}
	return errs
}

// validateJobSpec is kube's validateJobSpec, shared with CronJob's job
// template. old is nil on create.
func validateJobSpec(s, old *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	nonNeg := func(v *int32, name string) {
		if v != nil {
			errs = append(errs, nonNegative(int64(*v), p.Child(name))...)
		}
	}
	nonNeg(s.Parallelism, "parallelism")
	nonNeg(s.Completions, "completions")
	if s.ActiveDeadlineSeconds != nil {
		errs = append(errs, nonNegative(*s.ActiveDeadlineSeconds, p.Child("activeDeadlineSeconds"))...)
	}
	nonNeg(s.BackoffLimit, "backoffLimit")
	nonNeg(s.TTLSecondsAfterFinished, "ttlSecondsAfterFinished")
	nonNeg(s.BackoffLimitPerIndex, "backoffLimitPerIndex")
	if s.MaxFailedIndexes != nil {
		errs = append(errs, nonNegative(int64(*s.MaxFailedIndexes), p.Child("maxFailedIndexes"))...)
		if s.BackoffLimitPerIndex == nil {
			errs = append(errs, field.Required(p.Child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"))
		}
	}
	if s.ManagedBy != nil {
		errs = append(errs, validation.IsDomainPrefixedPath(p.Child("managedBy"), *s.ManagedBy)...)
		if len(*s.ManagedBy) > maxManagedByLength {
			errs = append(errs, field.TooLong(p.Child("managedBy"), "", maxManagedByLength))
		}
	}
	indexed := utilptr.Deref(s.CompletionMode, "") == batchv1.IndexedCompletion
	if s.CompletionMode != nil {
		if m := *s.CompletionMode; m != batchv1.NonIndexedCompletion && m != batchv1.IndexedCompletion {
			errs = append(errs, field.NotSupported(p.Child("completionMode"), s.CompletionMode, []batchv1.CompletionMode{batchv1.NonIndexedCompletion, batchv1.IndexedCompletion}))
		}
		if indexed {
			errs = append(errs, validateIndexedJobSpec(s, p)...)
		}
	}
	if s.CompletionMode == nil || *s.CompletionMode == batchv1.NonIndexedCompletion {
		if s.BackoffLimitPerIndex != nil {
			errs = append(errs, field.Invalid(p.Child("backoffLimitPerIndex"), *s.BackoffLimitPerIndex, "requires indexed completion mode"))
		}
		if s.MaxFailedIndexes != nil {
			errs = append(errs, field.Invalid(p.Child("maxFailedIndexes"), *s.MaxFailedIndexes, "requires indexed completion mode"))
		}
	}
	if s.PodFailurePolicy != nil {
		errs = append(errs, validatePodFailurePolicy(s, p.Child("podFailurePolicy"))...)
	}
	if s.SuccessPolicy != nil {
		if !indexed {
			errs = append(errs, field.Invalid(p.Child("successPolicy"), internal{*s.SuccessPolicy}, "requires indexed completion mode"))
		} else {
			errs = append(errs, validateSuccessPolicy(s, p.Child("successPolicy"))...)
		}
	}
	errs = append(errs, validatePodReplacementPolicy(s, p.Child("podReplacementPolicy"))...)
	errs = append(errs, validateGangMinCount(s, p.Child("scheduling"))...)
	errs = append(errs, validateJobScheduling(s, p.Child("scheduling"))...)
	errs = append(errs, validatePodTemplateSpec(&s.Template, p.Child("template"), podOptions{})...)

	rp := p.Child("template", "spec", "restartPolicy")
	switch rs := s.Template.Spec.RestartPolicy; {
	case rs == corev1.RestartPolicyAlways || rs == "":
		errs = append(errs, field.Required(rp, fmt.Sprintf("valid values: %q, %q", corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever)))
	case rs != corev1.RestartPolicyOnFailure && rs != corev1.RestartPolicyNever:
		errs = append(errs, field.NotSupported(rp, rs, []corev1.RestartPolicy{corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}))
	case s.PodFailurePolicy != nil && rs != corev1.RestartPolicyNever:
		errs = append(errs, field.Invalid(rp, rs, fmt.Sprintf("only %q is supported when podFailurePolicy is specified", corev1.RestartPolicyNever)))
	}
	return errs
}

func validateIndexedJobSpec(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Completions == nil {
		errs = append(errs, field.Required(p.Child("completions"), fmt.Sprintf("when completion mode is %s", batchv1.IndexedCompletion)))
	}
	if s.Parallelism != nil && *s.Parallelism > maxParallelismForIndexedJob {
		errs = append(errs, field.Invalid(p.Child("parallelism"), *s.Parallelism, fmt.Sprintf("must be less than or equal to %d when completion mode is %s", maxParallelismForIndexedJob, batchv1.IndexedCompletion)))
	}
	if s.Completions != nil && s.MaxFailedIndexes != nil && *s.MaxFailedIndexes > *s.Completions {
		errs = append(errs, field.Invalid(p.Child("maxFailedIndexes"), *s.MaxFailedIndexes, "must be less than or equal to completions"))
	}
	if s.MaxFailedIndexes != nil && *s.MaxFailedIndexes > maxFailedIndexesForIndexedJob {
		errs = append(errs, field.Invalid(p.Child("maxFailedIndexes"), *s.MaxFailedIndexes, fmt.Sprintf("must be less than or equal to %d", maxFailedIndexesForIndexedJob)))
	}
	if s.Completions != nil && *s.Completions > completionsSoftLimit && s.BackoffLimitPerIndex != nil {
		if s.MaxFailedIndexes == nil {
			errs = append(errs, field.Required(p.Child("maxFailedIndexes"), fmt.Sprintf("must be specified when completions is above %d", completionsSoftLimit)))
		}
		if s.Parallelism != nil && *s.Parallelism > parallelismLimitForHighCompletions {
			errs = append(errs, field.Invalid(p.Child("parallelism"), *s.Parallelism, fmt.Sprintf("must be less than or equal to %d when completions are above %d and used with backoff limit per index", parallelismLimitForHighCompletions, completionsSoftLimit)))
		}
		if s.MaxFailedIndexes != nil && *s.MaxFailedIndexes > maxFailedIndexesLimitForHighCompletions {
			errs = append(errs, field.Invalid(p.Child("maxFailedIndexes"), *s.MaxFailedIndexes, fmt.Sprintf("must be less than or equal to %d when completions are above %d and used with backoff limit per index", maxFailedIndexesLimitForHighCompletions, completionsSoftLimit)))
		}
	}
	return errs
}

func validatePodFailurePolicy(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	rp := p.Child("rules")
	if n := len(s.PodFailurePolicy.Rules); n > maxPodFailurePolicyRules {
		errs = append(errs, field.TooMany(rp, n, maxPodFailurePolicyRules))
	}
	names := sets.New[string]()
	for _, c := range s.Template.Spec.Containers {
		names.Insert(c.Name)
	}
	for _, c := range s.Template.Spec.InitContainers {
		names.Insert(c.Name)
	}
	for i := range s.PodFailurePolicy.Rules {
		errs = append(errs, validatePodFailurePolicyRule(s, &s.PodFailurePolicy.Rules[i], rp.Index(i), names)...)
	}
	return errs
}

func validatePodReplacementPolicy(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	if s.PodReplacementPolicy == nil {
		return nil
	}
	v := *s.PodReplacementPolicy
	if s.PodFailurePolicy != nil {
		if v != batchv1.Failed {
			return field.ErrorList{field.NotSupported(p, v, []batchv1.PodReplacementPolicy{batchv1.Failed})}
		}
		return nil
	}
	if !podReplacementPolicy.Has(v) {
		return field.ErrorList{field.NotSupported(p, v, sets.List(podReplacementPolicy))}
	}
	return nil
}

func validatePodFailurePolicyRule(s *batchv1.JobSpec, r *batchv1.PodFailurePolicyRule, p *field.Path, names sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	ap := p.Child("action")
	switch {
	case r.Action == "":
		errs = append(errs, field.Required(ap, fmt.Sprintf("valid values: %q", sets.List(podFailurePolicyActions))))
	case r.Action == batchv1.PodFailurePolicyActionFailIndex:
		if s.BackoffLimitPerIndex == nil {
			errs = append(errs, field.Invalid(ap, r.Action, "requires the backoffLimitPerIndex to be set"))
		}
	case !podFailurePolicyActions.Has(r.Action):
		errs = append(errs, field.NotSupported(ap, r.Action, sets.List(podFailurePolicyActions)))
	}
	if r.OnExitCodes != nil {
		errs = append(errs, validateOnExitCodes(r.OnExitCodes, p.Child("onExitCodes"), names)...)
	}
	if len(r.OnPodConditions) > 0 {
		errs = append(errs, validateOnPodConditions(r.OnPodConditions, p.Child("onPodConditions"))...)
	}
	if r.OnExitCodes != nil && len(r.OnPodConditions) > 0 {
		errs = append(errs, field.Invalid(p, field.OmitValueType{}, "specifying both OnExitCodes and OnPodConditions is not supported"))
	}
	if r.OnExitCodes == nil && len(r.OnPodConditions) == 0 {
		errs = append(errs, field.Invalid(p, field.OmitValueType{}, "specifying one of OnExitCodes and OnPodConditions is required"))
	}
	return errs
}

func validateOnPodConditions(ps []batchv1.PodFailurePolicyOnPodConditionsPattern, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(ps) > maxPodFailurePolicyOnPodConditions {
		errs = append(errs, field.TooMany(p, len(ps), maxPodFailurePolicyOnPodConditions))
	}
	for j, pat := range ps {
		pp := p.Index(j)
		errs = append(errs, qualifiedName(string(pat.Type), pp.Child("type"))...)
		sp := pp.Child("status")
		if pat.Status == "" {
			errs = append(errs, field.Required(sp, fmt.Sprintf("valid values: %q", sets.List(onPodConditionStatus))))
		} else if !onPodConditionStatus.Has(pat.Status) {
			errs = append(errs, field.NotSupported(sp, pat.Status, sets.List(onPodConditionStatus)))
		}
	}
	return errs
}

func validateOnExitCodes(r *batchv1.PodFailurePolicyOnExitCodesRequirement, p *field.Path, names sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	op := p.Child("operator")
	if r.Operator == "" {
		errs = append(errs, field.Required(op, fmt.Sprintf("valid values: %q", sets.List(onExitCodesOperators))))
	} else if !onExitCodesOperators.Has(r.Operator) {
		errs = append(errs, field.NotSupported(op, r.Operator, sets.List(onExitCodesOperators)))
	}
	if r.ContainerName != nil && !names.Has(*r.ContainerName) {
		errs = append(errs, field.Invalid(p.Child("containerName"), *r.ContainerName, "must be one of the container or initContainer names in the pod template"))
	}
	vp := p.Child("values")
	if len(r.Values) == 0 {
		errs = append(errs, field.Invalid(vp, r.Values, "at least one value is required"))
	} else if len(r.Values) > maxPodFailurePolicyOnExitCodesValues {
		errs = append(errs, field.TooMany(vp, len(r.Values), maxPodFailurePolicyOnExitCodesValues))
	}
	ordered := true
	seen := sets.New[int32]()
	for j, v := range r.Values {
		if r.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && v == 0 {
			errs = append(errs, field.Invalid(vp.Index(j), v, "must not be 0 for the In operator"))
		}
		if seen.Has(v) {
			errs = append(errs, field.Duplicate(vp.Index(j), v))
		} else {
			seen.Insert(v)
		}
		if j > 0 && r.Values[j-1] > v {
			ordered = false
		}
	}
	if !ordered {
		errs = append(errs, field.Invalid(vp, r.Values, "must be ordered"))
	}
	return errs
}

func validateSuccessPolicy(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	rp := p.Child("rules")
	if len(s.SuccessPolicy.Rules) == 0 {
		errs = append(errs, field.Required(rp, "at least one rules must be specified when the successPolicy is specified"))
	}
	if n := len(s.SuccessPolicy.Rules); n > maxSuccessPolicyRules {
		errs = append(errs, field.TooMany(rp, n, maxSuccessPolicyRules))
	}
	for i := range s.SuccessPolicy.Rules {
		errs = append(errs, validateSuccessPolicyRule(s, &s.SuccessPolicy.Rules[i], rp.Index(i))...)
	}
	return errs
}

func validateSuccessPolicyRule(s *batchv1.JobSpec, r *batchv1.SuccessPolicyRule, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if r.SucceededCount == nil && r.SucceededIndexes == nil {
		errs = append(errs, field.Required(p, "at least one of succeededCount or succeededIndexes must be specified"))
	}
	completions := utilptr.Deref(s.Completions, 0)
	var total int32
	if r.SucceededIndexes != nil {
		ip := p.Child("succeededIndexes")
		if len(*r.SucceededIndexes) > maxSuccessPolicySucceededIndexes {
			errs = append(errs, field.TooLong(ip, "", maxSuccessPolicySucceededIndexes))
		}
		var err error
		if total, err = validateIndexesFormat(*r.SucceededIndexes, completions); err != nil {
			errs = append(errs, field.Invalid(ip, *r.SucceededIndexes, "error parsing succeededIndexes: "+err.Error()))
		}
	}
	if r.SucceededCount != nil {
		cp := p.Child("succeededCount")
		errs = append(errs, nonNegative(int64(*r.SucceededCount), cp)...)
		if *r.SucceededCount > completions {
			errs = append(errs, field.Invalid(cp, *r.SucceededCount, fmt.Sprintf("must be less than or equal to %d (the number of specified completions)", completions)))
		}
		if r.SucceededIndexes != nil && *r.SucceededCount > total {
			errs = append(errs, field.Invalid(cp, *r.SucceededCount, fmt.Sprintf("must be less than or equal to %d (the number of indexes in the specified succeededIndexes field)", total)))
		}
	}
	return errs
}

// validateGangMinCount: a gang's minCount may not exceed the parallelism.
func validateGangMinCount(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	if s.Scheduling == nil || s.Scheduling.SchedulingPolicy == nil || s.Scheduling.SchedulingPolicy.Gang == nil || s.Scheduling.SchedulingPolicy.Gang.MinCount == nil {
		return nil
	}
	minCount, parallelism := *s.Scheduling.SchedulingPolicy.Gang.MinCount, utilptr.Deref(s.Parallelism, 1)
	if minCount <= parallelism {
		return nil
	}
	return field.ErrorList{field.Invalid(p.Child("schedulingPolicy", "gang", "minCount"), minCount, fmt.Sprintf("must not be greater than parallelism (%d)", parallelism))}
}

// validateJobScheduling is the check kube's workload builder makes of a
// Job's scheduling beyond the declarative rules: with the Basic policy
// (the default), disruption cannot be all-or-nothing.
func validateJobScheduling(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	sc := s.Scheduling
	if sc == nil || sc.DisruptionMode == nil || sc.DisruptionMode.All == nil {
		return nil
	}
	if sc.SchedulingPolicy != nil && sc.SchedulingPolicy.Basic == nil {
		return nil
	}
	return field.ErrorList{field.Invalid(p.Child("disruptionMode"), "", "the disruptionMode `all` is not supported with the Basic scheduling policy")}
}

func validateJobUpdate(j, old *batchv1.Job) field.ErrorList {
	_, hadName := old.Spec.Template.Labels[JobNameLabel]
	_, hadUID := old.Spec.Template.Labels[JobControllerUIDLabel]
	suspended := utilptr.Deref(old.Spec.Suspend, false)
	opts := jobOptions{
		allowInvalidLabelValueInSelector: metav1validation.LabelSelectorHasInvalidLabelValue(old.Spec.Selector),
		requirePrefixedLabels:            hadName && hadUID,
		// MutableSchedulingDirectivesForSuspendedJobs (beta, on): a
		// suspended job that has not started, or is suspended again with
		// no active pods.
		allowMutableSchedulingDirectives: suspended && (old.Status.StartTime == nil || jobCondition(old.Status.Conditions, batchv1.JobSuspended, corev1.ConditionTrue)) && old.Status.Active == 0,
	}
	errs := objectMetaUpdate(&j.ObjectMeta, &old.ObjectMeta, metadataPath)
	errs = append(errs, validateJobSpecUpdate(&j.Spec, &old.Spec, field.NewPath("spec"), opts)...)
	return append(errs, validateNameAllowsCompletions(j)...)
}

func validateJobSpecUpdate(s, old *batchv1.JobSpec, p *field.Path, opts jobOptions) field.ErrorList {
	errs := validateJobSpecWithSelector(s, old, p, opts)
	errs = append(errs, validateCompletions(s, old, p.Child("completions"))...)
	errs = append(errs, immutable(s.Selector, old.Selector, p.Child("selector"))...)
	errs = append(errs, validateJobTemplateUpdate(s, old, p, opts)...)
	errs = append(errs, immutable(s.CompletionMode, old.CompletionMode, p.Child("completionMode"))...)
	errs = append(errs, immutable(s.PodFailurePolicy, old.PodFailurePolicy, p.Child("podFailurePolicy"))...)
	errs = append(errs, immutable(s.BackoffLimitPerIndex, old.BackoffLimitPerIndex, p.Child("backoffLimitPerIndex"))...)
	errs = append(errs, immutable(s.ManagedBy, old.ManagedBy, p.Child("managedBy"))...)
	errs = append(errs, immutable(s.SuccessPolicy, old.SuccessPolicy, p.Child("successPolicy"))...)
	return append(errs, validateJobSchedulingUpdate(s, old, p.Child("scheduling"))...)
}

// validateJobSchedulingUpdate: the basic or gang policy is fixed once set.
func validateJobSchedulingUpdate(s, old *batchv1.JobSpec, p *field.Path) field.ErrorList {
	// Declarative rules, which kube reports after the others: scheduling
	// is set at creation or never.
	switch {
	case old.Scheduling == nil && s.Scheduling != nil:
		return field.ErrorList{field.Invalid(p, nil, "field cannot be set once created").WithOrigin("update").MarkBeta()}
	case old.Scheduling != nil && s.Scheduling == nil:
		return field.ErrorList{field.Invalid(p, nil, "field cannot be cleared once set").WithOrigin("update").MarkBeta()}
	case s.Scheduling == nil:
		return nil
	}
	np, op := s.Scheduling.SchedulingPolicy, old.Scheduling.SchedulingPolicy
	if np == nil || op == nil || (op.Basic != nil) == (np.Basic != nil) {
		return nil
	}
	return field.ErrorList{field.Invalid(p.Child("schedulingPolicy"), nil,
		"the basic/gang policy variant is immutable after creation; only schedulingPolicy.gang.minCount may be updated")}
}

// validateJobTemplateUpdate: the template is immutable, except the
// scheduling directives of a suspended job that has not started.
func validateJobTemplateUpdate(s, old *batchv1.JobSpec, p *field.Path, opts jobOptions) field.ErrorList {
	t, ot := &s.Template, &old.Template
	if opts.allowMutableSchedulingDirectives {
		ot = old.Template.DeepCopy()
		switch {
		case t.Spec.Affinity == nil && ot.Spec.Affinity != nil:
			ot.Spec.Affinity.NodeAffinity = nil
			if *ot.Spec.Affinity == (corev1.Affinity{}) {
				ot.Spec.Affinity = nil
			}
		case t.Spec.Affinity != nil && ot.Spec.Affinity == nil:
			ot.Spec.Affinity = &corev1.Affinity{NodeAffinity: t.Spec.Affinity.NodeAffinity}
		case t.Spec.Affinity != nil && ot.Spec.Affinity != nil:
			ot.Spec.Affinity.NodeAffinity = t.Spec.Affinity.NodeAffinity
		}
		ot.Spec.NodeSelector = t.Spec.NodeSelector
		ot.Spec.Tolerations = t.Spec.Tolerations
		ot.Annotations = t.Annotations
		ot.Labels = t.Labels
		ot.Spec.SchedulingGates = t.Spec.SchedulingGates
	}
	// MutablePodResourcesForSuspendedJobs is alpha (off): suspended or
	// not, the rest of the template is immutable.
	return immutable(t, ot, p.Child("template"))
}

// validateCompletions: completions are immutable, except that an Indexed
// Job may change them together with parallelism.
func validateCompletions(s, old *batchv1.JobSpec, p *field.Path) field.ErrorList {
	if utilptr.Deref(s.CompletionMode, "") != batchv1.IndexedCompletion {
		return immutable(s.Completions, old.Completions, p)
	}
	if apiequality.Semantic.DeepEqual(s.Completions, old.Completions) || s.Completions == nil {
		return nil
	}
	if *s.Completions != utilptr.Deref(s.Parallelism, 0) {
		return field.ErrorList{field.Invalid(p, s.Completions, fmt.Sprintf("can only be modified in tandem with %s", p.Root().Child("parallelism").String()))}
	}
	return nil
}

func jobCondition(cs []batchv1.JobCondition, t batchv1.JobConditionType, status corev1.ConditionStatus) bool {
	for _, c := range cs {
		if c.Type == t && c.Status == status {
			return true
		}
	}
	return false
}

func jobTrue(j *batchv1.Job, t batchv1.JobConditionType) bool {
	return jobCondition(j.Status.Conditions, t, corev1.ConditionTrue)
}

func jobFinished(j *batchv1.Job) bool {
	return jobTrue(j, batchv1.JobComplete) || jobTrue(j, batchv1.JobFailed)
}

// jobStatusOptions are kube's JobStatusValidationOptions as the Job status
// strategy sets them with JobManagedBy on: most checks apply only when the
// fields they look at change.
type jobStatusOptions struct {
	rejectDecreasingSucceeded, rejectInvalidCompletedIndexes, rejectInvalidFailedIndexes  bool
	rejectCompletedIndexesForNonIndexed, rejectFailedIndexesWithoutLimit                  bool
	rejectFailedIndexesOverlap, rejectFailedWithoutFailureTarget                          bool
	rejectCompleteWithoutSuccessCriteria, rejectFinishedWithActive                        bool
	rejectFinishedWithoutStartTime, rejectFinishedWithUncounted, rejectStartTimeUpdate    bool
	rejectCompletionBeforeStart, rejectNotCompleteWithCompletionTime                      bool
	rejectCompleteWithoutCompletionTime, rejectCompleteWithFailed                         bool
	rejectCompleteWithFailureTarget, rejectMoreReadyThanActive, rejectFinishedTerminating bool
}

func statusOptions(j, old *batchv1.Job) jobStatusOptions {
	ns, os := &j.Status, &old.Status
	indexed := utilptr.Deref(j.Spec.CompletionMode, "") == batchv1.IndexedCompletion
	finishedChanged := jobFinished(old) != jobFinished(j)
	completeChanged := jobTrue(old, batchv1.JobComplete) != jobTrue(j, batchv1.JobComplete)
	failedChanged := jobTrue(old, batchv1.JobFailed) != jobTrue(j, batchv1.JobFailed)
	failureTargetChanged := jobTrue(old, batchv1.JobFailureTarget) != jobTrue(j, batchv1.JobFailureTarget)
	successCriteriaChanged := jobTrue(old, batchv1.JobSuccessCriteriaMet) != jobTrue(j, batchv1.JobSuccessCriteriaMet)
	completedIndexesChanged := os.CompletedIndexes != ns.CompletedIndexes
	failedIndexesChanged := !utilptr.Equal(os.FailedIndexes, ns.FailedIndexes)
	activeChanged := os.Active != ns.Active
	startChanged := !timeEqual(os.StartTime, ns.StartTime)
	completionChanged := !timeEqual(os.CompletionTime, ns.CompletionTime)
	uncountedChanged := !apiequality.Semantic.DeepEqual(os.UncountedTerminatedPods, ns.UncountedTerminatedPods)
	readyChanged := !utilptr.Equal(os.Ready, ns.Ready)
	terminatingChanged := !utilptr.Equal(os.Terminating, ns.Terminating)
	suspendedWithZero := utilptr.Deref(j.Spec.Suspend, false) && j.Spec.Completions != nil && *j.Spec.Completions == 0
	resuming := jobTrue(old, batchv1.JobSuspended) && jobCondition(ns.Conditions, batchv1.JobSuspended, corev1.ConditionFalse)
	return jobStatusOptions{
		rejectDecreasingSucceeded:            !indexed || !utilptr.Equal(j.Spec.Completions, j.Spec.Parallelism),
		rejectInvalidCompletedIndexes:        completedIndexesChanged,
		rejectInvalidFailedIndexes:           failedIndexesChanged,
		rejectCompletedIndexesForNonIndexed:  completedIndexesChanged,
		rejectFailedIndexesWithoutLimit:      failedIndexesChanged,
		rejectFailedIndexesOverlap:           failedIndexesChanged || completedIndexesChanged,
		rejectFailedWithoutFailureTarget:     failedChanged || failedIndexesChanged,
		rejectCompleteWithoutSuccessCriteria: completeChanged || successCriteriaChanged,
		rejectFinishedWithActive:             finishedChanged || activeChanged,
		rejectFinishedWithoutStartTime:       (finishedChanged || startChanged) && !suspendedWithZero,
		rejectFinishedWithUncounted:          finishedChanged || uncountedChanged,
		rejectStartTimeUpdate:                startChanged && !resuming,
		rejectCompletionBeforeStart:          startChanged || completionChanged,
		rejectNotCompleteWithCompletionTime:  completeChanged || completionChanged,
		rejectCompleteWithoutCompletionTime:  completeChanged || completionChanged,
		rejectCompleteWithFailed:             completeChanged || failedChanged,
		rejectCompleteWithFailureTarget:      completeChanged || failureTargetChanged,
		rejectMoreReadyThanActive:            readyChanged || activeChanged,
		rejectFinishedTerminating:            finishedChanged || terminatingChanged,
	}
}

// timeEqual is utilptr.Equal on *metav1.Time: the pointed-to values compared
// with ==, which for metav1.Time compares the time.Time structs.
func timeEqual(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func validateJobStatusUpdate(j, old *batchv1.Job) field.ErrorList {
	opts := statusOptions(j, old)
	errs := objectMetaUpdate(&j.ObjectMeta, &old.ObjectMeta, metadataPath)
	sp := field.NewPath("status")
	errs = append(errs, validateJobStatus(j, sp, opts)...)
	for _, t := range []batchv1.JobConditionType{batchv1.JobFailed, batchv1.JobComplete, batchv1.JobFailureTarget} {
		if jobTrue(old, t) && !jobTrue(j, t) {
			errs = append(errs, field.Invalid(sp.Child("conditions"), field.OmitValueType{}, fmt.Sprintf("cannot disable the terminal %s=True condition", t)))
		}
	}
	if j.Status.Failed < old.Status.Failed {
		errs = append(errs, field.Invalid(sp.Child("failed"), j.Status.Failed, "cannot decrease the failed counter"))
	}
	if opts.rejectDecreasingSucceeded && j.Status.Succeeded < old.Status.Succeeded {
		errs = append(errs, field.Invalid(sp.Child("succeeded"), j.Status.Succeeded, "cannot decrease the succeeded counter"))
	}
	if ct, oct := j.Status.CompletionTime, old.Status.CompletionTime; ct != nil && oct != nil && !timeEqual(ct, oct) {
		errs = append(errs, field.Invalid(sp.Child("completionTime"), ct, "field is immutable"))
	}
	if opts.rejectStartTimeUpdate && old.Status.StartTime != nil && !timeEqual(old.Status.StartTime, j.Status.StartTime) && !utilptr.Deref(j.Spec.Suspend, false) {
		errs = append(errs, field.Invalid(sp.Child("startTime"), j.Status.StartTime, "field is immutable for unsuspended job once set"))
	}
	if jobTrue(old, batchv1.JobSuccessCriteriaMet) && !jobTrue(j, batchv1.JobSuccessCriteriaMet) {
		errs = append(errs, field.Invalid(sp.Child("conditions"), field.OmitValueType{}, "cannot disable the SuccessCriteriaMet=True condition"))
	}
	if jobTrue(old, batchv1.JobComplete) && !jobTrue(old, batchv1.JobSuccessCriteriaMet) && jobTrue(j, batchv1.JobSuccessCriteriaMet) {
		errs = append(errs, field.Invalid(sp.Child("conditions"), field.OmitValueType{}, "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions"))
	}
	return errs
}

func validateJobStatus(j *batchv1.Job, p *field.Path, opts jobStatusOptions) field.ErrorList {
	s := &j.Status
	errs := nonNegative(int64(s.Active), p.Child("active"))
	errs = append(errs, nonNegative(int64(s.Succeeded), p.Child("succeeded"))...)
	errs = append(errs, nonNegative(int64(s.Failed), p.Child("failed"))...)
	if s.Ready != nil {
		errs = append(errs, nonNegative(int64(*s.Ready), p.Child("ready"))...)
	}
	if s.Terminating != nil {
		errs = append(errs, nonNegative(int64(*s.Terminating), p.Child("terminating"))...)
	}
	if u := s.UncountedTerminatedPods; u != nil {
		up := p.Child("uncountedTerminatedPods")
		seen := sets.New[types.UID]()
		check := func(list []types.UID, lp *field.Path) {
			for i, k := range list {
				switch {
				case k == "":
					errs = append(errs, field.Invalid(lp.Index(i), k, "must not be empty"))
				case seen.Has(k):
					errs = append(errs, field.Duplicate(lp.Index(i), k))
				default:
					seen.Insert(k)
				}
			}
		}
		check(u.Succeeded, up.Child("succeeded"))
		check(u.Failed, up.Child("failed"))
	}
	complete, failed := jobTrue(j, batchv1.JobComplete), jobTrue(j, batchv1.JobFailed)
	failureTarget, successMet := jobTrue(j, batchv1.JobFailureTarget), jobTrue(j, batchv1.JobSuccessCriteriaMet)
	cp := p.Child("conditions")
	if opts.rejectCompleteWithFailed && complete && failed {
		errs = append(errs, field.Invalid(cp, field.OmitValueType{}, "cannot set Complete=True and Failed=true conditions"))
	}
	if opts.rejectCompleteWithFailureTarget && complete && failureTarget {
		errs = append(errs, field.Invalid(cp, field.OmitValueType{}, "cannot set Complete=True and FailureTarget=true conditions"))
	}
	if opts.rejectNotCompleteWithCompletionTime && s.CompletionTime != nil && !complete {
		errs = append(errs, field.Invalid(p.Child("completionTime"), s.CompletionTime, "cannot set completionTime when there is no Complete=True condition"))
	}
	if opts.rejectCompleteWithoutCompletionTime && s.CompletionTime == nil && complete {
		errs = append(errs, field.Required(p.Child("completionTime"), "completionTime is required for Complete jobs"))
	}
	if opts.rejectCompletionBeforeStart && s.StartTime != nil && s.CompletionTime != nil && s.CompletionTime.Before(s.StartTime) {
		errs = append(errs, field.Invalid(p.Child("completionTime"), s.CompletionTime, "must be equal to or after `startTime`"))
	}
	if opts.rejectFailedWithoutFailureTarget && failed && !failureTarget {
		errs = append(errs, field.Invalid(cp, field.OmitValueType{}, "cannot set Failed=True condition without the FailureTarget=true condition"))
	}
	if opts.rejectCompleteWithoutSuccessCriteria && complete && !successMet {
		errs = append(errs, field.Invalid(cp, field.OmitValueType{}, "cannot set Complete=True condition without the SuccessCriteriaMet=true condition"))
	}
	finished := jobFinished(j)
	if opts.rejectFinishedWithActive && s.Active > 0 && finished {
		errs = append(errs, field.Invalid(p.Child("active"), s.Active, "active>0 is invalid for finished job"))
	}
	if opts.rejectFinishedWithoutStartTime && s.StartTime == nil && finished {
		errs = append(errs, field.Required(p.Child("startTime"), "startTime is required for finished job"))
	}
	if opts.rejectFinishedWithUncounted && finished && s.UncountedTerminatedPods != nil && len(s.UncountedTerminatedPods.Failed)+len(s.UncountedTerminatedPods.Succeeded) > 0 {
		errs = append(errs, field.Invalid(p.Child("uncountedTerminatedPods"), internal{s.UncountedTerminatedPods}, "must be empty for finished job"))
	}
	if opts.rejectInvalidCompletedIndexes && j.Spec.Completions != nil {
		if _, err := validateIndexesFormat(s.CompletedIndexes, *j.Spec.Completions); err != nil {
			errs = append(errs, field.Invalid(p.Child("completedIndexes"), s.CompletedIndexes, "error parsing completedIndexes: "+err.Error()))
		}
	}
	if opts.rejectInvalidFailedIndexes && j.Spec.Completions != nil && j.Spec.BackoffLimitPerIndex != nil && s.FailedIndexes != nil {
		if _, err := validateIndexesFormat(*s.FailedIndexes, *j.Spec.Completions); err != nil {
			errs = append(errs, field.Invalid(p.Child("failedIndexes"), s.FailedIndexes, "error parsing failedIndexes: "+err.Error()))
		}
	}
	indexed := utilptr.Deref(j.Spec.CompletionMode, "") == batchv1.IndexedCompletion
	if opts.rejectCompletedIndexesForNonIndexed && len(s.CompletedIndexes) != 0 && !indexed {
		errs = append(errs, field.Invalid(p.Child("completedIndexes"), s.CompletedIndexes, "cannot set non-empty completedIndexes when non-indexed completion mode"))
	}
	if opts.rejectFailedIndexesWithoutLimit && j.Spec.BackoffLimitPerIndex == nil && s.FailedIndexes != nil {
		errs = append(errs, field.Invalid(p.Child("failedIndexes"), *s.FailedIndexes, "cannot set non-null failedIndexes when backoffLimitPerIndex is null"))
	}
	if opts.rejectFailedIndexesOverlap && j.Spec.Completions != nil && s.FailedIndexes != nil {
		if err := failedIndexesOverlapCompleted(s.CompletedIndexes, *s.FailedIndexes, *j.Spec.Completions); err != nil {
			errs = append(errs, field.Invalid(p.Child("failedIndexes"), *s.FailedIndexes, err.Error()))
		}
	}
	if opts.rejectFinishedTerminating && s.Terminating != nil && *s.Terminating > 0 && finished {
		errs = append(errs, field.Invalid(p.Child("terminating"), s.Terminating, "terminating>0 is invalid for finished job"))
	}
	if opts.rejectMoreReadyThanActive && s.Ready != nil && *s.Ready > s.Active {
		errs = append(errs, field.Invalid(p.Child("ready"), *s.Ready, "cannot set more ready pods than active"))
	}
	if successMet && failed {
		errs = append(errs, field.Invalid(cp, field.OmitValueType{}, "cannot set SuccessCriteriaMet=True and Failed=true conditions"))
	}
	if successMet && failureTarget {
		errs = append(errs, field.Invalid(cp, field.OmitValueType{}, "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions"))
	}
	if j.Spec.SuccessPolicy != nil && !successMet && complete {
		errs = append(errs, field.Invalid(cp, field.OmitValueType{}, "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True"))
	}
	return errs
}

func failedIndexesOverlapCompleted(completed, failed string, completions int32) error {
	if completed == "" || failed == "" {
		return nil
	}
	cs, fs := strings.Split(completed, ","), strings.Split(failed, ",")
	var ci, fi int
	cx, cy, cerr := parseIndexInterval(cs[ci], completions)
	fx, fy, ferr := parseIndexInterval(fs[fi], completions)
	for ci < len(cs) && fi < len(fs) {
		switch {
		case cerr != nil:
			ci++
			if ci < len(cs) {
				cx, cy, cerr = parseIndexInterval(cs[ci], completions)
			}
		case ferr != nil:
			fi++
			if fi < len(fs) {
				fx, fy, ferr = parseIndexInterval(fs[fi], completions)
			}
		default:
			if cx <= fy && fx <= cy {
				return fmt.Errorf("failedIndexes and completedIndexes overlap at index: %d", max(cx, fx))
			}
			if cx <= fx {
				ci++
				if ci < len(cs) {
					cx, cy, cerr = parseIndexInterval(cs[ci], completions)
				}
			} else {
				fi++
				if fi < len(fs) {
					fx, fy, ferr = parseIndexInterval(fs[fi], completions)
				}
			}
		}
	}
	return nil
}

func validateIndexesFormat(s string, completions int32) (int32, error) {
	if s == "" {
		return 0, nil
	}
	var last *int32
	var total int32
	for _, iv := range strings.Split(s, ",") {
		x, y, err := parseIndexInterval(iv, completions)
		if err != nil {
			return 0, err
		}
		if last != nil && *last >= x {
			return 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", *last, x)
		}
		total += y - x + 1
		last = &y
	}
	return total, nil
}

func parseIndexInterval(s string, completions int32) (int32, int32, error) {
	parts := strings.Split(s, "-")
	if len(parts) > 2 {
		return 0, 0, fmt.Errorf("the fragment %q violates the requirement that an index interval can have at most two parts separated by '-'", s)
	}
	x, err := strconv.Atoi(parts[0])
	if err != nil {
		return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", parts[0])
	}
	if x >= int(completions) {
		return 0, 0, fmt.Errorf("too large index: %q", parts[0])
	}
	if len(parts) == 1 {
		return int32(x), int32(x), nil
	}
	y, err := strconv.Atoi(parts[1])
	if err != nil {
		return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", parts[1])
	}
	if y >= int(completions) {
		return 0, 0, fmt.Errorf("too large index: %q", parts[1])
	}
	if x >= y {
		return 0, 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", x, y)
	}
	return int32(x), int32(y), nil
}

// --- CronJob ---

func validateCronJob(c *batchv1.CronJob) field.ErrorList {
	errs := objectMeta(&c.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	errs = append(errs, validateCronJobSpec(&c.Spec, nil, field.NewPath("spec"))...)
	// The controller names each Job <name>-<11 characters>, and a Job's
	// name must stay a 63-character label.
	if len(c.Name) > validation.DNS1035LabelMaxLength-11 {
		errs = append(errs, field.Invalid(metadataPath.Child("name"), c.Name, "must be no more than 52 characters"))
	}
	return errs
}

// validateCronJobUpdate skips the name length, so that older cron jobs
// with longer names can still be changed and deleted.
func validateCronJobUpdate(c, old *batchv1.CronJob) field.ErrorList {
	errs := objectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta, metadataPath)
	return append(errs, validateCronJobSpec(&c.Spec, &old.Spec, field.NewPath("spec"))...)
}

// validateCronJobStatusUpdate: kube checks nothing in a CronJob's status
// beyond the metadata.
func validateCronJobStatusUpdate(c, old *batchv1.CronJob) field.ErrorList {
	return nil
}

func validateCronJobSpec(s, old *batchv1.CronJobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Schedule == "" {
		// A declarative rule at beta: kube reports it after the others.
		errs = append(errs, field.Required(p.Child("schedule"), "").MarkBeta())
	} else {
		allowTZ := old != nil && strings.Contains(old.Schedule, "TZ")
		errs = append(errs, validateSchedule(s.Schedule, allowTZ, s.TimeZone, p.Child("schedule"))...)
	}
	if s.StartingDeadlineSeconds != nil {
		errs = append(errs, nonNegative(*s.StartingDeadlineSeconds, p.Child("startingDeadlineSeconds"))...)
	}
	if old == nil || !utilptr.Equal(old.TimeZone, s.TimeZone) {
		errs = append(errs, validateTimeZone(s.TimeZone, p.Child("timeZone"))...)
	}
	errs = append(errs, validateConcurrencyPolicy(s.ConcurrencyPolicy, p.Child("concurrencyPolicy"))...)
	var oldTemplate *batchv1.JobSpec
	if old != nil {
		oldTemplate = &old.JobTemplate.Spec
	}
	errs = append(errs, validateJobTemplateSpec(&s.JobTemplate, oldTemplate, p.Child("jobTemplate"))...)
	if s.SuccessfulJobsHistoryLimit != nil {
		errs = append(errs, nonNegative(int64(*s.SuccessfulJobsHistoryLimit), p.Child("successfulJobsHistoryLimit"))...)
	}
	if s.FailedJobsHistoryLimit != nil {
		errs = append(errs, nonNegative(int64(*s.FailedJobsHistoryLimit), p.Child("failedJobsHistoryLimit"))...)
	}
	return errs
}

func validateConcurrencyPolicy(v batchv1.ConcurrencyPolicy, p *field.Path) field.ErrorList {
	switch v {
	case batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent:
		return nil
	case "":
		return field.ErrorList{field.Required(p, "")}
	}
	return field.ErrorList{field.NotSupported(p, v, []batchv1.ConcurrencyPolicy{batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent})}
}

// ParseCronSchedule parses a schedule as kube does: robfig/cron's standard
// five-field parser with descriptors (@hourly, @every 1h) and an optional
// TZ= or CRON_TZ= prefix, its panics on malformed input turned into errors.
func ParseCronSchedule(schedule string) (sched cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("invalid schedule format: %v", r)
		}
	}()
	return cron.ParseStandard(schedule)
}

func validateSchedule(schedule string, allowTZ bool, timeZone *string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if _, err := ParseCronSchedule(schedule); err != nil {
		errs = append(errs, field.Invalid(p, schedule, err.Error()))
	}
	hasTZ := strings.Contains(schedule, "TZ")
	switch {
	case allowTZ && hasTZ && timeZone != nil:
		errs = append(errs, field.Invalid(p, schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
	case !allowTZ && hasTZ:
		errs = append(errs, field.Invalid(p, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
	}
	return errs
}

// validTimeZonePart is one part of an IANA zone name, with the digits and
// '+' of legacy names tolerated.
var validTimeZonePart = regexp.MustCompile(`^[A-Za-z\.\-_0-9+]{1,14}$`)

func validateTimeZone(tz *string, p *field.Path) field.ErrorList {
	if tz == nil {
		return nil
	}
	if *tz == "" {
		return field.ErrorList{field.Invalid(p, tz, "timeZone must be nil or non-empty string")}
	}
	for _, part := range strings.Split(*tz, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !validTimeZonePart.MatchString(part) {
			return field.ErrorList{field.Invalid(p, tz, "unknown time zone "+*tz)}
		}
	}
	var errs field.ErrorList
	if strings.EqualFold(*tz, "Local") {
		errs = append(errs, field.Invalid(p, tz, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))
	}
	if _, err := time.LoadLocation(*tz); err != nil {
		errs = append(errs, field.Invalid(p, tz, err.Error()))
	}
	return errs
}

// validateJobTemplateSpec: a cron job's job template is a job spec whose
// selector is always generated.
func validateJobTemplateSpec(t *batchv1.JobTemplateSpec, old *batchv1.JobSpec, p *field.Path) field.ErrorList {
	errs := validateJobSpec(&t.Spec, old, p.Child("spec"))
	if t.Spec.Selector != nil {
		errs = append(errs, field.Invalid(p.Child("spec", "selector"), t.Spec.Selector, "`selector` will be auto-generated"))
	}
	if utilptr.Deref(t.Spec.ManualSelector, false) {
		errs = append(errs, field.NotSupported(p.Child("spec", "manualSelector"), t.Spec.ManualSelector, []string{"nil", "false"}))
	}
	return errs
}

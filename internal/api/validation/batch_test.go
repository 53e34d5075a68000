package validation

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var batchGK = func(kind string) schema.GroupKind { return schema.GroupKind{Group: "batch", Kind: kind} }

// job is a Job as kube stores it after defaulting and its strategy: a
// generated selector and the four template labels.
func job(mut ...func(*batchv1.Job)) *batchv1.Job {
	spec := podSpec()
	spec.RestartPolicy = corev1.RestartPolicyNever
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "default", UID: "u1"},
		Spec: batchv1.JobSpec{
			Parallelism:          ptr(int32(1)),
			Completions:          ptr(int32(1)),
			BackoffLimit:         ptr(int32(6)),
			CompletionMode:       ptr(batchv1.NonIndexedCompletion),
			Suspend:              ptr(false),
			PodReplacementPolicy: ptr(batchv1.TerminatingOrFailed),
			ManualSelector:       ptr(false),
			Selector:             &metav1.LabelSelector{MatchLabels: map[string]string{JobControllerUIDLabel: "u1"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
					JobControllerUIDLabel: "u1", JobNameLabel: "pi", LegacyJobControllerUIDLabel: "u1", LegacyJobNameLabel: "pi",
				}},
				Spec: spec,
			},
		},
	}
	for _, m := range mut {
		m(j)
	}
	return j
}

func rename(j *batchv1.Job, name string) {
	j.Name = name
	j.Spec.Template.Labels[JobNameLabel] = name
	j.Spec.Template.Labels[LegacyJobNameLabel] = name
}

func indexed(completions, parallelism int32) func(*batchv1.Job) {
	return func(j *batchv1.Job) {
		j.Spec.CompletionMode = ptr(batchv1.IndexedCompletion)
		j.Spec.Completions = ptr(completions)
		j.Spec.Parallelism = ptr(parallelism)
	}
}

func cronJob(mut ...func(*batchv1.CronJob)) *batchv1.CronJob {
	spec := podSpec()
	spec.RestartPolicy = corev1.RestartPolicyOnFailure
	c := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default"},
		Spec: batchv1.CronJobSpec{
			Schedule:                   "*/1 * * * *",
			ConcurrencyPolicy:          batchv1.AllowConcurrent,
			Suspend:                    ptr(false),
			SuccessfulJobsHistoryLimit: ptr(int32(3)),
			FailedJobsHistoryLimit:     ptr(int32(1)),
			JobTemplate:                batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: spec}}},
		},
	}
	for _, m := range mut {
		m(c)
	}
	return c
}

func TestJob(t *testing.T) {
	gk := batchGK("Job")
	start := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	check(t, []testCase{
		{name: "valid", obj: job(), gk: gk},
		{name: "restartPolicy Always", obj: job(func(j *batchv1.Job) { j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways }), gk: gk,
			want: `Job.batch "pi" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"`},
		{name: "podFailurePolicy needs Never", obj: job(func(j *batchv1.Job) {
			j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
			j.Spec.PodReplacementPolicy = ptr(batchv1.Failed)
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{1}},
			}}}
		}), gk: gk,
			want: `Job.batch "pi" is invalid: spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified`},
		{name: "podFailurePolicy rules", obj: job(func(j *batchv1.Job) {
			j.Spec.PodReplacementPolicy = ptr(batchv1.TerminatingOrFailed)
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				{Action: "Explode", OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{0, 3, 2, 2}, ContainerName: ptr("nope")}},
				{Action: batchv1.PodFailurePolicyActionIgnore},
			}}
		}), gk: gk,
			want: `Job.batch "pi" is invalid: [` +
				`spec.podFailurePolicy.rules[0].action: Unsupported value: "Explode": supported values: "Count", "FailIndex", "FailJob", "Ignore", ` +
				`spec.podFailurePolicy.rules[0].onExitCodes.containerName: Invalid value: "nope": must be one of the container or initContainer names in the pod template, ` +
				`spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator, ` +
				`spec.podFailurePolicy.rules[0].onExitCodes.values[3]: Duplicate value: 2, ` +
				`spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: [0,3,2,2]: must be ordered, ` +
				`spec.podFailurePolicy.rules[1]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required, ` +
				`spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: "Failed"]`},
		{name: "negative counts", obj: job(func(j *batchv1.Job) {
			j.Spec.Parallelism, j.Spec.BackoffLimit, j.Spec.ActiveDeadlineSeconds = ptr(int32(-1)), ptr(int32(-2)), ptr(int64(-3))
		}), gk: gk,
			want: `Job.batch "pi" is invalid: [spec.parallelism: Invalid value: -1: must be greater than or equal to 0, spec.activeDeadlineSeconds: Invalid value: -3: must be greater than or equal to 0, spec.backoffLimit: Invalid value: -2: must be greater than or equal to 0]`},
		{name: "indexed without completions", obj: job(indexed(1, 1), func(j *batchv1.Job) { j.Spec.Completions = nil }), gk: gk,
			want: `Job.batch "pi" is invalid: spec.completions: Required value: when completion mode is Indexed`},
		{name: "unknown completion mode", obj: job(func(j *batchv1.Job) { j.Spec.CompletionMode = ptr(batchv1.CompletionMode("Sometimes")) }), gk: gk,
			want: `Job.batch "pi" is invalid: spec.completionMode: Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"`},
		{name: "per-index limit needs indexed", obj: job(func(j *batchv1.Job) { j.Spec.BackoffLimitPerIndex = ptr(int32(1)) }), gk: gk,
			want: `Job.batch "pi" is invalid: spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode`},
		{name: "maxFailedIndexes needs per-index limit", obj: job(indexed(5, 1), func(j *batchv1.Job) { j.Spec.MaxFailedIndexes = ptr(int32(6)) }), gk: gk,
			want: `Job.batch "pi" is invalid: [spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified, spec.maxFailedIndexes: Invalid value: 6: must be less than or equal to completions]`},
		{name: "successPolicy needs indexed", obj: job(func(j *batchv1.Job) {
			j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr(int32(1))}}}
		}), gk: gk,
			// The value renders as kube's internal type, with Go field names.
			want: `Job.batch "pi" is invalid: spec.successPolicy: Invalid value: {"Rules":[{"SucceededIndexes":null,"SucceededCount":1}]}: requires indexed completion mode`},
		{name: "successPolicy indexes", obj: job(indexed(3, 1), func(j *batchv1.Job) {
			j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: ptr("0-5"), SucceededCount: ptr(int32(4))}}}
		}), gk: gk,
			want: `Job.batch "pi" is invalid: [spec.successPolicy.rules[0].succeededIndexes: Invalid value: "0-5": error parsing succeededIndexes: too large index: "5", spec.successPolicy.rules[0].succeededCount: Invalid value: 4: must be less than or equal to 3 (the number of specified completions), spec.successPolicy.rules[0].succeededCount: Invalid value: 4: must be less than or equal to 0 (the number of indexes in the specified succeededIndexes field)]`},
		{name: "wrong generated label", obj: job(func(j *batchv1.Job) { j.Spec.Template.Labels[LegacyJobControllerUIDLabel] = "other" }), gk: gk,
			want: `Job.batch "pi" is invalid: spec.template.metadata.labels[controller-uid]: Invalid value: {"batch.kubernetes.io/controller-uid":"u1","batch.kubernetes.io/job-name":"pi","controller-uid":"other","job-name":"pi"}: must be 'u1'`},
		{name: "missing generated labels", obj: job(func(j *batchv1.Job) { j.Spec.Template.Labels = map[string]string{JobControllerUIDLabel: "u1"} }), gk: gk,
			want: `Job.batch "pi" is invalid: [spec.template.metadata.labels[controller-uid]: Required value: must be 'u1', spec.template.metadata.labels[job-name]: Required value: must be 'pi', spec.template.metadata.labels[batch.kubernetes.io/job-name]: Required value: must be 'pi']`},
		{name: "selector not generated", obj: job(func(j *batchv1.Job) {
			j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{JobControllerUIDLabel: "u1", "app": "x"}}
			j.Spec.Template.Labels["app"] = "x"
		}), gk: gk,
			want: "Job.batch \"pi\" is invalid: spec.selector: Invalid value: {\"matchLabels\":{\"app\":\"x\",\"batch.kubernetes.io/controller-uid\":\"u1\"}}: `selector` not auto-generated"},
		{name: "no selector", obj: job(func(j *batchv1.Job) { j.Spec.Selector = nil }), gk: gk,
			want: "Job.batch \"pi\" is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid value: {\"batch.kubernetes.io/controller-uid\":\"u1\",\"batch.kubernetes.io/job-name\":\"pi\",\"controller-uid\":\"u1\",\"job-name\":\"pi\"}: `selector` does not match template `labels`]"},
		{name: "manual selector must match", obj: job(func(j *batchv1.Job) {
			j.Spec.ManualSelector = ptr(true)
			j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
			j.Spec.Template.Labels = map[string]string{"app": "y"}
		}), gk: gk,
			want: "Job.batch \"pi\" is invalid: spec.template.metadata.labels: Invalid value: {\"app\":\"y\"}: `selector` does not match template `labels`"},
		{name: "manual selector", obj: job(func(j *batchv1.Job) {
			j.Spec.ManualSelector = ptr(true)
			j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
			j.Spec.Template.Labels = map[string]string{"app": "x"}
		}), gk: gk},
		{name: "indexed hostname too long", obj: job(indexed(10, 1), func(j *batchv1.Job) { rename(j, strings.Repeat("a", 62)) }), gk: gk,
			want: `Job.batch "` + strings.Repeat("a", 62) + `" is invalid: metadata.name: Invalid value: "` + strings.Repeat("a", 62) + `": will not able to create pod with invalid DNS label: ` + strings.Repeat("a", 62) + `-9`},
		{name: "managedBy", obj: job(func(j *batchv1.Job) { j.Spec.ManagedBy = ptr("no-domain") }), gk: gk,
			want: `Job.batch "pi" is invalid: spec.managedBy: Invalid value: "no-domain": must be a domain-prefixed path (such as "acme.io/foo")`},

		{name: "gang larger than parallelism", obj: job(func(j *batchv1.Job) {
			j.Spec.Scheduling = &batchv1.JobSchedulingConfiguration{SchedulingPolicy: &schedulingv1alpha3.WorkloadPodGroupSchedulingPolicy{
				Gang: &schedulingv1alpha3.WorkloadPodGroupGangSchedulingPolicy{MinCount: ptr(int32(3))}}}
		}), gk: gk,
			want: `Job.batch "pi" is invalid: spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 3: must not be greater than parallelism (1)`},
		{name: "basic policy with all-or-nothing disruption", obj: job(func(j *batchv1.Job) {
			j.Spec.Scheduling = &batchv1.JobSchedulingConfiguration{DisruptionMode: &schedulingv1alpha3.WorkloadPodGroupDisruptionMode{All: &schedulingv1alpha3.WorkloadPodGroupAllDisruptionMode{}}}
		}), gk: gk,
			want: "Job.batch \"pi\" is invalid: spec.scheduling.disruptionMode: Invalid value: \"\": the disruptionMode `all` is not supported with the Basic scheduling policy"},

		// Updates.
		{name: "scheduling cannot be added", op: update, old: job(),
			obj: withRV(job(func(j *batchv1.Job) {
				j.Spec.Completions = ptr(int32(2))
				j.Spec.Scheduling = &batchv1.JobSchedulingConfiguration{}
			})), gk: gk,
			want: `Job.batch "pi" is invalid: [spec.completions: Invalid value: 2: field is immutable, spec.scheduling: Invalid value: null: field cannot be set once created]`},
		{name: "template is immutable", op: update, old: job(),
			obj: withRV(job(func(j *batchv1.Job) { j.Spec.Template.Spec.Containers[0].Image = "busybox" })), gk: gk,
			prefix: `Job.batch "pi" is invalid: spec.template: Invalid value: {"labels":{"batch.kubernetes.io/controller-uid":"u1","batch.kubernetes.io/job-name":"pi","controller-uid":"u1","job-name":"pi"},"Spec":{"Volumes":null,"InitContainers":null,"Containers":[{"Name":"c","Image":"busybox","Command":null,`},
		{name: "completions are immutable", op: update, old: job(),
			obj: withRV(job(func(j *batchv1.Job) { j.Spec.Completions = ptr(int32(2)) })), gk: gk,
			want: `Job.batch "pi" is invalid: spec.completions: Invalid value: 2: field is immutable`},
		{name: "indexed completions alone", op: update, old: job(indexed(2, 2)),
			obj: withRV(job(indexed(3, 2))), gk: gk,
			want: `Job.batch "pi" is invalid: spec.completions: Invalid value: 3: can only be modified in tandem with spec.parallelism`},
		{name: "indexed completions with parallelism", op: update, old: job(indexed(2, 2)), obj: withRV(job(indexed(3, 3))), gk: gk},
		{name: "parallelism is mutable", op: update, old: job(), obj: withRV(job(func(j *batchv1.Job) { j.Spec.Parallelism = ptr(int32(5)) })), gk: gk},
		{name: "completion mode is immutable", op: update, old: job(),
			obj: withRV(job(indexed(1, 1))), gk: gk,
			want: `Job.batch "pi" is invalid: spec.completionMode: Invalid value: "Indexed": field is immutable`},
		{name: "suspended job not started: scheduling directives", op: update,
			old: job(func(j *batchv1.Job) { j.Spec.Suspend = ptr(true) }),
			obj: withRV(job(func(j *batchv1.Job) {
				j.Spec.Suspend = ptr(true)
				j.Spec.Template.Spec.NodeSelector = map[string]string{"zone": "a"}
				j.Spec.Template.Annotations = map[string]string{"a": "b"}
			})), gk: gk},
		{name: "running job: scheduling directives", op: update,
			old: job(func(j *batchv1.Job) { j.Spec.Suspend = ptr(true); j.Status.StartTime = &start; j.Status.Active = 1 }),
			obj: withRV(job(func(j *batchv1.Job) {
				j.Spec.Suspend = ptr(true)
				j.Spec.Template.Spec.NodeSelector = map[string]string{"zone": "a"}
			})), gk: gk,
			prefix: `Job.batch "pi" is invalid: spec.template: Invalid value: `},
		{name: "selector is immutable", op: update,
			old: job(func(j *batchv1.Job) {
				j.Spec.ManualSelector = ptr(true)
				j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
				j.Spec.Template.Labels = map[string]string{"app": "x", "job-name": "pi"}
			}),
			obj: withRV(job(func(j *batchv1.Job) {
				j.Spec.ManualSelector = ptr(true)
				j.Spec.Template.Labels = map[string]string{"app": "x", "job-name": "pi"}
				j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}, MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "job-name", Operator: metav1.LabelSelectorOpExists}}}
			})), gk: gk,
			want: `Job.batch "pi" is invalid: spec.selector: Invalid value: {"matchLabels":{"app":"x"},"matchExpressions":[{"key":"job-name","operator":"Exists"}]}: field is immutable`},

		// Status.
		{name: "status valid", op: status, old: job(),
			obj: withRV(job(func(j *batchv1.Job) { j.Status = batchv1.JobStatus{Active: 1, Ready: ptr(int32(1)), StartTime: &start} })), gk: gk},
		{name: "status counters", op: status,
			old: job(func(j *batchv1.Job) { j.Status = batchv1.JobStatus{Failed: 2, Succeeded: 1, StartTime: &start} }),
			obj: withRV(job(func(j *batchv1.Job) { j.Status = batchv1.JobStatus{Active: 1, Ready: ptr(int32(2)), StartTime: &start} })), gk: gk,
			want: `Job.batch "pi" is invalid: [status.ready: Invalid value: 2: cannot set more ready pods than active, status.failed: Invalid value: 0: cannot decrease the failed counter, status.succeeded: Invalid value: 0: cannot decrease the succeeded counter]`},
		{name: "status complete without the rest", op: status, old: job(),
			obj: withRV(job(func(j *batchv1.Job) {
				j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
			})), gk: gk,
			want: `Job.batch "pi" is invalid: [status.completionTime: Required value: completionTime is required for Complete jobs, status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition, status.startTime: Required value: startTime is required for finished job]`},
		{name: "status complete", op: status, old: job(),
			obj: withRV(job(func(j *batchv1.Job) {
				j.Status = batchv1.JobStatus{StartTime: &start, CompletionTime: &start, Succeeded: 1, Conditions: []batchv1.JobCondition{
					{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue}, {Type: batchv1.JobComplete, Status: corev1.ConditionTrue},
				}}
			})), gk: gk},
		{name: "status terminal condition stays", op: status,
			old: job(func(j *batchv1.Job) {
				j.Status = batchv1.JobStatus{StartTime: &start, CompletionTime: &start, Succeeded: 1, Conditions: []batchv1.JobCondition{
					{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue}, {Type: batchv1.JobComplete, Status: corev1.ConditionTrue},
				}}
			}),
			obj: withRV(job(func(j *batchv1.Job) { j.Status = batchv1.JobStatus{StartTime: &start, Succeeded: 1} })), gk: gk,
			want: `Job.batch "pi" is invalid: [status.conditions: Invalid value: cannot disable the terminal Complete=True condition, status.conditions: Invalid value: cannot disable the SuccessCriteriaMet=True condition]`},
		{name: "status completed indexes of a non-indexed job", op: status, old: job(),
			obj: withRV(job(func(j *batchv1.Job) { j.Status.CompletedIndexes = "0" })), gk: gk,
			want: `Job.batch "pi" is invalid: status.completedIndexes: Invalid value: "0": cannot set non-empty completedIndexes when non-indexed completion mode`},
		{name: "status completed indexes format", op: status, old: job(indexed(4, 1)),
			obj: withRV(job(indexed(4, 1), func(j *batchv1.Job) { j.Status.CompletedIndexes = "2,1" })), gk: gk,
			want: `Job.batch "pi" is invalid: status.completedIndexes: Invalid value: "2,1": error parsing completedIndexes: non-increasing order, previous: 2, current: 1`},
	})
}

func TestCronJob(t *testing.T) {
	gk := batchGK("CronJob")
	check(t, []testCase{
		{name: "valid", obj: cronJob(), gk: gk},
		{name: "descriptor", obj: cronJob(func(c *batchv1.CronJob) { c.Spec.Schedule = "@hourly" }), gk: gk},
		{name: "every", obj: cronJob(func(c *batchv1.CronJob) { c.Spec.Schedule = "@every 1h30m" }), gk: gk},
		{name: "names and ranges", obj: cronJob(func(c *batchv1.CronJob) { c.Spec.Schedule = "0-30/5 9-17 ? JAN-JUN MON-FRI" }), gk: gk},
		{name: "time zone", obj: cronJob(func(c *batchv1.CronJob) { c.Spec.TimeZone = ptr("Europe/Berlin") }), gk: gk},
		{name: "no schedule", obj: cronJob(func(c *batchv1.CronJob) { c.Spec.Schedule = "" }), gk: gk,
			want: `CronJob.batch "hello" is invalid: spec.schedule: Required value`},
		{name: "too few fields", obj: cronJob(func(c *batchv1.CronJob) { c.Spec.Schedule = "not a schedule" }), gk: gk,
			want: `CronJob.batch "hello" is invalid: spec.schedule: Invalid value: "not a schedule": expected exactly 5 fields, found 3: [not a schedule]`},
		{name: "minute out of range", obj: cronJob(func(c *batchv1.CronJob) { c.Spec.Schedule = "61 * * * *" }), gk: gk,
			want: `CronJob.batch "hello" is invalid: spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61`},
		{name: "unknown descriptor", obj: cronJob(func(c *batchv1.CronJob) { c.Spec.Schedule = "@sometimes" }), gk: gk,
			want: `CronJob.batch "hello" is invalid: spec.schedule: Invalid value: "@sometimes": unrecognized descriptor: @sometimes`},
		{name: "TZ in schedule", obj: cronJob(func(c *batchv1.CronJob) { c.Spec.Schedule = "TZ=UTC 0 0 * * *" }), gk: gk,
			want: `CronJob.batch "hello" is invalid: spec.schedule: Invalid value: "TZ=UTC 0 0 * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead`},
		// robfig/cron panics on this one; kube turns the panic into an error.
		{name: "TZ without a space", obj: cronJob(func(c *batchv1.CronJob) { c.Spec.Schedule = "TZ=0" }), gk: gk,
			prefix: `CronJob.batch "hello" is invalid: [spec.schedule: Invalid value: "TZ=0": invalid schedule format: `},
		{name: "unknown time zone", obj: cronJob(func(c *batchv1.CronJob) { c.Spec.TimeZone = ptr("Mars/Olympus_Mons") }), gk: gk,
			want: `CronJob.batch "hello" is invalid: spec.timeZone: Invalid value: "Mars/Olympus_Mons": unknown time zone Mars/Olympus_Mons`},
		{name: "time zone characters", obj: cronJob(func(c *batchv1.CronJob) { c.Spec.TimeZone = ptr("Europe/../Berlin") }), gk: gk,
			want: `CronJob.batch "hello" is invalid: spec.timeZone: Invalid value: "Europe/../Berlin": unknown time zone Europe/../Berlin`},
		{name: "empty time zone", obj: cronJob(func(c *batchv1.CronJob) { c.Spec.TimeZone = ptr("") }), gk: gk,
			want: `CronJob.batch "hello" is invalid: spec.timeZone: Invalid value: "": timeZone must be nil or non-empty string`},
		{name: "Local time zone", obj: cronJob(func(c *batchv1.CronJob) { c.Spec.TimeZone = ptr("Local") }), gk: gk,
			want: `CronJob.batch "hello" is invalid: spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones`},
		{name: "name too long", obj: cronJob(func(c *batchv1.CronJob) { c.Name = strings.Repeat("c", 53) }), gk: gk,
			want: `CronJob.batch "` + strings.Repeat("c", 53) + `" is invalid: metadata.name: Invalid value: "` + strings.Repeat("c", 53) + `": must be no more than 52 characters`},
		{name: "no schedule, reported last", obj: cronJob(func(c *batchv1.CronJob) { c.Spec.Schedule = ""; c.Spec.ConcurrencyPolicy = "Sometimes" }), gk: gk,
			want: `CronJob.batch "hello" is invalid: [spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace", spec.schedule: Required value]`},
		{name: "concurrency policy", obj: cronJob(func(c *batchv1.CronJob) { c.Spec.ConcurrencyPolicy = "Sometimes" }), gk: gk,
			want: `CronJob.batch "hello" is invalid: spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"`},
		{name: "history limits and deadline", obj: cronJob(func(c *batchv1.CronJob) {
			c.Spec.SuccessfulJobsHistoryLimit, c.Spec.FailedJobsHistoryLimit, c.Spec.StartingDeadlineSeconds = ptr(int32(-1)), ptr(int32(-2)), ptr(int64(-3))
		}), gk: gk,
			want: `CronJob.batch "hello" is invalid: [spec.startingDeadlineSeconds: Invalid value: -3: must be greater than or equal to 0, spec.successfulJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0, spec.failedJobsHistoryLimit: Invalid value: -2: must be greater than or equal to 0]`},
		{name: "template selector", obj: cronJob(func(c *batchv1.CronJob) {
			c.Spec.JobTemplate.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}
			c.Spec.JobTemplate.Spec.ManualSelector = ptr(true)
		}), gk: gk,
			want: "CronJob.batch \"hello\" is invalid: [spec.jobTemplate.spec.selector: Invalid value: {\"matchLabels\":{\"a\":\"b\"}}: `selector` will be auto-generated, spec.jobTemplate.spec.manualSelector: Unsupported value: true: supported values: \"nil\", \"false\"]"},
		{name: "template restart policy", obj: cronJob(func(c *batchv1.CronJob) {
			c.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
		}), gk: gk,
			want: `CronJob.batch "hello" is invalid: spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"`},
		{name: "update keeps a TZ schedule", op: update,
			old: cronJob(func(c *batchv1.CronJob) { c.Spec.Schedule = "TZ=UTC 0 0 * * *" }),
			obj: withRV(cronJob(func(c *batchv1.CronJob) { c.Spec.Schedule = "TZ=UTC 0 1 * * *" })), gk: gk},
		{name: "update TZ schedule with timeZone", op: update,
			old: cronJob(func(c *batchv1.CronJob) { c.Spec.Schedule = "TZ=UTC 0 0 * * *" }),
			obj: withRV(cronJob(func(c *batchv1.CronJob) { c.Spec.Schedule = "TZ=UTC 0 0 * * *"; c.Spec.TimeZone = ptr("UTC") })), gk: gk,
			want: `CronJob.batch "hello" is invalid: spec.schedule: Invalid value: "TZ=UTC 0 0 * * *": cannot use both timeZone field and TZ or CRON_TZ in schedule`},
		{name: "update long name", op: update, old: cronJob(func(c *batchv1.CronJob) { c.Name = strings.Repeat("c", 53) }),
			obj: withRV(cronJob(func(c *batchv1.CronJob) { c.Name = strings.Repeat("c", 53); c.Spec.Suspend = ptr(true) })), gk: gk},
		{name: "status is not checked", op: status, old: cronJob(),
			obj: withRV(cronJob(func(c *batchv1.CronJob) {
				c.Status.Active = []corev1.ObjectReference{{Name: "x"}}
			})), gk: gk},
	})
}

// The message of a changed job template renders the whole template as
// kube's internal type and ends as kube's immutable-field errors do.
func TestJobTemplateImmutableMessage(t *testing.T) {
	old := job()
	j := withRV(job(func(j *batchv1.Job) { j.Spec.Template.Spec.Containers[0].Image = "busybox" }))
	errs := ValidateUpdate(j, old)
	if len(errs) != 1 {
		t.Fatalf("got %d errors: %v", len(errs), errs)
	}
	msg := apierrors.NewInvalid(batchGK("Job"), "pi", errs).Error()
	for _, want := range []string{`"Image":"busybox"`, `"RestartPolicy":"Never"`, `"TerminationGracePeriodSeconds":30`} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %s:\n%s", want, msg)
		}
	}
	if !strings.HasSuffix(msg, "}}: field is immutable") {
		t.Errorf("message does not end as kube's:\n%s", msg)
	}
}

func TestParseCronSchedule(t *testing.T) {
	for _, tc := range []struct {
		schedule string
		ok       bool
	}{
		{"0 0 * * *", true},
		{"TZ=UTC 0 0 * * *", true},
		{"CRON_TZ=America/New_York 0 0 * * *", true},
		{"@yearly", true},
		{"@annually", true},
		{"@monthly", true},
		{"@weekly", true},
		{"@daily", true},
		{"@midnight", true},
		{"@every 5m", true},
		{"*/15 * * * 1-5", true},
		{"0 0 1 1 SUN", true},
		{"0 0 * * * *", false},
		{"0 0 32 * *", false},
		{"TZ=Nowhere/Else 0 0 * * *", false},
		{"TZ=0", false},
		{"@every 1 hour", false},
		{"", false},
	} {
		t.Run(tc.schedule, func(t *testing.T) {
			_, err := ParseCronSchedule(tc.schedule)
			if (err == nil) != tc.ok {
				t.Fatalf("ParseCronSchedule(%q) = %v, want ok=%v", tc.schedule, err, tc.ok)
			}
		})
	}
}

// FuzzParseCronSchedule: robfig/cron panics on some schedules (kube's
// "TZ=0"); the parser must turn every panic into an error.
func FuzzParseCronSchedule(f *testing.F) {
	for _, s := range []string{"*/5 * * * *", "TZ=0", "CRON_TZ=", "@every 1h", "@every", "0-70/0 * * * *", "TZ=UTC", "? ? ? ? ?"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseCronSchedule(s)
		_ = validateSchedule(s, false, nil, nil)
	})
}

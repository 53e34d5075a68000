package api

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kval "github.com/kpipe/kpipe/internal/api/validation"
)

// jobStrategy is kube's Job strategy: a generated selector and template
// labels on create, status reset, generation on spec changes.
type jobStrategy struct{ Generic }

func newJobStrategy() jobStrategy {
	return jobStrategy{Generic{HasStatus: true, Generation: true, Create: func(obj runtime.Object) {
		j := obj.(*batchv1.Job)
		generateJobSelector(j)
		// kube defaults the object again when it reads it back from
		// storage: a Job without labels then takes its template's, the
		// generated ones included.
		if len(j.Labels) == 0 && j.Spec.Template.Labels != nil {
			j.Labels = maps.Clone(j.Spec.Template.Labels)
		}
	}}}
}

var _ Warner = jobStrategy{}

// generateJobSelector gives a Job without manualSelector the selector
// {batch.kubernetes.io/controller-uid: <uid>} and labels its pod template
// with its name and uid, old and new label names both. Labels the client
// set are kept: validation then rejects them if they do not match.
func generateJobSelector(j *batchv1.Job) {
	if j.Spec.ManualSelector != nil && *j.Spec.ManualSelector {
		return
	}
	if j.Spec.Template.Labels == nil {
		j.Spec.Template.Labels = map[string]string{}
	}
	l := j.Spec.Template.Labels
	for _, k := range []string{kval.LegacyJobNameLabel, kval.JobNameLabel} {
		if _, ok := l[k]; !ok {
			l[k] = j.Name
		}
	}
	for _, k := range []string{kval.LegacyJobControllerUIDLabel, kval.JobControllerUIDLabel} {
		if _, ok := l[k]; !ok {
			l[k] = string(j.UID)
		}
	}
	if j.Spec.Selector == nil {
		j.Spec.Selector = &metav1.LabelSelector{}
	}
	if j.Spec.Selector.MatchLabels == nil {
		j.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, ok := j.Spec.Selector.MatchLabels[kval.JobControllerUIDLabel]; !ok {
		j.Spec.Selector.MatchLabels[kval.JobControllerUIDLabel] = string(j.UID)
	}
}

// WarningsOnCreate implements Warner.
func (jobStrategy) WarningsOnCreate(obj runtime.Object) []string {
	j := obj.(*batchv1.Job)
	return append(nameWarnings(j.Name), jobSpecWarnings(field.NewPath("spec"), &j.Spec)...)
}

// WarningsOnUpdate implements Warner.
func (jobStrategy) WarningsOnUpdate(obj, old runtime.Object) []string {
	j, o := obj.(*batchv1.Job), old.(*batchv1.Job)
	if j.Generation == o.Generation {
		return nil
	}
	return jobSpecWarnings(field.NewPath("spec"), &j.Spec)
}

// nameWarnings: the names of pods come from a workload's name (Jobs,
// CronJobs, Deployments, ReplicaSets).
func nameWarnings(name string) []string {
	if msgs := validation.IsDNS1123Label(name); len(msgs) != 0 {
		return []string{fmt.Sprintf("metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: %v", msgs)}
	}
	return nil
}

// jobSpecWarnings is kube's WarningsForJobSpec: the soft limits of
// Indexed Jobs, and the pod template's warnings.
func jobSpecWarnings(path *field.Path, s *batchv1.JobSpec) []string {
	var ws []string
	if s.CompletionMode != nil && *s.CompletionMode == batchv1.IndexedCompletion &&
		deref(s.Completions) > 100_000 && deref(s.Parallelism) > 10_000 {
		ws = append(ws, path.String()+": In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail")
	}
	return append(ws, podTemplateWarnings(path.Child("template"), &s.Template)...)
}

func deref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

func jobFields(obj runtime.Object) fields.Set {
	return fields.Set{"status.successful": strconv.Itoa(int(obj.(*batchv1.Job).Status.Succeeded))}
}

// cronJobStrategy is kube's CronJob strategy: status reset, generation on
// spec changes, and the warnings.
type cronJobStrategy struct{ Generic }

var _ Warner = cronJobStrategy{}

// WarningsOnCreate implements Warner.
func (cronJobStrategy) WarningsOnCreate(obj runtime.Object) []string {
	c := obj.(*batchv1.CronJob)
	return append(nameWarnings(c.Name), jobSpecWarnings(field.NewPath("spec", "jobTemplate", "spec"), &c.Spec.JobTemplate.Spec)...)
}

// WarningsOnUpdate implements Warner. The path in the TZ warning is
// kube's, "spec.spec.schedule".
func (cronJobStrategy) WarningsOnUpdate(obj, old runtime.Object) []string {
	c, o := obj.(*batchv1.CronJob), old.(*batchv1.CronJob)
	var ws []string
	if c.Generation != o.Generation {
		ws = jobSpecWarnings(field.NewPath("spec", "jobTemplate", "spec"), &c.Spec.JobTemplate.Spec)
	}
	if strings.Contains(c.Spec.Schedule, "TZ") {
		ws = append(ws, "cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details")
	}
	return ws
}

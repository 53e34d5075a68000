package defaults

import (
	"maps"
	"math"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func job(j *batchv1.Job) {
	s := &j.Spec
	// A job with neither set runs one pod to one completion.
	if s.Completions == nil && s.Parallelism == nil {
		s.Completions = ptr.To[int32](1)
	}
	if s.Parallelism == nil {
		s.Parallelism = ptr.To[int32](1)
	}
	if s.BackoffLimit == nil {
		// With a per-index limit the global one must not get in the way.
		if s.BackoffLimitPerIndex != nil {
			s.BackoffLimit = ptr.To[int32](math.MaxInt32)
		} else {
			s.BackoffLimit = ptr.To[int32](6)
		}
	}
	if l := s.Template.Labels; l != nil && len(j.Labels) == 0 {
		j.Labels = maps.Clone(l)
	}
	if s.CompletionMode == nil {
		s.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
	}
	if s.Suspend == nil {
		s.Suspend = ptr.To(false)
	}
	if s.PodReplacementPolicy == nil {
		// A pod failure policy needs terminating pods to have finished.
		if s.PodFailurePolicy != nil {
			s.PodReplacementPolicy = ptr.To(batchv1.Failed)
		} else {
			s.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
		}
	}
	if s.ManualSelector == nil {
		s.ManualSelector = ptr.To(false)
	}
	podFailurePolicy(s.PodFailurePolicy)
	podSpec(&s.Template.Spec)
}

// cronJob defaults the cron job itself, but its job template only as far
// as the pod failure policy and pod template go: the job-level defaults
// are applied when the controller creates each Job.
func cronJob(c *batchv1.CronJob) {
	s := &c.Spec
	if s.ConcurrencyPolicy == "" {
		s.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	if s.Suspend == nil {
		s.Suspend = ptr.To(false)
	}
	if s.SuccessfulJobsHistoryLimit == nil {
		s.SuccessfulJobsHistoryLimit = ptr.To[int32](3)
	}
	if s.FailedJobsHistoryLimit == nil {
		s.FailedJobsHistoryLimit = ptr.To[int32](1)
	}
	podFailurePolicy(s.JobTemplate.Spec.PodFailurePolicy)
	podSpec(&s.JobTemplate.Spec.Template.Spec)
}

func podFailurePolicy(p *batchv1.PodFailurePolicy) {
	if p == nil {
		return
	}
	for i := range p.Rules {
		for j := range p.Rules[i].OnPodConditions {
			if c := &p.Rules[i].OnPodConditions[j]; c.Status == "" {
				c.Status = corev1.ConditionTrue
			}
		}
	}
}

package api

import (
	"maps"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestJobStrategyCreate(t *testing.T) {
	b := func(v bool) *bool { return &v }
	for _, tc := range []struct {
		name         string
		job          batchv1.Job
		wantSelector map[string]string
		wantLabels   map[string]string
		wantJobLabel map[string]string
	}{
		{
			name:         "generated",
			job:          batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "pi", UID: "u1"}, Spec: batchv1.JobSpec{ManualSelector: b(false)}},
			wantSelector: map[string]string{"batch.kubernetes.io/controller-uid": "u1"},
			wantLabels:   map[string]string{"batch.kubernetes.io/controller-uid": "u1", "controller-uid": "u1", "batch.kubernetes.io/job-name": "pi", "job-name": "pi"},
			wantJobLabel: map[string]string{"batch.kubernetes.io/controller-uid": "u1", "controller-uid": "u1", "batch.kubernetes.io/job-name": "pi", "job-name": "pi"},
		},
		{
			// The client's labels stay, for validation to judge.
			name: "client labels kept",
			job: batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "pi", UID: "u1", Labels: map[string]string{"app": "pi"}}, Spec: batchv1.JobSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pi"}},
				Template: podTemplate(map[string]string{"job-name": "mine", "app": "pi"}),
			}},
			wantSelector: map[string]string{"app": "pi", "batch.kubernetes.io/controller-uid": "u1"},
			wantLabels:   map[string]string{"app": "pi", "batch.kubernetes.io/controller-uid": "u1", "controller-uid": "u1", "batch.kubernetes.io/job-name": "pi", "job-name": "mine"},
			wantJobLabel: map[string]string{"app": "pi"},
		},
		{
			name: "manual selector",
			job: batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "pi", UID: "u1"}, Spec: batchv1.JobSpec{ManualSelector: b(true),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pi"}},
				Template: podTemplate(map[string]string{"app": "pi"}),
			}},
			wantSelector: map[string]string{"app": "pi"},
			wantLabels:   map[string]string{"app": "pi"},
			wantJobLabel: map[string]string{"app": "pi"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := tc.job.DeepCopy()
			j.Status.Active = 2
			newJobStrategy().PrepareForCreate(j)
			if !maps.Equal(j.Spec.Selector.MatchLabels, tc.wantSelector) {
				t.Errorf("selector = %v, want %v", j.Spec.Selector.MatchLabels, tc.wantSelector)
			}
			if !maps.Equal(j.Spec.Template.Labels, tc.wantLabels) {
				t.Errorf("template labels = %v, want %v", j.Spec.Template.Labels, tc.wantLabels)
			}
			if !maps.Equal(j.Labels, tc.wantJobLabel) {
				t.Errorf("job labels = %v, want %v", j.Labels, tc.wantJobLabel)
			}
			if j.Status.Active != 0 || j.Generation != 1 {
				t.Errorf("status %+v, generation %d", j.Status, j.Generation)
			}
		})
	}
}

func TestBatchWarnings(t *testing.T) {
	i32 := func(v int32) *int32 { return &v }
	indexed := batchv1.IndexedCompletion
	big := batchv1.JobSpec{CompletionMode: &indexed, Completions: i32(200_000), Parallelism: i32(20_000)}
	for _, tc := range []struct {
		name string
		got  []string
		want []string
	}{
		{"plain job", jobStrategy{}.WarningsOnCreate(&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "pi"}}), nil},
		{"dotted name", jobStrategy{}.WarningsOnCreate(&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "pi.v1"}}),
			[]string{"metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]"}},
		{"big indexed job", jobStrategy{}.WarningsOnCreate(&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "pi"}, Spec: big}),
			[]string{"spec: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail"}},
		{"job update without a spec change", jobStrategy{}.WarningsOnUpdate(
			&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "pi", Generation: 1}, Spec: big},
			&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "pi", Generation: 1}, Spec: big}), nil},
		{"big indexed cron job", cronJobStrategy{}.WarningsOnCreate(&batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: batchv1.CronJobSpec{JobTemplate: batchv1.JobTemplateSpec{Spec: big}}}),
			[]string{"spec.jobTemplate.spec: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail"}},
		{"cron job keeping TZ", cronJobStrategy{}.WarningsOnUpdate(
			&batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "c", Generation: 1}, Spec: batchv1.CronJobSpec{Schedule: "TZ=UTC * * * * *"}},
			&batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "c", Generation: 1}, Spec: batchv1.CronJobSpec{Schedule: "TZ=UTC * * * * *"}}),
			[]string{"cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !slices.Equal(tc.got, tc.want) {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(tc.got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestJobFieldSelector(t *testing.T) {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "ns"}, Status: batchv1.JobStatus{Succeeded: 3}}
	res := &Resource{Namespaced: true, FieldAttrs: jobFields}
	_, fs, err := res.Attrs(j)
	if err != nil {
		t.Fatal(err)
	}
	if fs["status.successful"] != "3" || fs["metadata.name"] != "pi" || fs["metadata.namespace"] != "ns" {
		t.Errorf("fields = %v", fs)
	}
}

func podTemplate(labels map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}}
}

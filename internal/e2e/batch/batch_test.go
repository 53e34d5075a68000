package batch

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

const jobYAML = `apiVersion: batch/v1
kind: Job
metadata:
  name: pi
  namespace: batch-demo
spec:
  backoffLimit: 4
  template:
    spec:
      containers:
      - name: pi
        image: perl:5.34.0
        command: ["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"]
      restartPolicy: Never
`

const cronJobYAML = `apiVersion: batch/v1
kind: CronJob
metadata:
  name: hello
  namespace: batch-demo
spec:
  schedule: "*/5 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: hello
            image: busybox:1.28
            command: ["/bin/sh", "-c", "date; echo Hello"]
          restartPolicy: OnFailure
`

// The kubectl workflow of Jobs and CronJobs: apply, get with kube's
// columns, the create generators (job --from=cronjob too), explain, delete.
func TestKubectlJobsAndCronJobs(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	dir := t.TempDir()
	jobFile, cjFile := filepath.Join(dir, "job.yaml"), filepath.Join(dir, "cronjob.yaml")
	os.WriteFile(jobFile, []byte(jobYAML), 0o600)
	os.WriteFile(cjFile, []byte(cronJobYAML), 0o600)

	ns := []string{"-n", "batch-demo"}
	steps := []e2eutil.KubectlStep{
		{Args: []string{"create", "namespace", "batch-demo"}, Want: []string{"namespace/batch-demo created"}},
		{Args: []string{"apply", "-f", jobFile}, Want: []string{"job.batch/pi created"}},
		{Args: []string{"apply", "-f", cjFile}, Want: []string{"cronjob.batch/hello created"}},
		{Args: []string{"apply", "-f", jobFile}, Want: []string{"job.batch/pi unchanged"}},
		{Args: []string{"apply", "-f", cjFile}, Want: []string{"cronjob.batch/hello unchanged"}},
		{Args: append(ns, "get", "jobs,cronjobs"), Want: []string{
			"NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE", "job.batch/pi", "Running", "0/1",
			"SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "cronjob.batch/hello", "*/5 * * * *", "<none>", "False",
		}},
		{Args: append(ns, "get", "jobs", "-o", "wide"), Want: []string{"CONTAINERS", "IMAGES", "SELECTOR", "perl:5.34.0", "batch.kubernetes.io/controller-uid="}},
		{Args: append(ns, "get", "cj", "-o", "wide"), Want: []string{"hello", "busybox:1.28", "SELECTOR"}},
		{Args: append(ns, "get", "job", "pi", "-o", "jsonpath={.spec.selector.matchLabels} {.spec.template.metadata.labels} {.spec.completions}/{.spec.parallelism} {.metadata.generation}"),
			Want: []string{`"batch.kubernetes.io/controller-uid":`, `"batch.kubernetes.io/job-name":"pi"`, `"job-name":"pi"`, `"controller-uid":`, " 1/1 1"}},
		{Args: append(ns, "get", "cronjob", "hello", "-o", "jsonpath={.spec.successfulJobsHistoryLimit} {.spec.failedJobsHistoryLimit} {.spec.concurrencyPolicy} {.spec.suspend}"),
			Want: []string{"3 1 Allow false"}},
		{Args: append(ns, "describe", "job", "pi"), Want: []string{"Name:", "pi", "Selector:", "batch.kubernetes.io/controller-uid=", "Parallelism:", "Completions:", "Pods Statuses:", "0 Active", "perl:5.34.0"}},
		{Args: append(ns, "describe", "cronjob", "hello"), Want: []string{"Name:", "hello", "Schedule:", "*/5 * * * *", "Concurrency Policy:", "Allow", "busybox:1.28"}},
		{Args: []string{"apply", "--server-side", "-f", cjFile}, Want: []string{"cronjob.batch/hello serverside-applied"}},
		{Args: []string{"apply", "--server-side", "-f", jobFile}, Want: []string{"job.batch/pi serverside-applied"}},
		{Args: append(ns, "create", "job", "manual-1", "--from=cronjob/hello"), Want: []string{"job.batch/manual-1 created"}},
		{Args: append(ns, "get", "job", "manual-1", "-o", "jsonpath={.metadata.annotations} {.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} {.spec.template.spec.restartPolicy}"),
			Want: []string{`"cronjob.kubernetes.io/instantiate":"manual"`, "CronJob/hello", "OnFailure"}},
		{Args: append(ns, "create", "job", "once", "--image=busybox", "--", "echo", "hi"), Want: []string{"job.batch/once created"}},
		{Args: append(ns, "create", "job", "dry", "--image=busybox", "--dry-run=server", "-o", "yaml"),
			Want: []string{"kind: Job", "name: dry", "batch.kubernetes.io/controller-uid:", "job-name: dry", "restartPolicy: Never"}},
		{Args: append(ns, "get", "job", "dry"), WantErr: true, Want: []string{`jobs.batch "dry" not found`}},
		{Args: append(ns, "create", "cronjob", "tick", "--image=busybox", "--schedule=@hourly", "--", "date"), Want: []string{"cronjob.batch/tick created"}},
		{Args: append(ns, "create", "cronjob", "bad", "--image=busybox", "--schedule=61 * * * *"), WantErr: true,
			Want: []string{`error: failed to create cronjob: CronJob.batch "bad" is invalid: spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61`}},
		{Args: append(ns, "patch", "cronjob", "tick", "-p", `{"spec":{"suspend":true}}`), Want: []string{"cronjob.batch/tick patched"}},
		{Args: append(ns, "get", "cronjob", "tick"), Want: []string{"tick", "@hourly", "True"}},
		{Args: append(ns, "set", "image", "job/once", "once=busybox:2"), WantErr: true,
			Want: []string{`error: failed to patch image update to pod template: Job.batch "once" is invalid: spec.template: Invalid value: {"labels":{`, `"Image":"busybox:2"`, "}}: field is immutable"}},
		{Args: append(ns, "get", "all"), Want: []string{"job.batch/pi", "job.batch/once", "job.batch/manual-1", "cronjob.batch/hello", "cronjob.batch/tick"}},
		{Args: []string{"api-resources", "--api-group=batch"}, Want: []string{"jobs", "cronjobs", "cj", "batch/v1", "Job", "CronJob"}},
		{Args: []string{"explain", "job.spec"}, Want: []string{"KIND:", "Job", "FIELD: spec <JobSpec>", "backoffLimit", "completions", "template"}},
		{Args: []string{"explain", "cronjob.spec.schedule"}, Want: []string{"KIND:", "CronJob", "FIELD: schedule <string>", "Cron format"}},
		{Args: append(ns, "delete", "job", "pi"), Want: []string{`job.batch "pi" deleted`}},
		{Args: append(ns, "delete", "-f", cjFile), Want: []string{`cronjob.batch "hello" deleted`}},
		{Args: append(ns, "get", "jobs,cronjobs", "-o", "name"), Want: []string{"job.batch/manual-1", "job.batch/once", "cronjob.batch/tick"}},
	}
	e2eutil.KubectlSteps(t, ts, steps)
	out, _ := e2eutil.Kubectl(t, ts, append(ns, "get", "jobs,cronjobs", "-o", "name")...)
	for _, gone := range []string{"job.batch/pi\n", "cronjob.batch/hello\n"} {
		if strings.Contains(out, gone) {
			t.Errorf("%s is still there after its delete:\n%s", strings.TrimSpace(gone), out)
		}
	}
}

func job(name string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
		}}},
	}
}

func cronJob(name, schedule string) *batchv1.CronJob {
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.CronJobSpec{Schedule: schedule, JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyOnFailure,
				Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
			}},
		}}},
	}
}

// Jobs and CronJobs through client-go: the generated selector and labels,
// status only through /status, immutable fields, kube's 422 messages,
// warnings, the status.successful field selector, and discovery.
func TestJobsAndCronJobsClientGo(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	warnings := &e2eutil.Warnings{}
	cfg := rest.CopyConfig(ts.Config)
	cfg.WarningHandler = warnings
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	const nsName = "batch-go"
	e2eutil.Namespace(t, cs, nsName)
	jobs, cronJobs := cs.BatchV1().Jobs(nsName), cs.BatchV1().CronJobs(nsName)

	// Create: selector and labels from the uid, status wiped, defaults.
	in := job("pi")
	in.Status = batchv1.JobStatus{Active: 3, Succeeded: 2}
	j, err := jobs.Create(ctx, in, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	uid := string(j.UID)
	if uid == "" {
		t.Fatal("created job has no uid")
	}
	if got := j.Spec.Selector; got == nil || len(got.MatchLabels) != 1 || got.MatchLabels["batch.kubernetes.io/controller-uid"] != uid || len(got.MatchExpressions) != 0 {
		t.Errorf("generated selector = %v, want matchLabels batch.kubernetes.io/controller-uid=%s", got, uid)
	}
	wantLabels := map[string]string{"batch.kubernetes.io/controller-uid": uid, "controller-uid": uid, "batch.kubernetes.io/job-name": "pi", "job-name": "pi"}
	for k, v := range wantLabels {
		if j.Spec.Template.Labels[k] != v {
			t.Errorf("template label %s = %q, want %q (labels %v)", k, j.Spec.Template.Labels[k], v, j.Spec.Template.Labels)
		}
	}
	// A Job created without labels shows its template's, as kube's
	// defaulting on read gives them.
	if !maps.Equal(j.Labels, wantLabels) {
		t.Errorf("job labels = %v, want %v", j.Labels, wantLabels)
	}
	if got, err := jobs.Get(ctx, "pi", metav1.GetOptions{}); err != nil || !maps.Equal(got.Labels, wantLabels) {
		t.Errorf("job labels read back = %v (%v), want %v", got.Labels, err, wantLabels)
	}
	if j.Status.Active != 0 || j.Status.Succeeded != 0 {
		t.Errorf("status not wiped on create: %+v", j.Status)
	}
	if j.Generation != 1 || *j.Spec.BackoffLimit != 6 || *j.Spec.CompletionMode != batchv1.NonIndexedCompletion ||
		*j.Spec.PodReplacementPolicy != batchv1.TerminatingOrFailed || *j.Spec.ManualSelector || *j.Spec.Completions != 1 {
		t.Errorf("defaults: generation %d, spec %+v", j.Generation, j.Spec)
	}
	if w := warnings.Take(); len(w) != 0 {
		t.Errorf("warnings on a plain create: %q", w)
	}

	// The template may not change on a running job.
	changed := j.DeepCopy()
	changed.Spec.Template.Spec.Containers[0].Image = "busybox:2"
	_, err = jobs.Update(ctx, changed, metav1.UpdateOptions{})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
	msg := err.Error()
	if !strings.HasPrefix(msg, `Job.batch "pi" is invalid: spec.template: Invalid value: {"labels":{`) || !strings.HasSuffix(msg, "}}: field is immutable") ||
		!strings.Contains(msg, `"Image":"busybox:2"`) {
		t.Errorf("immutable template message is not kube's:\n%s", msg)
	}
	if se, ok := err.(apierrors.APIStatus); ok {
		if d := se.Status().Details; d == nil || len(d.Causes) != 1 || d.Causes[0].Field != "spec.template" || d.Causes[0].Type != metav1.CauseTypeFieldValueInvalid {
			t.Errorf("causes = %+v", d)
		}
	}
	// Completions too; parallelism may change, and bumps the generation;
	// status sent to the main resource is ignored.
	changed = j.DeepCopy()
	changed.Spec.Completions = ptr(int32(3))
	_, err = jobs.Update(ctx, changed, metav1.UpdateOptions{})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, `Job.batch "pi" is invalid: spec.completions: Invalid value: 3: field is immutable`)
	changed = j.DeepCopy()
	changed.Spec.Parallelism = ptr(int32(2))
	changed.Status.Active = 5
	j, err = jobs.Update(ctx, changed, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if j.Generation != 2 || j.Status.Active != 0 {
		t.Errorf("after a spec update: generation %d (want 2), status.active %d (want 0)", j.Generation, j.Status.Active)
	}

	// Status through /status only: the spec sent there is ignored.
	start := metav1.NewTime(time.Now().Truncate(time.Second))
	st := j.DeepCopy()
	st.Status = batchv1.JobStatus{Active: 1, Ready: ptr(int32(1)), StartTime: &start}
	st.Spec.Parallelism = ptr(int32(7))
	j, err = jobs.UpdateStatus(ctx, st, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if j.Status.Active != 1 || j.Status.StartTime == nil || *j.Spec.Parallelism != 2 || j.Generation != 2 {
		t.Errorf("after /status: status %+v, parallelism %d, generation %d", j.Status, *j.Spec.Parallelism, j.Generation)
	}
	// Kube's status rules: no more ready than active, counters never go down.
	st = j.DeepCopy()
	st.Status.Ready = ptr(int32(4))
	_, err = jobs.UpdateStatus(ctx, st, metav1.UpdateOptions{})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, `Job.batch "pi" is invalid: status.ready: Invalid value: 4: cannot set more ready pods than active`)
	st = j.DeepCopy()
	st.Status.Succeeded = 1
	if j, err = jobs.UpdateStatus(ctx, st, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	st = j.DeepCopy()
	st.Status.Succeeded = 0
	_, err = jobs.UpdateStatus(ctx, st, metav1.UpdateOptions{})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, `Job.batch "pi" is invalid: status.succeeded: Invalid value: 0: cannot decrease the succeeded counter`)

	// status.successful is a field selector, as in kube.
	if _, err := jobs.Create(ctx, job("other"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for sel, want := range map[string][]string{"status.successful=1": {"pi"}, "status.successful=0": {"other"}, "status.successful!=5": {"other", "pi"}} {
		list, err := jobs.List(ctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		var names []string
		for _, it := range list.Items {
			names = append(names, it.Name)
		}
		slices.Sort(names)
		if !slices.Equal(names, want) {
			t.Errorf("field selector %s lists %v, want %v", sel, names, want)
		}
	}

	// A manual selector is the client's; a wrong generated label is refused.
	manual := job("manual")
	manual.Spec.ManualSelector = ptr(true)
	manual.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "m"}}
	manual.Spec.Template.Labels = map[string]string{"app": "m"}
	if m, err := jobs.Create(ctx, manual, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	} else if len(m.Spec.Template.Labels) != 1 || len(m.Spec.Selector.MatchLabels) != 1 {
		t.Errorf("manual selector changed: selector %v, labels %v", m.Spec.Selector, m.Spec.Template.Labels)
	}
	bad := job("bad")
	bad.Spec.Template.Labels = map[string]string{"job-name": "someone-else"}
	_, err = jobs.Create(ctx, bad, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
	if err != nil && !strings.Contains(err.Error(), `spec.template.metadata.labels[job-name]: Invalid value: {`) || !strings.Contains(err.Error(), `: must be 'bad'`) {
		t.Errorf("wrong job-name label: %v", err)
	}
	// A generated name is drawn before the labels are.
	gen := job("")
	gen.GenerateName = "gen-"
	if g, err := jobs.Create(ctx, gen, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	} else if !strings.HasPrefix(g.Name, "gen-") || g.Spec.Template.Labels["job-name"] != g.Name || g.Spec.Template.Labels["batch.kubernetes.io/job-name"] != g.Name {
		t.Errorf("generated name %q, template labels %v", g.Name, g.Spec.Template.Labels)
	}
	// A Job that is not a DNS label gets kube's warning.
	if _, err := jobs.Create(ctx, job("pi.v2"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if w := warnings.Take(); len(w) != 1 || !strings.HasPrefix(w[0], "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]") {
		t.Errorf("warnings = %q", w)
	}

	// And the pod template's warnings, at the template's path.
	old := cronJob("old-labels", "@daily")
	old.Spec.JobTemplate.Spec.Template.Spec.NodeSelector = map[string]string{"beta.kubernetes.io/os": "linux"}
	if _, err := cronJobs.Create(ctx, old, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if w := warnings.Take(); !slices.Equal(w, []string{`spec.jobTemplate.spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead`}) {
		t.Errorf("warnings = %q", w)
	}

	// CronJobs: kube's schedule and time zone messages.
	_, err = cronJobs.Create(ctx, cronJob("bad", "61 * * * *"), metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, `CronJob.batch "bad" is invalid: spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61`)
	_, err = cronJobs.Create(ctx, cronJob("tz", "TZ=UTC 0 0 * * *"), metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, `CronJob.batch "tz" is invalid: spec.schedule: Invalid value: "TZ=UTC 0 0 * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead`)
	zoned := cronJob("zoned", "0 9 * * MON-FRI")
	zoned.Spec.TimeZone = ptr("Mars/Olympus_Mons")
	_, err = cronJobs.Create(ctx, zoned, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, `CronJob.batch "zoned" is invalid: spec.timeZone: Invalid value: "Mars/Olympus_Mons": unknown time zone Mars/Olympus_Mons`)
	zoned.Spec.TimeZone = ptr("Europe/Berlin")
	cj, err := cronJobs.Create(ctx, zoned, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cj.Generation != 1 || *cj.Spec.SuccessfulJobsHistoryLimit != 3 || *cj.Spec.FailedJobsHistoryLimit != 1 || cj.Spec.ConcurrencyPolicy != batchv1.AllowConcurrent || *cj.Spec.Suspend {
		t.Errorf("cronjob defaults: generation %d, spec %+v", cj.Generation, cj.Spec)
	}
	if cj.Spec.JobTemplate.Spec.Template.Spec.TerminationGracePeriodSeconds == nil || cj.Spec.JobTemplate.Spec.BackoffLimit != nil {
		t.Errorf("a cron job's template gets the pod defaults and not the job's: %+v", cj.Spec.JobTemplate.Spec)
	}
	// Status through /status only.
	last := metav1.NewTime(time.Now().Truncate(time.Second))
	cst := cj.DeepCopy()
	cst.Status.LastScheduleTime = &last
	cst.Spec.Schedule = "@daily"
	cj, err = cronJobs.UpdateStatus(ctx, cst, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cj.Status.LastScheduleTime == nil || cj.Spec.Schedule != "0 9 * * MON-FRI" {
		t.Errorf("after /status: schedule %q, status %+v", cj.Spec.Schedule, cj.Status)
	}
	upd := cj.DeepCopy()
	upd.Spec.Suspend = ptr(true)
	upd.Status = batchv1.CronJobStatus{}
	cj, err = cronJobs.Update(ctx, upd, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cj.Generation != 2 || cj.Status.LastScheduleTime == nil {
		t.Errorf("after a spec update: generation %d, status %+v", cj.Generation, cj.Status)
	}

	// Protobuf, as controllers talk.
	pcfg := rest.CopyConfig(ts.Config)
	pcfg.ContentType = "application/vnd.kubernetes.protobuf"
	pcs := kubernetes.NewForConfigOrDie(pcfg)
	if pj, err := pcs.BatchV1().Jobs(nsName).Get(ctx, "pi", metav1.GetOptions{}); err != nil || string(pj.UID) != uid || pj.Status.Succeeded != 1 {
		t.Errorf("protobuf get: %v", err)
	}
	if _, err := pcs.BatchV1().CronJobs(nsName).Create(ctx, cronJob("proto", "@weekly"), metav1.CreateOptions{}); err != nil {
		t.Errorf("protobuf create: %v", err)
	}

	// Discovery: names, short names, categories, subresources.
	rl, err := cs.Discovery().ServerResourcesForGroupVersion("batch/v1")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]metav1.APIResource{}
	for _, r := range rl.APIResources {
		found[r.Name] = r
	}
	if r := found["jobs"]; r.Kind != "Job" || !r.Namespaced || !slices.Equal(r.Categories, []string{"all"}) || len(r.ShortNames) != 0 || r.SingularName != "job" {
		t.Errorf("jobs in discovery: %+v", r)
	}
	if r := found["cronjobs"]; r.Kind != "CronJob" || !slices.Equal(r.ShortNames, []string{"cj"}) || !slices.Equal(r.Categories, []string{"all"}) {
		t.Errorf("cronjobs in discovery: %+v", r)
	}
	for _, sub := range []string{"jobs/status", "cronjobs/status"} {
		if _, ok := found[sub]; !ok {
			t.Errorf("discovery lacks %s", sub)
		}
	}
}

func ptr[T any](v T) *T { return &v }

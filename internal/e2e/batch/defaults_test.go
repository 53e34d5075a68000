package batch

import (
	"context"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

// The Job and CronJob goldens of internal/api/defaults (written by hand
// from kube's defaulting) are what the server stores, once the fields the
// server sets per object are put aside: identity, time, and for the Job
// the selector and template labels its strategy generates.
func TestStoredBatchDefaultsMatchKube(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	cs := e2eutil.Clientset(t, ts.Config)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "batch-defaults")
	const dir = "../../api/defaults/testdata/"
	clear := func(m *metav1.ObjectMeta) {
		m.Namespace, m.UID, m.ResourceVersion, m.Generation = "", "", "", 0
		m.CreationTimestamp, m.ManagedFields = metav1.Time{}, nil
	}

	var in, want batchv1.Job
	read(t, dir+"job.input.yaml", &in)
	read(t, dir+"job.golden.yaml", &want)
	in.Namespace = "batch-defaults"
	got, err := cs.BatchV1().Jobs("batch-defaults").Create(ctx, &in, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	uid := string(got.UID)
	want.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": uid}}
	for k, v := range map[string]string{"batch.kubernetes.io/controller-uid": uid, "controller-uid": uid, "batch.kubernetes.io/job-name": "pi", "job-name": "pi"} {
		want.Spec.Template.Labels[k] = v
	}
	clear(&got.ObjectMeta)
	clear(&want.ObjectMeta)
	want.TypeMeta = metav1.TypeMeta{} // client-go drops it from typed objects
	if !equality.Semantic.DeepEqual(&want, got) {
		t.Errorf("stored Job differs from kube's (-kube +kpipe):\n%s", cmp.Diff(&want, got))
	}

	var cin, cwant batchv1.CronJob
	read(t, dir+"cronjob.input.yaml", &cin)
	read(t, dir+"cronjob.golden.yaml", &cwant)
	cin.Namespace = "batch-defaults"
	cgot, err := cs.BatchV1().CronJobs("batch-defaults").Create(ctx, &cin, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	clear(&cgot.ObjectMeta)
	clear(&cwant.ObjectMeta)
	cwant.TypeMeta = metav1.TypeMeta{}
	if !equality.Semantic.DeepEqual(&cwant, cgot) {
		t.Errorf("stored CronJob differs from kube's (-kube +kpipe):\n%s", cmp.Diff(&cwant, cgot))
	}
}

func read(t *testing.T, path string, into any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(raw, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

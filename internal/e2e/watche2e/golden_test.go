package watche2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

// wantGolden compares got (any JSON-able value or raw JSON) with the
// hand-written golden file testdata/golden/name, as JSON values: key order
// does not count, list order does. See testdata/golden/README.md.
func wantGolden(t *testing.T, name string, got any) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join("testdata", "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	raw, ok := got.([]byte)
	if !ok {
		if raw, err = json.Marshal(got); err != nil {
			t.Fatal(err)
		}
	}
	var g, w any
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatalf("%s: kpipe's answer is not JSON: %v\n%s", name, err, raw)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !reflect.DeepEqual(g, w) {
		pretty, _ := json.MarshalIndent(g, "", "  ")
		t.Errorf("%s: kpipe answered\n%s\nwant (golden)\n%s", name, pretty, want)
	}
}

// testGoldenPatchResults pins strategic merge patch results to kube's
// documented ones (the kubectl patch task's Deployment).
func testGoldenPatchResults(t *testing.T, _ *testserver.TestServer, cs kubernetes.Interface) {
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "golden-smp")
	deps := cs.AppsV1().Deployments("golden-smp")
	demo := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "patch-demo"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptrInt32(2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "nginx"}},
				Spec: corev1.PodSpec{
					Containers:  []corev1.Container{{Name: "patch-demo-ctr", Image: "nginx"}},
					Tolerations: []corev1.Toleration{{Effect: corev1.TaintEffectNoSchedule, Key: "dedicated", Value: "test-team"}},
				},
			},
		},
	}
	if _, err := deps.Create(ctx, demo, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// specOf patches and returns the raw pod spec of the answer, so the
	// comparison sees the JSON the server wrote.
	specOf := func(t *testing.T, pt types.PatchType, patch string) map[string]json.RawMessage {
		t.Helper()
		raw, err := cs.AppsV1().RESTClient().Patch(pt).Namespace("golden-smp").Resource("deployments").Name("patch-demo").
			Body([]byte(patch)).Do(ctx).Raw()
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Spec struct {
				Template struct {
					Spec map[string]json.RawMessage `json:"spec"`
				} `json:"template"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatal(err)
		}
		return d.Spec.Template.Spec
	}

	spec := specOf(t, types.StrategicMergePatchType, `{"spec":{"template":{"spec":{"containers":[{"name":"patch-demo-ctr-2","image":"redis"}]}}}}`)
	wantGolden(t, "smp-containers.json", []byte(spec["containers"]))
	spec = specOf(t, types.StrategicMergePatchType, `{"spec":{"template":{"spec":{"tolerations":[{"effect":"NoSchedule","key":"disktype","value":"ssd"}]}}}}`)
	wantGolden(t, "smp-tolerations.json", []byte(spec["tolerations"]))

	if _, err := deps.Patch(ctx, "patch-demo", types.StrategicMergePatchType,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"patch-demo-ctr","ports":[{"containerPort":80}]}]}}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	spec = specOf(t, types.StrategicMergePatchType, `{"spec":{"template":{"spec":{"containers":[{"name":"patch-demo-ctr","ports":[{"containerPort":443,"name":"https"}]}]}}}}`)
	var containers []map[string]json.RawMessage
	if err := json.Unmarshal(spec["containers"], &containers); err != nil || len(containers) != 2 {
		t.Fatalf("containers: %v %s", err, spec["containers"])
	}
	wantGolden(t, "smp-ports.json", []byte(containers[1]["ports"]))
}

// testGoldenApplyConflictAndManagedFields pins the 409 body of a
// server-side apply conflict and the managedFields kube keeps.
func testGoldenApplyConflictAndManagedFields(t *testing.T, _ *testserver.TestServer, cs kubernetes.Interface) {
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "golden-ssa")
	apply := func(manager, body string) ([]byte, error) {
		return cs.CoreV1().RESTClient().Patch(types.ApplyYAMLPatchType).Namespace("golden-ssa").Resource("configmaps").Name("cfg").
			Param("fieldManager", manager).Body([]byte(body)).Do(ctx).Raw()
	}
	const cfg = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"1\"\n"
	if _, err := apply("alice", cfg); err != nil {
		t.Fatal(err)
	}
	raw, err := apply("bob", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: x\n")
	if err == nil {
		t.Fatal("conflicting apply succeeded")
	}
	wantGolden(t, "ssa-conflict.json", raw)

	// carol applies the same value: alice and carol share .data.a.
	if _, err := apply("carol", cfg); err != nil {
		t.Fatal(err)
	}
	raw, err = apply("bob", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: x\n")
	if err == nil {
		t.Fatal("conflicting apply succeeded")
	}
	// kube documents one cause per field and manager, not their order.
	var st metav1.Status
	if err := json.Unmarshal(raw, &st); err != nil || st.Details == nil {
		t.Fatalf("%v %s", err, raw)
	}
	sort.Slice(st.Details.Causes, func(i, j int) bool { return st.Details.Causes[i].Message < st.Details.Causes[j].Message })
	st.Kind, st.APIVersion = "Status", "v1"
	wantGolden(t, "ssa-conflict-2.json", &st)

	managedFieldsGolden(ctx, t, cs)
}

func managedFieldsGolden(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	cms := cs.CoreV1().ConfigMaps("golden-ssa")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "mf", Labels: map[string]string{"app": "a"}}, Data: map[string]string{"k": "v"}},
		metav1.CreateOptions{FieldManager: "creator"}); err != nil {
		t.Fatal(err)
	}
	raw, err := cs.CoreV1().RESTClient().Patch(types.ApplyYAMLPatchType).Namespace("golden-ssa").Resource("configmaps").Name("mf").
		Param("fieldManager", "applier").
		Body([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mf\n  annotations:\n    note: hi\ndata:\n  extra: \"1\"\n")).Do(ctx).Raw()
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Metadata struct {
			ManagedFields []map[string]any `json:"managedFields"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	for _, e := range got.Metadata.ManagedFields {
		if _, ok := e["time"].(string); !ok {
			t.Errorf("entry without time: %v", e)
		}
		delete(e, "time")
	}
	wantGolden(t, "managed-fields.json", got.Metadata.ManagedFields)
}

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

// rawPatch sends a patch with any Content-Type and returns the object or
// the error, and the HTTP status.
func rawPatch(cs kubernetes.Interface, ns, resource, name string, pt types.PatchType, body string, params map[string]string) (int, []byte, error) {
	req := cs.CoreV1().RESTClient().Patch(pt).Namespace(ns).Resource(resource).Name(name).Body([]byte(body))
	for k, v := range params {
		req = req.Param(k, v)
	}
	var code int
	res := req.Do(context.Background()).StatusCode(&code)
	raw, _ := res.Raw()
	return code, raw, res.Error()
}

func TestPatchTypes(t *testing.T) {
	_, cs := e2eutil.APIServer(t)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "patch")
	deps := cs.AppsV1().Deployments("patch")
	if _, err := deps.Create(ctx, e2eutil.WebDeployment(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	patch := func(pt types.PatchType, body string) (*appsv1.Deployment, error) {
		return deps.Patch(ctx, "web", pt, []byte(body), metav1.PatchOptions{})
	}
	containers := func(d *appsv1.Deployment) string {
		var out []string
		for _, c := range d.Spec.Template.Spec.Containers {
			var ports []string
			for _, p := range c.Ports {
				ports = append(ports, fmt.Sprint(p.ContainerPort))
			}
			out = append(out, c.Name+"="+c.Image+"["+strings.Join(ports, ",")+"]")
		}
		return strings.Join(out, " ")
	}

	tests := []struct {
		name  string
		pt    types.PatchType
		body  string
		check func(*appsv1.Deployment) bool
	}{
		{"json patch adds a label", types.JSONPatchType, `[{"op":"add","path":"/metadata/labels/tier","value":"front"}]`,
			func(d *appsv1.Deployment) bool { return d.Labels["tier"] == "front" && d.Labels["app"] == "web" }},
		{"json patch test passes", types.JSONPatchType, `[{"op":"test","path":"/metadata/labels/tier","value":"front"},{"op":"replace","path":"/spec/replicas","value":2}]`,
			func(d *appsv1.Deployment) bool { return *d.Spec.Replicas == 2 }},
		{"merge patch adds an annotation", types.MergePatchType, `{"metadata":{"annotations":{"a":"b"}}}`,
			func(d *appsv1.Deployment) bool { return d.Annotations["a"] == "b" && d.Labels["tier"] == "front" }},
		{"merge patch null removes", types.MergePatchType, `{"metadata":{"labels":{"tier":null}}}`,
			func(d *appsv1.Deployment) bool { _, ok := d.Labels["tier"]; return !ok && d.Labels["app"] == "web" }},
		{"strategic merges containers by name", types.StrategicMergePatchType, `{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox:2"}]}}}}`,
			func(d *appsv1.Deployment) bool { return containers(d) == "nginx=nginx:1.27[80] sidecar=busybox:2[]" }},
		{"strategic merges ports by containerPort", types.StrategicMergePatchType, `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","ports":[{"containerPort":443,"name":"https"}]}]}}}}`,
			func(d *appsv1.Deployment) bool {
				return containers(d) == "nginx=nginx:1.27[443,80] sidecar=busybox:2[]" && d.Spec.Template.Spec.Containers[0].Ports[1].Protocol == corev1.ProtocolTCP
			}},
		{"strategic $patch delete", types.StrategicMergePatchType, `{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}}}}`,
			func(d *appsv1.Deployment) bool { return containers(d) == "nginx=nginx:1.27[443,80]" }},
		{"merge patch replaces lists whole", types.MergePatchType, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"app:1"}]}}}}`,
			func(d *appsv1.Deployment) bool {
				c := d.Spec.Template.Spec.Containers
				// Defaults fill the replaced container as they would a new one.
				return containers(d) == "app=app:1[]" && c[0].ImagePullPolicy == corev1.PullIfNotPresent && c[0].TerminationMessagePath == "/dev/termination-log"
			}},
	}
	gen := int64(1)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := patch(tc.pt, tc.body)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(got) {
				t.Errorf("unexpected result: labels %v annotations %v containers %s", got.Labels, got.Annotations, containers(got))
			}
			if got.Generation < gen {
				t.Errorf("generation went back: %d", got.Generation)
			}
			gen = got.Generation
		})
	}
}

func TestPatchErrors(t *testing.T) {
	_, cs := e2eutil.APIServer(t)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "patch-errors")
	cms := cs.CoreV1().ConfigMaps("patch-errors")
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Labels: map[string]string{"a": "1"}}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Move the object on, so cm.ResourceVersion is stale.
	if _, err := cms.Patch(ctx, "x", types.MergePatchType, []byte(`{"data":{"k":"w"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		target string
		pt     types.PatchType
		body   string
		params map[string]string
		code   int32
		reason metav1.StatusReason
		msg    string
	}{
		{"unsupported content type", "x", "application/xml", `<x/>`, nil, 415, metav1.StatusReasonUnsupportedMediaType,
			"the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml"},
		{"json content type", "x", "application/json", `{}`, nil, 415, metav1.StatusReasonUnsupportedMediaType, ""},
		{"missing object", "nope", types.MergePatchType, `{"data":{"a":"b"}}`, nil, 404, metav1.StatusReasonNotFound, `configmaps "nope" not found`},
		{"json patch test fails", "x", types.JSONPatchType, `[{"op":"test","path":"/data/k","value":"other"}]`, nil, 422, metav1.StatusReasonInvalid, ""},
		{"json patch path missing", "x", types.JSONPatchType, `[{"op":"remove","path":"/data/missing"}]`, nil, 422, metav1.StatusReasonInvalid, ""},
		{"json patch not a list", "x", types.JSONPatchType, `{"op":"add"}`, nil, 400, metav1.StatusReasonBadRequest, ""},
		{"invalid json", "x", types.MergePatchType, `{"data":`, nil, 400, metav1.StatusReasonBadRequest, "invalid JSON patch"},
		{"name changed", "x", types.MergePatchType, `{"metadata":{"name":"y"}}`, nil, 400, metav1.StatusReasonBadRequest,
			"the name of the object (y) does not match the name on the URL (x)"},
		{"namespace changed", "x", types.MergePatchType, `{"metadata":{"namespace":"other"}}`, nil, 400, metav1.StatusReasonBadRequest,
			"the namespace of the provided object does not match the namespace sent on the request"},
		{"stale resourceVersion", "x", types.MergePatchType, fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"data":{"k":"z"}}`, cm.ResourceVersion), nil, 409, metav1.StatusReasonConflict,
			`Operation cannot be fulfilled on configmaps "x": the object has been modified; please apply your changes to the latest version and try again`},
		{"uid mismatch", "x", types.MergePatchType, `{"metadata":{"uid":"00000000-0000-0000-0000-000000000000"}}`, nil, 409, metav1.StatusReasonConflict, ""},
		{"apply without fieldManager", "x", types.ApplyYAMLPatchType, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", nil, 422, metav1.StatusReasonInvalid,
			`PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`},
		{"force on a merge patch", "x", types.MergePatchType, `{}`, map[string]string{"force": "true"}, 422, metav1.StatusReasonInvalid,
			`PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch`},
		{"bad dryRun", "x", types.MergePatchType, `{}`, map[string]string{"dryRun": "Some"}, 422, metav1.StatusReasonInvalid, ""},
		{"strict unknown field", "x", types.MergePatchType, `{"datum":{"a":"b"}}`, map[string]string{"fieldValidation": "Strict"}, 422, metav1.StatusReasonInvalid, ""},
		{"strict duplicate field", "x", types.StrategicMergePatchType, `{"data":{"a":"b","a":"c"}}`, map[string]string{"fieldValidation": "Strict"}, 422, metav1.StatusReasonInvalid, ""},
		{"too many json patch operations", "x", types.JSONPatchType, "[" + strings.Repeat(`{"op":"test","path":"/data/k","value":"w"},`, 10000) + `{"op":"test","path":"/data/k","value":"w"}]`, nil,
			413, metav1.StatusReasonRequestEntityTooLarge, "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"},
		{"apply with another name", "x", types.ApplyYAMLPatchType, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"y\"}\n", map[string]string{"fieldManager": "m"}, 400, metav1.StatusReasonBadRequest,
			"the name of the object (y) does not match the name on the URL (x)"},
		{"apply creating with a uid", "new", types.ApplyYAMLPatchType, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: new, uid: \"1234\"}\n", map[string]string{"fieldManager": "m"}, 409, metav1.StatusReasonConflict,
			`Operation cannot be fulfilled on configmaps "new": uid mismatch: the provided object specified uid 1234, and no existing object was found`},
		{"apply of the wrong version", "x", types.ApplyYAMLPatchType, "apiVersion: v2\nkind: ConfigMap\nmetadata: {name: x}\n", map[string]string{"fieldManager": "m"}, 400, metav1.StatusReasonBadRequest, ""},
		{"apply with managedFields", "x", types.ApplyYAMLPatchType, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, managedFields: [{manager: m}]}\n", map[string]string{"fieldManager": "m"}, 400, metav1.StatusReasonBadRequest,
			"metadata.managedFields must be nil"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, raw, err := rawPatch(cs, "patch-errors", "configmaps", tc.target, tc.pt, tc.body, tc.params)
			if err == nil {
				t.Fatalf("got %d %s, want an error", code, raw)
			}
			e2eutil.WantStatus(t, err, tc.code, tc.reason, tc.msg)
		})
	}
	got, err := cms.Get(ctx, "x", metav1.GetOptions{})
	if err != nil || got.Data["k"] != "w" || len(got.Data) != 1 || got.Labels["a"] != "1" {
		t.Errorf("a failed patch changed the object: %v %+v", err, got)
	}
}

func TestPatchFieldValidationWarnsAndDryRun(t *testing.T) {
	ts, cs := e2eutil.APIServer(t)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "patch-warn")
	cms := cs.CoreV1().ConfigMaps("patch-warn")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := ts.HTTPClient(t)
	req, _ := http.NewRequest(http.MethodPatch, ts.URL()+"/api/v1/namespaces/patch-warn/configmaps/x?dryRun=All", strings.NewReader(`{"datum":1,"data":{"k":"dry"}}`))
	req.Header.Set("Content-Type", string(types.MergePatchType))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(resp)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(body, `"k":"dry"`) {
		t.Fatalf("dry run: %d %s", resp.StatusCode, body)
	}
	e2eutil.MustContain(t, "Warning header", strings.Join(resp.Header.Values("Warning"), "\n"), `unknown field \"datum\"`)
	if got, _ := cms.Get(ctx, "x", metav1.GetOptions{}); got.Data["k"] != "v" {
		t.Errorf("dry run stored: %+v", got.Data)
	}
}

func TestPatchScaleAndStatus(t *testing.T) {
	_, cs := e2eutil.APIServer(t)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "patch-sub")
	deps := cs.AppsV1().Deployments("patch-sub")
	if _, err := deps.Create(ctx, e2eutil.WebDeployment(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sc, err := deps.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{}, "scale")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := deps.Get(ctx, "web", metav1.GetOptions{}); *got.Spec.Replicas != 5 {
		t.Errorf("scale patch: %+v replicas %d", sc, *got.Spec.Replicas)
	}
	got, err := deps.Patch(ctx, "web", types.MergePatchType, []byte(`{"status":{"replicas":3},"spec":{"paused":true}}`), metav1.PatchOptions{}, "status")
	if err != nil || got.Status.Replicas != 3 || got.Spec.Paused {
		t.Fatalf("status patch: %v %+v paused=%v", err, got.Status, got.Spec.Paused)
	}
	// The main resource ignores status.
	got, err = deps.Patch(ctx, "web", types.MergePatchType, []byte(`{"status":{"replicas":9}}`), metav1.PatchOptions{})
	if err != nil || got.Status.Replicas != 3 {
		t.Fatalf("status through the main resource: %v %+v", err, got.Status)
	}
	_, err = deps.Patch(ctx, "nope", types.MergePatchType, []byte(`{"spec":{"replicas":1}}`), metav1.PatchOptions{}, "scale")
	if !apierrors.IsNotFound(err) {
		t.Errorf("scale patch of a missing deployment: %v", err)
	}
	// A subresource that is not patched in kube is not here either.
	err = cs.CoreV1().RESTClient().Patch(types.MergePatchType).Resource("namespaces").Name("patch-sub").SubResource("finalize").
		Body([]byte(`{}`)).Do(ctx).Error()
	if !apierrors.IsMethodNotSupported(err) {
		t.Errorf("patch of namespaces/finalize: %v", err)
	}
}

// Concurrent merge patches without a resourceVersion each land: a patch
// that loses a race is applied again to the new live object.
func TestPatchConcurrentNoLostUpdate(t *testing.T) {
	_, cs := e2eutil.APIServer(t)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "patch-race")
	cms := cs.CoreV1().ConfigMaps("patch-race")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "shared"}, Data: map[string]string{"seed": "0"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"data":{"key-%02d":"%d"}}`, i, i)
			if _, err := cms.Patch(ctx, "shared", types.MergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
				errs <- fmt.Errorf("patch %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := cms.Get(ctx, "shared", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if v := got.Data[fmt.Sprintf("key-%02d", i)]; v != fmt.Sprint(i) {
			t.Errorf("key-%02d = %q: an update was lost", i, v)
		}
	}
	if len(got.Data) != n+1 {
		t.Errorf("got %d keys, want %d", len(got.Data), n+1)
	}
}

// entries renders managedFields as "manager/operation/subresource: top-level
// fieldsV1 keys", sorted, for golden-ish comparisons.
func entries(t *testing.T, mf []metav1.ManagedFieldsEntry) []string {
	t.Helper()
	var out []string
	for _, e := range mf {
		if e.APIVersion == "" || e.FieldsType != "FieldsV1" || e.Time == nil || e.FieldsV1 == nil {
			t.Errorf("incomplete entry: %+v", e)
			continue
		}
		fields := map[string]map[string]any{}
		if err := json.Unmarshal(e.FieldsV1.Raw, &fields); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for k, v := range fields {
			var sub []string
			for s := range v {
				sub = append(sub, s)
			}
			sort.Strings(sub)
			keys = append(keys, k+"{"+strings.Join(sub, ",")+"}")
		}
		sort.Strings(keys)
		out = append(out, fmt.Sprintf("%s/%s/%s: %s", e.Manager, e.Operation, e.Subresource, strings.Join(keys, " ")))
	}
	sort.Strings(out)
	return out
}

func wantEntries(t *testing.T, what string, mf []metav1.ManagedFieldsEntry, want ...string) {
	t.Helper()
	got := entries(t, mf)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s: managedFields\n%s\nwant\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestManagedFieldsOnWrites(t *testing.T) {
	ts, cs := e2eutil.APIServer(t)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "managed")
	cms := cs.CoreV1().ConfigMaps("managed")

	created, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Labels: map[string]string{"app": "a"}}, Data: map[string]string{"k": "v"}},
		metav1.CreateOptions{FieldManager: "creator"})
	if err != nil {
		t.Fatal(err)
	}
	wantEntries(t, "after create", created.ManagedFields, "creator/Update/: f:data{.,f:k} f:metadata{f:labels}")
	if e := created.ManagedFields[0]; e.APIVersion != "v1" || e.Operation != metav1.ManagedFieldsOperationUpdate {
		t.Errorf("entry: %+v", e)
	}

	// No fieldManager: the manager is the User-Agent's prefix.
	cfg := *ts.Config
	cfg.UserAgent = "patch-tester/1.0 (linux) kubernetes/x"
	ua := kubernetes.NewForConfigOrDie(&cfg).CoreV1().ConfigMaps("managed")
	created.Data["k2"] = "v2"
	updated, err := ua.Update(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantEntries(t, "after update", updated.ManagedFields,
		"creator/Update/: f:data{.,f:k} f:metadata{f:labels}",
		"patch-tester/Update/: f:data{f:k2}")

	patched, err := cms.Patch(ctx, "x", types.MergePatchType, []byte(`{"data":{"k":"changed"}}`), metav1.PatchOptions{FieldManager: "patcher"})
	if err != nil {
		t.Fatal(err)
	}
	wantEntries(t, "after patch", patched.ManagedFields,
		"creator/Update/: f:data{} f:metadata{f:labels}",
		"patch-tester/Update/: f:data{f:k2}",
		"patcher/Update/: f:data{f:k}")

	// An update that sends no managedFields keeps them; an empty list
	// resets them, as in kube.
	patched.ManagedFields = nil
	patched.Data["k3"] = "v3"
	kept, err := cms.Update(ctx, patched, metav1.UpdateOptions{FieldManager: "third"})
	if err != nil || len(kept.ManagedFields) != 4 {
		t.Fatalf("update without managedFields: %v %d entries", err, len(kept.ManagedFields))
	}
	kept.ManagedFields = []metav1.ManagedFieldsEntry{{}}
	reset, err := cms.Update(ctx, kept, metav1.UpdateOptions{FieldManager: "third"})
	if err != nil || len(reset.ManagedFields) != 0 {
		t.Fatalf("reset: %v %+v", err, reset.ManagedFields)
	}

	// Status writes are recorded with their subresource.
	deps := cs.AppsV1().Deployments("managed")
	if _, err := deps.Create(ctx, e2eutil.WebDeployment(), metav1.CreateOptions{FieldManager: "creator"}); err != nil {
		t.Fatal(err)
	}
	st, err := deps.Patch(ctx, "web", types.MergePatchType, []byte(`{"status":{"replicas":2}}`), metav1.PatchOptions{FieldManager: "controller"}, "status")
	if err != nil {
		t.Fatal(err)
	}
	wantEntries(t, "after status patch", st.ManagedFields,
		"controller/Update/status: f:status{f:replicas}",
		"creator/Update/: f:metadata{f:labels} f:spec{f:progressDeadlineSeconds,f:replicas,f:revisionHistoryLimit,f:selector,f:strategy,f:template}")
}

func TestServerSideApply(t *testing.T) {
	_, cs := e2eutil.APIServer(t)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "ssa")
	cms := cs.CoreV1().ConfigMaps("ssa")
	apply := func(manager string, force bool, data map[string]string) (*corev1.ConfigMap, error) {
		return cms.Apply(ctx, corev1ac.ConfigMap("cfg", "ssa").WithData(data), metav1.ApplyOptions{FieldManager: manager, Force: force})
	}

	// Apply creates, with 201.
	code, _, err := rawPatch(cs, "ssa", "configmaps", "cfg", types.ApplyYAMLPatchType,
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"1\"\n  b: \"2\"\n", map[string]string{"fieldManager": "alice"})
	if err != nil || code != http.StatusCreated {
		t.Fatalf("apply create: %d %v", code, err)
	}
	created, err := cms.Get(ctx, "cfg", metav1.GetOptions{})
	if err != nil || created.Namespace != "ssa" || created.UID == "" {
		t.Fatalf("get: %v %+v", err, created)
	}
	wantEntries(t, "after apply create", created.ManagedFields, "alice/Apply/: f:data{f:a,f:b}")

	// Applying the same again changes nothing, not even the resourceVersion.
	again, err := apply("alice", false, map[string]string{"a": "1", "b": "2"})
	if err != nil || again.ResourceVersion != created.ResourceVersion {
		t.Fatalf("re-apply: %v rv %s -> %s", err, created.ResourceVersion, again.ResourceVersion)
	}

	// Another manager setting alice's field to another value conflicts.
	_, err = apply("bob", false, map[string]string{"a": "x", "b": "y"})
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("conflict: %v", err)
	}
	st := se.ErrStatus
	if st.Code != 409 || st.Message != "Apply failed with 2 conflicts: conflicts with \"alice\":\n- .data.a\n- .data.b" || st.Details == nil || len(st.Details.Causes) != 2 {
		t.Fatalf("conflict status: %+v", st)
	}
	for i, f := range []string{".data.a", ".data.b"} {
		c := st.Details.Causes[i]
		if c.Type != metav1.CauseTypeFieldManagerConflict || c.Field != f || c.Message != `conflict with "alice"` {
			t.Errorf("cause %d: %+v", i, c)
		}
	}
	_, err = apply("bob", false, map[string]string{"a": "x"})
	e2eutil.WantStatus(t, err, 409, metav1.StatusReasonConflict, `Apply failed with 1 conflict: conflict with "alice": .data.a`)

	// Two managers share a field when they apply the same value.
	shared, err := apply("bob", false, map[string]string{"a": "1", "c": "3"})
	if err != nil {
		t.Fatal(err)
	}
	wantEntries(t, "shared", shared.ManagedFields, "alice/Apply/: f:data{f:a,f:b}", "bob/Apply/: f:data{f:a,f:c}")

	// Force takes the field over.
	forced, err := apply("bob", true, map[string]string{"a": "x", "c": "3"})
	if err != nil || forced.Data["a"] != "x" {
		t.Fatalf("force: %v %+v", err, forced)
	}
	wantEntries(t, "forced", forced.ManagedFields, "alice/Apply/: f:data{f:b}", "bob/Apply/: f:data{f:a,f:c}")

	// A field no longer applied by its only manager is removed.
	dropped, err := apply("alice", false, map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := dropped.Data["b"]; ok || dropped.Data["a"] != "x" || dropped.Data["c"] != "3" {
		t.Errorf("after alice drops b: %+v", dropped.Data)
	}

	// An update takes fields over without conflict, as kube's Update does.
	dropped.Data["c"] = "updated"
	upd, err := cms.Update(ctx, dropped, metav1.UpdateOptions{FieldManager: "carol"})
	if err != nil {
		t.Fatal(err)
	}
	wantEntries(t, "after update", upd.ManagedFields, "bob/Apply/: f:data{f:a}", "carol/Update/: f:data{f:c}")

	// A resourceVersion in the applied configuration is a precondition.
	_, err = cms.Apply(ctx, corev1ac.ConfigMap("cfg", "ssa").WithResourceVersion(created.ResourceVersion).WithData(map[string]string{"d": "4"}), metav1.ApplyOptions{FieldManager: "dave"})
	e2eutil.WantStatus(t, err, 409, metav1.StatusReasonConflict, "")

	// Strict field validation rejects a duplicate field.
	_, _, err = rawPatch(cs, "ssa", "configmaps", "cfg", types.ApplyYAMLPatchType,
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  e: \"1\"\n  e: \"2\"\n", map[string]string{"fieldManager": "erin", "fieldValidation": "Strict"})
	e2eutil.WantStatus(t, err, 400, metav1.StatusReasonBadRequest, "")

	// An unknown field is never accepted by apply.
	_, _, err = rawPatch(cs, "ssa", "configmaps", "cfg", types.ApplyYAMLPatchType,
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndatum: {}\n", map[string]string{"fieldManager": "erin", "fieldValidation": "Ignore"})
	// kube answers the field manager's error as it comes, a 500.
	e2eutil.WantStatus(t, err, 500, metav1.StatusReasonUnknown, "failed to create typed patch object (/cfg; /v1, Kind=ConfigMap): .datum: field not declared in schema")
}

func TestApplyDeploymentWithDefaults(t *testing.T) {
	_, cs := e2eutil.APIServer(t)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "ssa-apps")
	deps := cs.AppsV1().Deployments("ssa-apps")
	manifest := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports:
        - containerPort: 80
`
	var status int
	res := cs.AppsV1().RESTClient().Patch(types.ApplyYAMLPatchType).Namespace("ssa-apps").Resource("deployments").Name("web").
		Param("fieldManager", "deployer").Body([]byte(manifest)).Do(ctx).StatusCode(&status)
	if err := res.Error(); err != nil || status != http.StatusCreated {
		t.Fatalf("apply: %d %v", status, err)
	}
	got, err := deps.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Generation != 1 || *got.Spec.RevisionHistoryLimit != 10 || got.Spec.Template.Spec.Containers[0].ImagePullPolicy != corev1.PullIfNotPresent ||
		got.Spec.Template.Spec.Containers[0].Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("defaults after apply: %+v", got.Spec)
	}
	wantEntries(t, "deployment apply", got.ManagedFields, "deployer/Apply/: f:spec{f:replicas,f:selector,f:template}")

	// Another manager adds a container; the list merges by name.
	side := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: sidecar
        image: busybox:1
`
	res = cs.AppsV1().RESTClient().Patch(types.ApplyYAMLPatchType).Namespace("ssa-apps").Resource("deployments").Name("web").
		Param("fieldManager", "injector").Body([]byte(side)).Do(ctx)
	if err := res.Error(); err != nil {
		t.Fatal(err)
	}
	got, _ = deps.Get(ctx, "web", metav1.GetOptions{})
	if n := len(got.Spec.Template.Spec.Containers); n != 2 || got.Generation != 2 {
		t.Errorf("containers after second apply: %d, generation %d", n, got.Generation)
	}
}

func TestManagedFieldsDroppedWhenTooLarge(t *testing.T) {
	_, cs := e2eutil.APIServer(t)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "large")
	cms := cs.CoreV1().ConfigMaps("large")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "big"}, Data: map[string]string{}}
	for i := range 9999 {
		cm.Data[fmt.Sprintf("this-key-is-very-long-so-as-to-create-a-very-large-serialized-fieldset-%v", i)] = "A"
	}
	// Near etcd's limit alone, over it with managedFields: kube stores it
	// without them.
	got, err := cms.Create(ctx, cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create near the size limit: %v", err)
	}
	if len(got.ManagedFields) != 0 || len(got.Data) != 9999 {
		t.Errorf("stored with %d managedFields entries, %d keys", len(got.ManagedFields), len(got.Data))
	}
	// An apply, whose managedFields are the point, is refused.
	_, err = cms.Apply(ctx, corev1ac.ConfigMap("big", "large"), metav1.ApplyOptions{FieldManager: "apply_test"})
	if err == nil {
		t.Fatal("apply over the size limit succeeded")
	}
}

// kubectlEnv is kubectl with extra environment, for KUBE_EDITOR.
func kubectlEnv(t *testing.T, ts *testserver.TestServer, env []string, args ...string) (string, error) {
	t.Helper()
	path, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on PATH; this test needs the real kubectl")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, append([]string{"--kubeconfig", ts.Kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

const ssaConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: kpatch
data:
  mode: fast
`

// Every kubectl command that patches: client-side apply (a three-way
// strategic merge with the last-applied annotation), server-side apply
// with and without force, patch of each type, label, annotate, scale,
// set image and edit.
func TestKubectlPatchCommands(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	dir := t.TempDir()
	dep := filepath.Join(dir, "deployment.yaml")
	cm := filepath.Join(dir, "configmap.yaml")
	write := func(path, s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	depYAML := strings.ReplaceAll(deploymentYAML, "namespace: demo", "namespace: kpatch")
	write(dep, depYAML)
	write(cm, ssaConfigMap)
	editor := filepath.Join(dir, "editor.sh")
	write(editor, "#!/bin/sh\nsed -i 's/mode: slow/mode: edited/' \"$1\"\n")
	if err := os.Chmod(editor, 0o700); err != nil {
		t.Fatal(err)
	}

	run := func(args ...string) string {
		t.Helper()
		out, err := e2eutil.Kubectl(t, ts, args...)
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	jsonpath := func(kind, name, path string) string {
		t.Helper()
		return run("-n", "kpatch", "get", kind, name, "-o", "jsonpath="+path)
	}

	e2eutil.MustContain(t, "create namespace", run("create", "namespace", "kpatch"), "namespace/kpatch created")
	e2eutil.MustContain(t, "apply", run("apply", "-f", dep), "deployment.apps/web created")
	write(dep, strings.Replace(depYAML, "image: nginx:1.27", "image: nginx:1.28", 1))
	e2eutil.MustContain(t, "apply after a change", run("apply", "-f", dep), "deployment.apps/web configured")
	if got := jsonpath("deployment", "web", "{.spec.template.spec.containers[0].image}"); got != "nginx:1.28" {
		t.Errorf("image after apply: %q", got)
	}
	e2eutil.MustContain(t, "managedFields", run("-n", "kpatch", "get", "deployment", "web", "-o", "yaml", "--show-managed-fields"),
		"manager: kubectl-client-side-apply", "operation: Update", "f:kubectl.kubernetes.io/last-applied-configuration: {}")

	e2eutil.MustContain(t, "patch json", run("-n", "kpatch", "patch", "deployment", "web", "--type", "json", "-p", `[{"op":"add","path":"/metadata/labels/tier","value":"front"}]`), "deployment.apps/web patched")
	e2eutil.MustContain(t, "patch merge", run("-n", "kpatch", "patch", "deployment", "web", "--type", "merge", "-p", `{"metadata":{"annotations":{"owner":"team"}}}`), "deployment.apps/web patched")
	e2eutil.MustContain(t, "patch strategic", run("-n", "kpatch", "patch", "deployment", "web", "--type", "strategic", "-p",
		`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","ports":[{"containerPort":443}]}]}}}}`), "deployment.apps/web patched")
	if got := jsonpath("deployment", "web", "{.metadata.labels.tier} {.metadata.annotations.owner} {.spec.template.spec.containers[0].ports[*].containerPort}"); got != "front team 443 80" {
		t.Errorf("after patches: %q", got)
	}
	e2eutil.MustContain(t, "label", run("-n", "kpatch", "label", "deployment", "web", "env=prod"), "deployment.apps/web labeled")
	e2eutil.MustContain(t, "annotate", run("-n", "kpatch", "annotate", "deployment", "web", "note=hi"), "deployment.apps/web annotated")
	e2eutil.MustContain(t, "scale", run("-n", "kpatch", "scale", "deployment", "web", "--replicas=3"), "deployment.apps/web scaled")
	e2eutil.MustContain(t, "set image", run("-n", "kpatch", "set", "image", "deployment/web", "nginx=nginx:2"), "deployment.apps/web image updated")
	if got := jsonpath("deployment", "web", "{.metadata.labels.env} {.metadata.annotations.note} {.spec.replicas} {.spec.template.spec.containers[0].image}"); got != "prod hi 3 nginx:2" {
		t.Errorf("after label, annotate, scale, set image: %q", got)
	}

	// Server-side apply, a conflicting change by another manager, and force.
	e2eutil.MustContain(t, "apply --server-side", run("apply", "--server-side", "-f", cm), "configmap/settings serverside-applied")
	e2eutil.MustContain(t, "patch", run("-n", "kpatch", "patch", "configmap", "settings", "--type", "merge", "-p", `{"data":{"mode":"slow"}}`), "configmap/settings patched")
	out, err := e2eutil.Kubectl(t, ts, "apply", "--server-side", "-f", cm)
	if err == nil {
		t.Fatalf("conflicting server-side apply succeeded:\n%s", out)
	}
	e2eutil.MustContain(t, "conflict", out, "Apply failed with 1 conflict", `conflict with "kubectl-patch"`, ".data.mode", "--force-conflicts")

	// kubectl edit through an editor script, while the value is "slow".
	out, err = kubectlEnv(t, ts, []string{"KUBE_EDITOR=" + editor, "EDITOR=" + editor}, "-n", "kpatch", "edit", "configmap", "settings")
	if err != nil {
		t.Fatalf("kubectl edit: %v\n%s", err, out)
	}
	e2eutil.MustContain(t, "edit", out, "configmap/settings edited")
	if got := jsonpath("configmap", "settings", "{.data.mode}"); got != "edited" {
		t.Errorf("after edit: %q", got)
	}

	e2eutil.MustContain(t, "apply --server-side --force-conflicts", run("apply", "--server-side", "--force-conflicts", "-f", cm), "configmap/settings serverside-applied")
	if got := jsonpath("configmap", "settings", "{.data.mode}"); got != "fast" {
		t.Errorf("after forced apply: %q", got)
	}
	out = run("-n", "kpatch", "get", "configmap", "settings", "-o", "yaml", "--show-managed-fields")
	e2eutil.MustContain(t, "managedFields after apply", out, "manager: kubectl", "operation: Apply", "f:mode: {}")

	// Server-side apply creates too.
	write(cm, strings.Replace(ssaConfigMap, "name: settings", "name: fresh", 1))
	e2eutil.MustContain(t, "apply --server-side creates", run("apply", "--server-side", "-f", cm), "configmap/fresh serverside-applied")
}

package decode

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/request"
)

var deploymentGVK = appsv1.SchemeGroupVersion.WithKind("Deployment")

func liveDeployment() *appsv1.Deployment {
	replicas := int32(1)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1", ResourceVersion: "7", Labels: map[string]string{"app": "web"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{
					{Name: "nginx", Image: "nginx:1", Ports: []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}}},
					{Name: "sidecar", Image: "busybox:1"},
				}},
			},
		},
	}
}

// summary renders what the tables check: labels, and each container
// with its image and ports.
func summary(d *appsv1.Deployment) string {
	var b strings.Builder
	fmt.Fprintf(&b, "labels=%v replicas=%d", d.Labels, *d.Spec.Replicas)
	for _, c := range d.Spec.Template.Spec.Containers {
		fmt.Fprintf(&b, " %s=%s", c.Name, c.Image)
		for _, p := range c.Ports {
			fmt.Fprintf(&b, ":%d", p.ContainerPort)
		}
	}
	return b.String()
}

func statusCode(err error) int32 {
	if s, ok := err.(apierrors.APIStatus); ok {
		return s.Status().Code
	}
	return 0
}

// errText is an error's message and those of its causes, where kube
// puts the detail of a 422 for a patch that does not apply.
func errText(err error) string {
	text := err.Error()
	if s, ok := err.(apierrors.APIStatus); ok && s.Status().Details != nil {
		for _, c := range s.Status().Details.Causes {
			text += "; " + c.Message
		}
	}
	return text
}

func TestPatchObject(t *testing.T) {
	big := strings.Repeat("x", 512<<10)
	tests := []struct {
		name       string
		pt         types.PatchType
		patch      string
		validation string
		want       string // summary, when the patch applies
		code       int32  // the error's code otherwise
		msg        string // part of the error's message
		warnings   int
	}{
		// RFC 6902.
		{name: "json add", pt: types.JSONPatchType, patch: `[{"op":"add","path":"/metadata/labels/tier","value":"front"}]`,
			want: "labels=map[app:web tier:front] replicas=1 nginx=nginx:1:80 sidecar=busybox:1"},
		{name: "json replace in a list", pt: types.JSONPatchType, patch: `[{"op":"replace","path":"/spec/template/spec/containers/1/image","value":"busybox:2"}]`,
			want: "labels=map[app:web] replicas=1 nginx=nginx:1:80 sidecar=busybox:2"},
		{name: "json test and replace", pt: types.JSONPatchType, patch: `[{"op":"test","path":"/spec/replicas","value":1},{"op":"replace","path":"/spec/replicas","value":3}]`,
			want: "labels=map[app:web] replicas=3 nginx=nginx:1:80 sidecar=busybox:1"},
		{name: "json test fails", pt: types.JSONPatchType, patch: `[{"op":"test","path":"/spec/replicas","value":2}]`,
			code: 422, msg: "the server rejected our request due to an error in our request"},
		{name: "json remove of a missing path", pt: types.JSONPatchType, patch: `[{"op":"remove","path":"/metadata/annotations/x"}]`,
			code: 422},
		{name: "json patch not a list", pt: types.JSONPatchType, patch: `{"op":"add"}`, code: 400},
		{name: "json patch over the operation limit", pt: types.JSONPatchType,
			patch: "[" + strings.Repeat(`{"op":"test","path":"/kind","value":"Deployment"},`, maxJSONPatchOperations) + `{"op":"test","path":"/kind","value":"Deployment"}]`,
			code:  413, msg: "The allowed maximum operations in a JSON patch is 10000, got 10001"},
		{name: "json copies within the size limit", pt: types.JSONPatchType,
			patch: `[{"op":"add","path":"/metadata/annotations","value":{"a":"` + big + `"}}` + strings.Repeat(`,{"op":"copy","from":"/metadata/annotations/a","path":"/metadata/labels/b"}`, 5) + `,{"op":"remove","path":"/metadata/labels/b"}]`,
			want:  "labels=map[app:web] replicas=1 nginx=nginx:1:80 sidecar=busybox:1"},
		{name: "json copies over the size limit", pt: types.JSONPatchType,
			patch: `[{"op":"add","path":"/metadata/annotations","value":{"a":"` + big + `"}}` + strings.Repeat(`,{"op":"copy","from":"/metadata/annotations/a","path":"/metadata/labels/b"}`, 7) + "]",
			code:  422},
		{name: "json unknown op field strict", pt: types.JSONPatchType, validation: metav1.FieldValidationStrict,
			patch: `[{"op":"add","path":"/metadata/labels/a","value":"b","extra":1}]`, code: 422, msg: `json patch unknown field "[0].extra"`},
		{name: "json unknown op field warns", pt: types.JSONPatchType,
			patch: `[{"op":"add","path":"/metadata/labels/a","value":"b","extra":1}]`, warnings: 1,
			want: "labels=map[a:b app:web] replicas=1 nginx=nginx:1:80 sidecar=busybox:1"},
		{name: "json test without a value", pt: types.JSONPatchType, patch: `[{"op":"test","path":""}]`, code: 400, msg: "invalid patch"},
		{name: "json changes the kind", pt: types.JSONPatchType, patch: `[{"op":"replace","path":"/kind","value":"StatefulSet"}]`, code: 422},

		// RFC 7386.
		{name: "merge sets", pt: types.MergePatchType, patch: `{"spec":{"replicas":2},"metadata":{"labels":{"tier":"x"}}}`,
			want: "labels=map[app:web tier:x] replicas=2 nginx=nginx:1:80 sidecar=busybox:1"},
		{name: "merge null removes", pt: types.MergePatchType, patch: `{"metadata":{"labels":null}}`,
			want: "labels=map[] replicas=1 nginx=nginx:1:80 sidecar=busybox:1"},
		{name: "merge replaces lists", pt: types.MergePatchType, patch: `{"spec":{"template":{"spec":{"containers":[{"name":"only","image":"x"}]}}}}`,
			want: "labels=map[app:web] replicas=1 only=x"},
		{name: "merge unknown field strict", pt: types.MergePatchType, validation: metav1.FieldValidationStrict, patch: `{"spec":{"replica":2}}`,
			code: 422, msg: `unknown field "spec.replica"`},
		{name: "merge unknown field warns", pt: types.MergePatchType, patch: `{"spec":{"replica":2}}`, warnings: 1,
			want: "labels=map[app:web] replicas=1 nginx=nginx:1:80 sidecar=busybox:1"},
		{name: "merge unknown field ignored", pt: types.MergePatchType, validation: metav1.FieldValidationIgnore, patch: `{"spec":{"replica":2}}`,
			want: "labels=map[app:web] replicas=1 nginx=nginx:1:80 sidecar=busybox:1"},
		{name: "merge duplicate field strict", pt: types.MergePatchType, validation: metav1.FieldValidationStrict, patch: `{"spec":{"replicas":2,"replicas":3}}`,
			code: 422, msg: `duplicate field "spec.replicas"`},
		{name: "merge wrong type", pt: types.MergePatchType, patch: `{"spec":{"replicas":"two"}}`, code: 422},
		{name: "merge not an object", pt: types.MergePatchType, patch: `[1]`, code: 400},

		// Strategic merge, by the struct tags of apps/v1.
		{name: "strategic merges containers by name", pt: types.StrategicMergePatchType,
			patch: `{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox:2"}]}}}}`,
			want:  "labels=map[app:web] replicas=1 nginx=nginx:1:80 sidecar=busybox:2"},
		{name: "strategic adds a container", pt: types.StrategicMergePatchType,
			patch: `{"spec":{"template":{"spec":{"containers":[{"name":"new","image":"n:1"}]}}}}`,
			want:  "labels=map[app:web] replicas=1 new=n:1 nginx=nginx:1:80 sidecar=busybox:1"},
		{name: "strategic merges ports by containerPort", pt: types.StrategicMergePatchType,
			patch: `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","ports":[{"containerPort":443}]}]}}}}`,
			want:  "labels=map[app:web] replicas=1 nginx=nginx:1:443:80 sidecar=busybox:1"},
		{name: "strategic deletes by key", pt: types.StrategicMergePatchType,
			patch: `{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}}}}`,
			want:  "labels=map[app:web] replicas=1 nginx=nginx:1:80"},
		{name: "strategic replace directive", pt: types.StrategicMergePatchType,
			patch: `{"spec":{"template":{"spec":{"containers":[{"name":"solo","image":"s"}],"$patch":"replace"}}}}`,
			want:  "labels=map[app:web] replicas=1 solo=s"},
		// kube passes this error on as it is: a 500.
		{name: "strategic unknown directive", pt: types.StrategicMergePatchType, patch: `{"$patch":"bogus"}`, code: 500, msg: "unknown patch type: bogus"},
		{name: "strategic list of lists", pt: types.StrategicMergePatchType, patch: `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","args":[["a"]]}]}}}}`, code: 422},
		{name: "strategic duplicate field strict", pt: types.StrategicMergePatchType, validation: metav1.FieldValidationStrict,
			patch: `{"metadata":{"labels":{"a":"1","a":"2"}}}`, code: 422, msg: `duplicate field "metadata.labels.a"`},
		{name: "strategic unknown field strict", pt: types.StrategicMergePatchType, validation: metav1.FieldValidationStrict,
			patch: `{"spec":{"bogus":1}}`, code: 422, msg: `unknown field "spec.bogus"`},
		{name: "strategic list as a merge key", pt: types.StrategicMergePatchType,
			patch: `{"spec":{"template":{"spec":{"containers":[{"name":[]}]}}}}`, code: 400, msg: "invalid patch"},
		{name: "strategic not JSON", pt: types.StrategicMergePatchType, patch: `{`, code: 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj, warnings, err := patchObject(tc.pt, liveDeployment(), []byte(tc.patch), deploymentGVK, tc.validation)
			if tc.code != 0 {
				if err == nil {
					t.Fatalf("patched to %s, want a %d error", summary(obj.(*appsv1.Deployment)), tc.code)
				}
				if statusCode(err) != tc.code || !strings.Contains(errText(err), tc.msg) {
					t.Fatalf("got %d %v, want %d with %q", statusCode(err), err, tc.code, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			d, ok := obj.(*appsv1.Deployment)
			if !ok {
				t.Fatalf("got a %T", obj)
			}
			if got := summary(d); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if len(warnings) != tc.warnings {
				t.Errorf("warnings %q, want %d", warnings, tc.warnings)
			}
			if d.ResourceVersion != "7" || d.UID != "u1" {
				t.Errorf("metadata lost: %+v", d.ObjectMeta)
			}
		})
	}
}

func TestPatchTypeOf(t *testing.T) {
	tests := []struct {
		name, contentType string
		want              types.PatchType
	}{
		{"json patch", "application/json-patch+json", types.JSONPatchType},
		{"merge with charset", "application/merge-patch+json; charset=utf-8", types.MergePatchType},
		{"strategic", "application/strategic-merge-patch+json", types.StrategicMergePatchType},
		{"apply", "application/apply-patch+yaml", types.ApplyYAMLPatchType},
		{"plain json", "application/json", ""},
		{"apply cbor", "application/apply-patch+cbor", ""},
		{"none", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPatch, "/api/v1/namespaces/ns/configmaps/x", nil)
			r.Header.Set("Content-Type", tc.contentType)
			got, err := patchTypeOf(r)
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if tc.want == "" {
				want := "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml"
				if statusCode(err) != 415 || err.Error() != want {
					t.Errorf("got %v", err)
				}
			}
		})
	}
}

func TestCheckApply(t *testing.T) {
	cms := &api.Resource{GroupVersion: corev1.SchemeGroupVersion, Name: "configmaps", Kind: "ConfigMap", Namespaced: true}
	live := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns", ResourceVersion: "5"}}
	tests := []struct {
		name          string
		body          string
		old           runtime.Object
		code          int32
		msg           string
		unconditional bool
	}{
		{name: "applies to the live object", body: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", old: live, unconditional: true},
		{name: "name may be left out on an existing object", body: "apiVersion: v1\nkind: ConfigMap\n", old: live, unconditional: true},
		{name: "resourceVersion is a precondition", body: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, resourceVersion: \"4\"}\n", old: live},
		{name: "other name", body: "metadata: {name: other}\n", old: live, code: 400, msg: "the name of the object (other) does not match the name on the URL (x)"},
		{name: "no name on create", body: "kind: ConfigMap\n", code: 400, msg: "the name of the object () does not match the name on the URL (x)"},
		{name: "other namespace", body: "metadata: {name: x, namespace: other}\n", old: live, code: 400,
			msg: "the namespace of the provided object does not match the namespace sent on the request"},
		{name: "uid on create", body: "metadata: {name: x, uid: abc}\n", code: 409,
			msg: `Operation cannot be fulfilled on configmaps "x": uid mismatch: the provided object specified uid abc, and no existing object was found`},
		{name: "not an object", body: "- a\n- b\n", old: live, code: 400, msg: "error decoding patch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := &request.Operation{Resource: cms, Namespace: "ns", Name: "x", Old: tc.old, Created: tc.old == nil}
			err := checkApply(op, cms, []byte(tc.body))
			if tc.code != 0 {
				if statusCode(err) != tc.code || err.Error() != tc.msg && !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("got %v, want %d %q", err, tc.code, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if op.Unconditional != tc.unconditional {
				t.Errorf("unconditional = %v", op.Unconditional)
			}
		})
	}
}

func TestSubresourceView(t *testing.T) {
	d := liveDeployment()
	d.Status.Replicas = 4
	obj, err := subresourceView(d, autoscalingv1.SchemeGroupVersion.WithKind("Scale"))
	if err != nil {
		t.Fatal(err)
	}
	s := obj.(*autoscalingv1.Scale)
	if s.Name != "web" || s.Namespace != "ns" || s.ResourceVersion != "7" || s.Spec.Replicas != 1 || s.Status.Replicas != 4 || s.Status.Selector != "app=web" {
		t.Errorf("scale view: %+v", s)
	}
	patched, _, err := patchObject(types.MergePatchType, s, []byte(`{"spec":{"replicas":3}}`), autoscalingv1.SchemeGroupVersion.WithKind("Scale"), "")
	if err != nil || patched.(*autoscalingv1.Scale).Spec.Replicas != 3 {
		t.Fatalf("scale patch: %v %+v", err, patched)
	}
	if _, err := subresourceView(&corev1.ConfigMap{}, autoscalingv1.SchemeGroupVersion.WithKind("Scale")); err == nil {
		t.Error("a ConfigMap has no scale")
	}
}

func TestEnsureNamespace(t *testing.T) {
	tests := []struct {
		name, objNS string
		namespaced  bool
		want        string
		fails       bool
	}{
		{"same", "ns", true, "ns", false},
		{"empty takes the request's", "", true, "ns", false},
		{"other fails", "other", true, "", true},
		{"cluster-scoped clears", "ns", false, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := &metav1.ObjectMeta{Namespace: tc.objNS}
			err := ensureNamespace(m, tc.namespaced, "ns")
			if (err != nil) != tc.fails || (!tc.fails && m.Namespace != tc.want) {
				t.Errorf("err %v namespace %q", err, m.Namespace)
			}
		})
	}
}

// FuzzApplyPatch feeds untrusted patches of the four types to what
// decode does with them: it must never panic, and an accepted patch
// must come back as the live object's kind.
func FuzzApplyPatch(f *testing.F) {
	for _, seed := range []string{
		`[{"op":"add","path":"/metadata/labels/a","value":"b"}]`,
		`[{"op":"copy","from":"/spec","path":"/metadata/annotations/x"}]`,
		`[{"op":"move","from":"/spec/template","path":"/spec/template/spec"}]`,
		`[{"op":"test","path":"/spec/replicas/-1","value":null}]`,
		`{"spec":{"replicas":null,"template":{"spec":{"containers":null}}}}`,
		`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","$patch":"delete"}],"$setElementOrder/containers":[{"name":"x"}]}}}}`,
		`{"$retainKeys":["a"],"metadata":{"$patch":"replace"}}`,
		`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","ports":[{"containerPort":"80"}]}]}}}}`,
		"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  uid: x\n",
		"metadata: [1, 2]\n",
		"null",
		`{"metadata":{"name":{}}}`,
	} {
		for sel := range uint8(16) {
			f.Add(seed, sel)
		}
	}
	pts := []types.PatchType{types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType, types.ApplyYAMLPatchType}
	modes := []string{"", metav1.FieldValidationStrict, metav1.FieldValidationWarn, metav1.FieldValidationIgnore}
	deps := &api.Resource{GroupVersion: appsv1.SchemeGroupVersion, Name: "deployments", Kind: "Deployment", Namespaced: true}
	f.Fuzz(func(t *testing.T, patch string, sel uint8) {
		pt := pts[int(sel)%len(pts)]
		if checkPatchBody(pt, []byte(patch)) != nil {
			return
		}
		if pt == types.ApplyYAMLPatchType {
			var old runtime.Object
			if sel&4 != 0 {
				old = liveDeployment()
			}
			op := &request.Operation{Resource: deps, Namespace: "ns", Name: "web", Old: old, Created: old == nil}
			_ = checkApply(op, deps, []byte(patch))
			return
		}
		obj, _, err := patchObject(pt, liveDeployment(), []byte(patch), deploymentGVK, modes[int(sel/4)%len(modes)])
		if err != nil {
			return
		}
		if _, ok := obj.(*appsv1.Deployment); !ok {
			t.Fatalf("a %s patch gave a %T", pt, obj)
		}
	})
}

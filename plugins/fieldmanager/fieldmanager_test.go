package fieldmanager

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/api/status"
	"github.com/kpipe/kpipe/internal/request"
)

func resource(t testing.TB, group, version, name string) *api.Resource {
	t.Helper()
	reg := api.NewRegistry(api.Resources(api.Options{}))
	res, ok := reg.Lookup(group, version, name)
	if !ok {
		t.Fatalf("no %s/%s %s", group, version, name)
	}
	return res
}

// serve runs op through the stage and returns what the next stage got,
// and the response.
func serve(t testing.TB, s *Stage, op *request.Operation, userAgent string) (*request.Operation, *httptest.ResponseRecorder) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPatch, "/", nil)
	r.Header.Set("User-Agent", userAgent)
	r = r.WithContext(request.WithScope(r.Context(), &request.Scope{Op: op}))
	var got *request.Operation
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = request.OperationFrom(r.Context())
		w.WriteHeader(http.StatusOK)
	})
	w := httptest.NewRecorder()
	s.Middleware(next).ServeHTTP(w, r)
	return got, w
}

// entries renders managedFields as "manager/operation/subresource: fields".
func entries(t testing.TB, obj runtime.Object) string {
	t.Helper()
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range m.GetManagedFields() {
		out = append(out, fmt.Sprintf("%s/%s/%s: %s", e.Manager, e.Operation, e.Subresource, e.FieldsV1.Raw))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func configMap(data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns"}, Data: data}
}

// applied is a live ConfigMap whose data.a "alice" applied.
func applied(t testing.TB, s *Stage, cms *api.Resource) *corev1.ConfigMap {
	t.Helper()
	op := &request.Operation{Resource: cms, Namespace: "ns", Name: "x", PatchType: types.ApplyYAMLPatchType, FieldManager: "alice",
		PatchBytes: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: \"1\"}\n"), Created: true}
	got, w := serve(t, s, op, "")
	if w.Code != http.StatusOK {
		t.Fatalf("apply: %d %s", w.Code, w.Body)
	}
	cm := got.Object.(*corev1.ConfigMap)
	cm.UID, cm.ResourceVersion = "u", "1"
	return cm
}

func TestUpdateRecordsManagers(t *testing.T) {
	cms := resource(t, "", "v1", "configmaps")
	deps := resource(t, "apps", "v1", "deployments")
	live := configMap(map[string]string{"k": "v"})
	live.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "first", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{".":{},"f:k":{}}}`)}}}
	s := newStage()
	// Updates are tracked on objects whose create was.
	created, _ := serve(t, s, &request.Operation{Resource: deps, Object: &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Labels: map[string]string{"app": "web"}}}, FieldManager: "creator"}, "")
	dep := created.Object.(*appsv1.Deployment)
	dep.UID = "u"
	depStatus := dep.DeepCopy()
	depStatus.Status.Replicas = 2
	depStatus.Spec.Paused = true

	tests := []struct {
		name      string
		op        *request.Operation
		userAgent string
		want      string
	}{
		{"create with fieldManager",
			&request.Operation{Resource: cms, Object: configMap(map[string]string{"k": "v"}), FieldManager: "creator"}, "",
			`creator/Update/: {"f:data":{".":{},"f:k":{}}}`},
		{"create named by the User-Agent",
			&request.Operation{Resource: cms, Object: configMap(map[string]string{"k": "v"})}, "kubectl/v1.32.4 (linux/amd64) kubernetes/abc",
			`kubectl/Update/: {"f:data":{".":{},"f:k":{}}}`},
		{"update adds its manager",
			&request.Operation{Resource: cms, Object: configMap(map[string]string{"k": "v", "k2": "v2"}), Old: live, FieldManager: "second"}, "",
			"first/Update/: {\"f:data\":{\".\":{},\"f:k\":{}}}\nsecond/Update/: {\"f:data\":{\"f:k2\":{}}}"},
		{"patch takes a field over",
			&request.Operation{Resource: cms, Object: configMap(map[string]string{"k": "changed"}), Old: live, FieldManager: "patcher", PatchType: types.MergePatchType}, "",
			"first/Update/: {\"f:data\":{}}\npatcher/Update/: {\"f:data\":{\"f:k\":{}}}"},
		{"status is not owned through the main resource",
			&request.Operation{Resource: deps, Object: depStatus.DeepCopy(), Old: dep, FieldManager: "user"}, "",
			"creator/Update/: {\"f:metadata\":{\"f:labels\":{\".\":{},\"f:app\":{}}}}\nuser/Update/: {\"f:spec\":{\"f:paused\":{}}}"},
		{"status subresource records status only",
			&request.Operation{Resource: deps, Subresource: "status", Object: depStatus.DeepCopy(), Old: dep, FieldManager: "controller"}, "",
			"controller/Update/status: {\"f:status\":{\"f:replicas\":{}}}\ncreator/Update/: {\"f:metadata\":{\"f:labels\":{\".\":{},\"f:app\":{}}}}"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, w := serve(t, s, tc.op, tc.userAgent)
			if w.Code != http.StatusOK {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
			if e := entries(t, got.Object); e != tc.want {
				t.Errorf("managedFields\n%s\nwant\n%s", e, tc.want)
			}
		})
	}
}

func TestApply(t *testing.T) {
	cms := resource(t, "", "v1", "configmaps")
	s := newStage()
	apply := func(manager string, force bool, yaml string, old runtime.Object, validation string) (*request.Operation, *httptest.ResponseRecorder) {
		op := &request.Operation{Resource: cms, Namespace: "ns", Name: "x", PatchType: types.ApplyYAMLPatchType, FieldManager: manager, Force: force,
			PatchBytes: []byte(yaml), Old: old, Created: old == nil, FieldValidation: validation}
		return serve(t, s, op, "")
	}
	const header = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"

	tests := []struct {
		name       string
		manager    string
		force      bool
		yaml       string
		validation string
		live       bool
		code       int
		want       string // data, then managedFields
		body       string // part of the response
		warnings   int
	}{
		{name: "creates", manager: "alice", yaml: header + "data: {a: \"1\"}\n",
			want: "map[a:1] ns\nalice/Apply/: {\"f:data\":{\"f:a\":{}}}"},
		{name: "re-apply changes nothing", manager: "alice", live: true, yaml: header + "data: {a: \"1\"}\n",
			want: "map[a:1] ns\nalice/Apply/: {\"f:data\":{\"f:a\":{}}}"},
		{name: "same value is shared", manager: "bob", live: true, yaml: header + "data: {a: \"1\", b: \"2\"}\n",
			want: "map[a:1 b:2] ns\nalice/Apply/: {\"f:data\":{\"f:a\":{}}}\nbob/Apply/: {\"f:data\":{\"f:a\":{},\"f:b\":{}}}"},
		{name: "other value conflicts", manager: "bob", live: true, yaml: header + "data: {a: \"2\"}\n", code: http.StatusConflict,
			body: `"message":"Apply failed with 1 conflict: conflict with \"alice\": .data.a","reason":"Conflict","details":{"causes":[{"reason":"FieldManagerConflict","message":"conflict with \"alice\"","field":".data.a"}]},"code":409`},
		{name: "force takes over", manager: "bob", force: true, live: true, yaml: header + "data: {a: \"2\"}\n",
			want: "map[a:2] ns\nbob/Apply/: {\"f:data\":{\"f:a\":{}}}"},
		{name: "strict duplicate field", manager: "alice", live: true, validation: metav1.FieldValidationStrict, yaml: header + "data: {a: \"2\", a: \"2\"}\n",
			code: http.StatusBadRequest, body: "error strict decoding patch"},
		{name: "duplicate field warns", manager: "alice", live: true, yaml: header + "data: {a: \"2\", a: \"2\"}\n",
			want: "map[a:2] ns\nalice/Apply/: {\"f:data\":{\"f:a\":{}}}\nbob/Apply/: {\"f:data\":{\"f:a\":{}}}", warnings: 1},
		{name: "unknown field", manager: "alice", live: true, yaml: header + "datum: {}\n", code: http.StatusInternalServerError,
			body: `"message":"failed to create typed patch object (/x; /v1, Kind=ConfigMap): .datum: field not declared in schema","code":500`},
		{name: "wrong version", manager: "alice", live: true, yaml: "apiVersion: v2\nkind: ConfigMap\nmetadata: {name: x}\n", code: http.StatusBadRequest,
			body: `"message":"invalid object type: /v2, Kind=ConfigMap","reason":"BadRequest"`},
		{name: "wrong kind", manager: "alice", live: true, yaml: "apiVersion: v1\nkind: Secret\nmetadata: {name: x}\n", code: http.StatusBadRequest},
		{name: "managedFields in the patch", manager: "alice", live: true, yaml: header + "metadata: {name: x, managedFields: [{manager: a}]}\n", code: http.StatusBadRequest,
			body: "metadata.managedFields must be nil"},
	}
	var live runtime.Object
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var old runtime.Object
			if tc.live {
				old = live
			}
			got, w := apply(tc.manager, tc.force, tc.yaml, old, tc.validation)
			if tc.code != 0 {
				if w.Code != tc.code || !strings.Contains(w.Body.String(), tc.body) {
					t.Fatalf("got %d %s\nwant %d with %s", w.Code, w.Body, tc.code, tc.body)
				}
				return
			}
			if w.Code != http.StatusOK {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
			cm := got.Object.(*corev1.ConfigMap)
			if e := fmt.Sprintf("%v %s\n%s", cm.Data, cm.Namespace, entries(t, cm)); e != tc.want {
				t.Errorf("got\n%s\nwant\n%s", e, tc.want)
			}
			if len(got.Warnings) != tc.warnings {
				t.Errorf("warnings %q", got.Warnings)
			}
			cm.UID, cm.ResourceVersion = "u", "1"
			live = cm
		})
	}
}

func TestPassesOn(t *testing.T) {
	deps := resource(t, "apps", "v1", "deployments")
	s := newStage()
	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	tests := []struct {
		name string
		op   *request.Operation
	}{
		{"scale", &request.Operation{Resource: deps, Subresource: "scale", Object: scale, Old: &appsv1.Deployment{}}},
		{"delete", &request.Operation{Resource: deps, Old: &appsv1.Deployment{}, DeleteOptions: &metav1.DeleteOptions{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, w := serve(t, s, tc.op, "")
			if w.Code != http.StatusOK || got.Object != tc.op.Object {
				t.Errorf("%d, object %v", w.Code, got.Object)
			}
		})
	}
}

func TestManagerName(t *testing.T) {
	tests := []struct {
		name, fieldManager, userAgent, want string
	}{
		{"fieldManager wins", "mine", "kubectl/v1.32", "mine"},
		{"prefix of the User-Agent", "", "kubectl/v1.32.4 (linux/amd64) kubernetes/abc", "kubectl"},
		{"no slash", "", "curl", "curl"},
		{"unprintable dropped", "", "a\x00b\tc/1", "abc"},
		{"cut at 128 bytes", "", strings.Repeat("é", 100), strings.Repeat("é", 64)},
		{"empty", "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := managerName(tc.fieldManager, tc.userAgent); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// tooLargeErr is what the store answers when etcd refuses the size.
var tooLargeErr = &apierrors.StatusError{ErrStatus: metav1.Status{
	Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Reason: metav1.StatusReasonUnknown, Message: "etcdserver: request is too large",
}}

func TestTooLargeRetriesWithoutManagedFields(t *testing.T) {
	cms := resource(t, "", "v1", "configmaps")
	tests := []struct {
		name     string
		patch    types.PatchType
		first    error // the first write's answer, nil for success
		writes   int
		code     int
		keptMF   bool
		wantBody string
	}{
		{name: "success answers once", writes: 1, code: http.StatusCreated, keptMF: true, wantBody: "stored"},
		{name: "too large is written again without managedFields", first: tooLargeErr, writes: 2, code: http.StatusCreated, wantBody: "stored"},
		{name: "other server errors pass", first: apierrors.NewInternalError(fmt.Errorf("boom")), writes: 1, code: 500, keptMF: true, wantBody: "boom"},
		{name: "conflicts pass", first: apierrors.NewConflict(cms.GroupResource(), "x", fmt.Errorf("no")), writes: 1, code: 409, keptMF: true, wantBody: "no"},
		{name: "apply is not retried", patch: types.ApplyYAMLPatchType, first: tooLargeErr, writes: 1, code: 500, keptMF: true, wantBody: "too large"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := &request.Operation{Resource: cms, Namespace: "ns", Name: "x", Object: configMap(map[string]string{"k": "v"}), FieldManager: "m", PatchType: tc.patch}
			if tc.patch == types.ApplyYAMLPatchType {
				op.Object, op.Created = nil, true
				op.PatchBytes = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {k: v}\n")
			}
			writes := 0
			var mf int
			next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				writes++
				o, _ := request.OperationFrom(r.Context())
				m, _ := meta.Accessor(o.Object)
				mf = len(m.GetManagedFields())
				w.Header().Add("Warning", fmt.Sprintf("299 - \"write %d\"", writes))
				if writes == 1 && tc.first != nil {
					status.Write(w, tc.first)
					return
				}
				w.WriteHeader(http.StatusCreated)
				_, _ = w.Write([]byte("stored"))
			})
			r := httptest.NewRequest(http.MethodPost, "/", nil)
			r = r.WithContext(request.WithScope(r.Context(), &request.Scope{Op: op}))
			w := httptest.NewRecorder()
			newStage().Middleware(next).ServeHTTP(w, r)
			if writes != tc.writes || w.Code != tc.code || (mf > 0) != tc.keptMF || !strings.Contains(w.Body.String(), tc.wantBody) {
				t.Errorf("writes %d code %d managedFields %d body %s", writes, w.Code, mf, w.Body)
			}
			// Only the answer sent carries its headers.
			if got := w.Header().Values("Warning"); len(got) != 1 || got[0] != fmt.Sprintf("299 - \"write %d\"", writes) {
				t.Errorf("Warning headers %q", got)
			}
		})
	}
}

// FuzzApply feeds untrusted applied configurations to the stage over a
// live object: it must never panic, and what it accepts is a ConfigMap.
func FuzzApply(f *testing.F) {
	for _, seed := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: \"1\"}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, labels: {a: b}, finalizers: [a, a]}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, ownerReferences: [{uid: a}, {uid: a}]}\n",
		"apiVersion: v1\nkind: ConfigMap\ndata: [1]\n",
		"apiVersion: v1\nkind: ConfigMap\nbinaryData: {a: \"!!\"}\n",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"managedFields":[{}]}}`,
		"null",
		"- 1\n",
		"apiVersion: [v1]\n",
	} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	cms := resource(f, "", "v1", "configmaps")
	s := newStage()
	f.Fuzz(func(t *testing.T, yaml string, force bool) {
		live := applied(t, s, cms)
		op := &request.Operation{Resource: cms, Namespace: "ns", Name: "x", PatchType: types.ApplyYAMLPatchType, FieldManager: "fuzz", Force: force,
			PatchBytes: []byte(yaml), Old: live}
		got, w := serve(t, s, op, "")
		if w.Code != http.StatusOK {
			if !json.Valid(w.Body.Bytes()) {
				t.Fatalf("%d answer is not a Status: %s", w.Code, w.Body)
			}
			return
		}
		if _, ok := got.Object.(*corev1.ConfigMap); !ok {
			t.Fatalf("applied to a %T", got.Object)
		}
	})
}

// TestKeepsKinds: the field manager converts in place (no copies), which
// stamps apiVersion and kind; the objects handed on, and the live one,
// keep the TypeMeta they came with, and the live one is otherwise
// untouched.
func TestKeepsKinds(t *testing.T) {
	cms := resource(t, "", "v1", "configmaps")
	s := newStage()
	live := configMap(map[string]string{"k": "v"})
	live.UID = "u"
	live.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "first", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{".":{},"f:k":{}}}`)}}}
	liveBefore := live.DeepCopy()
	typed := configMap(map[string]string{"k": "v2"})
	typed.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
	for _, op := range []*request.Operation{
		{Resource: cms, Object: configMap(map[string]string{"k": "v"}), FieldManager: "m"},
		{Resource: cms, Object: configMap(map[string]string{"k": "v2"}), Old: live, FieldManager: "m"},
		{Resource: cms, Object: typed, Old: live, FieldManager: "m"},
	} {
		want := op.Object.GetObjectKind().GroupVersionKind()
		got, w := serve(t, s, op, "")
		if w.Code != http.StatusOK {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
		if gvk := got.Object.GetObjectKind().GroupVersionKind(); gvk != want {
			t.Errorf("object kind %v, want %v", gvk, want)
		}
		if entries(t, got.Object) == "" {
			t.Error("no managedFields")
		}
		if !reflect.DeepEqual(live, liveBefore) {
			t.Errorf("live object changed:\n%#v\n%#v", live, liveBefore)
		}
	}
}

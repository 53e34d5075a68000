package validation

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var controllerRevisionGK = schema.GroupKind{Group: "apps", Kind: "ControllerRevision"}

func controllerRevision(mut ...func(*appsv1.ControllerRevision)) *appsv1.ControllerRevision {
	r := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: "web-5d8f", Namespace: "default", ResourceVersion: "7"},
		Data:       runtime.RawExtension{Raw: []byte(`{"spec":{"template":{}}}`)},
		Revision:   1,
	}
	for _, m := range mut {
		m(r)
	}
	return r
}

func withData(raw string) func(*appsv1.ControllerRevision) {
	return func(r *appsv1.ControllerRevision) {
		r.Data.Raw = nil
		if raw != "" {
			r.Data.Raw = []byte(raw)
		}
	}
}

func TestControllerRevision(t *testing.T) {
	const prefix = `ControllerRevision.apps "web-5d8f" is invalid: `
	check(t, []testCase{
		{name: "valid", obj: controllerRevision(), gk: controllerRevisionGK},
		{name: "revision zero", obj: controllerRevision(func(r *appsv1.ControllerRevision) { r.Revision = 0 }), gk: controllerRevisionGK},
		{name: "negative revision", obj: controllerRevision(func(r *appsv1.ControllerRevision) { r.Revision = -1 }), gk: controllerRevisionGK,
			want: prefix + `revision: Invalid value: -1: must be greater than or equal to 0`},
		{name: "no data", obj: controllerRevision(withData("")), gk: controllerRevisionGK,
			want: prefix + `data: Required value: data is mandatory`},
		{name: "null data", obj: controllerRevision(withData("null")), gk: controllerRevisionGK,
			want: prefix + `data: Required value: data is mandatory`},
		{name: "array data", obj: controllerRevision(withData("[1]")), gk: controllerRevisionGK,
			want: prefix + `data: Required value: data must be a valid JSON object`},
		{name: "string data", obj: controllerRevision(withData(`"x"`)), gk: controllerRevisionGK,
			want: prefix + `data: Required value: data must be a valid JSON object`},
		{name: "unparsable data", obj: controllerRevision(withData("{")), gk: controllerRevisionGK,
			want: prefix + `data: Invalid value: "<value omitted>": error parsing data: unexpected end of JSON input`},
		{name: "bad name and negative revision", obj: controllerRevision(func(r *appsv1.ControllerRevision) { r.Name = "Web"; r.Revision = -2 }), gk: controllerRevisionGK,
			want: `ControllerRevision.apps "Web" is invalid: [metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), revision: Invalid value: -2: must be greater than or equal to 0]`},
		{name: "no namespace", obj: controllerRevision(func(r *appsv1.ControllerRevision) { r.Namespace = "" }), gk: controllerRevisionGK,
			want: prefix + `metadata.namespace: Required value`},

		{name: "update labels and revision", op: update, gk: controllerRevisionGK, old: controllerRevision(),
			obj: controllerRevision(func(r *appsv1.ControllerRevision) { r.Labels = map[string]string{"a": "b"}; r.Revision = 3 })},
		{name: "update data", op: update, gk: controllerRevisionGK, old: controllerRevision(),
			obj:  controllerRevision(withData(`{"spec":{"replicas":2}}`)),
			want: prefix + `data: Invalid value: {"spec":{"replicas":2}}: field is immutable`},
		{name: "update negative revision", op: update, gk: controllerRevisionGK, old: controllerRevision(),
			obj:  controllerRevision(func(r *appsv1.ControllerRevision) { r.Revision = -1 }),
			want: prefix + `revision: Invalid value: -1: must be greater than or equal to 0`},
		// kube's update does not ask for data: it only may not change.
		{name: "update keeps no data", op: update, gk: controllerRevisionGK, old: controllerRevision(withData("")),
			obj: controllerRevision(withData(""))},
	})
}

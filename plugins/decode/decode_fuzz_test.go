package decode

import (
	"net/http/httptest"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FuzzDecodeBody feeds untrusted bodies to the body decoder in each
// content type and field validation mode: it must never panic, and an
// accepted body must come back as the expected kind.
func FuzzDecodeBody(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{},"data":{}}`,
		`{"apiVersion":"v2","kind":"ConfigMap"}`,
		`{"kind":"Secret","apiVersion":"v1"}`,
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
		`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[`,
		"\x00\xff",
		`{"metadata":{"name":"\u0000"}}`,
	} {
		f.Add(seed, uint8(0))
	}
	types := []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}
	modes := []string{"", metav1.FieldValidationStrict, metav1.FieldValidationWarn, metav1.FieldValidationIgnore}
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	f.Fuzz(func(t *testing.T, body string, sel uint8) {
		r := httptest.NewRequest("POST", "/api/v1/namespaces/default/configmaps", nil)
		r.Header.Set("Content-Type", types[int(sel)%len(types)])
		obj, _, err := decodeBody(r, []byte(body), defaultMaxBody, gvk, &corev1.ConfigMap{}, modes[int(sel/4)%len(modes)])
		if err != nil {
			return
		}
		if _, ok := obj.(*corev1.ConfigMap); !ok {
			t.Fatalf("accepted a %T as a ConfigMap", obj)
		}
	})
}

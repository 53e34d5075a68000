package decode

import (
	"fmt"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kpipe/kpipe/internal/api"
)

// TestDirectDecodeSameAsCodec: the one-pass decode of a body gives what
// the codec gives (object, warnings, error) for every field validation,
// on bodies it takes and on bodies it leaves to the codec.
func TestDirectDecodeSameAsCodec(t *testing.T) {
	cm := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	pod := corev1.SchemeGroupVersion.WithKind("Pod")
	dep := appsv1.SchemeGroupVersion.WithKind("Deployment")
	bodies := []struct {
		gvk  schema.GroupVersionKind
		body string
		ct   string
	}{
		{cm, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"x":"y"}},"data":{"k":"v"}}`, ""},
		{pod, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":80}]}]}}`, ""},
		{dep, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`, ""},
		{cm, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","generation":9007199254740993}}`, ""},
		{cm, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"unknown":1,"data":{"k":"v"}}`, ""},
		{cm, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","name":"b"}}`, ""},
		{cm, `{"apiVersion":"v1","APIVERSION":"v2","kind":"ConfigMap","metadata":{"name":"a"}}`, ""},
		{cm, `{"apiVersion":"v1","Kind":"Pod","kind":"ConfigMap","metadata":{"name":"a"}}`, ""},
		{cm, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"}}`, ""},
		{cm, `{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"a"}}`, ""},
		{cm, `{"metadata":{"name":"a"},"data":{"k":"v"}}`, ""},
		{cm, `{"kind":"ConfigMap","metadata":{"name":"a"}}`, ""},
		{cm, `{"apiVersion":"v1","kind":"ConfigMap","data":7}`, ""},
		{cm, `{"apiVersion":"v1","kind":"ConfigMap",`, ""},
		{cm, `[]`, ""},
		{cm, `apiVersion: v1
kind: ConfigMap
metadata:
  name: a
`, "application/yaml"},
	}
	run := func(direct bool, gvk schema.GroupVersionKind, body, ct, fv string) (runtime.Object, []string, error) {
		directDecode = direct
		defer func() { directDecode = true }()
		r := httptest.NewRequest("POST", "/", strings.NewReader(body))
		if ct != "" {
			r.Header.Set("Content-Type", ct)
		}
		into, err := api.Scheme.New(gvk)
		if err != nil {
			t.Fatal(err)
		}
		return decodeBody(r, []byte(body), defaultMaxBody, gvk, into, fv)
	}
	for i, b := range bodies {
		for _, fv := range []string{"", metav1.FieldValidationIgnore, metav1.FieldValidationWarn, metav1.FieldValidationStrict} {
			t.Run(fmt.Sprintf("%d/%s", i, fv), func(t *testing.T) {
				wantObj, wantWarn, wantErr := run(false, b.gvk, b.body, b.ct, fv)
				gotObj, gotWarn, gotErr := run(true, b.gvk, b.body, b.ct, fv)
				if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
					t.Fatalf("error %v, want %v", gotErr, wantErr)
				}
				if !reflect.DeepEqual(gotWarn, wantWarn) {
					t.Errorf("warnings %q, want %q", gotWarn, wantWarn)
				}
				if !reflect.DeepEqual(gotObj, wantObj) {
					t.Errorf("object\n%#v\nwant\n%#v", gotObj, wantObj)
				}
			})
		}
	}
}

func BenchmarkDecodeBody(b *testing.B) {
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	body := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"app":"bench"}},"data":{"data":"` + strings.Repeat("x", 1024) + `"}}`)
	for _, direct := range []bool{true, false} {
		b.Run(fmt.Sprintf("direct=%v", direct), func(b *testing.B) {
			directDecode = direct
			defer func() { directDecode = true }()
			r := httptest.NewRequest("POST", "/", nil)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := decodeBody(r, body, defaultMaxBody, gvk, &corev1.ConfigMap{}, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

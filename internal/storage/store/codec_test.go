package store

import (
	"bytes"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

// TestJSONCodecDirectDecode: the one-pass decode gives what the full codec
// gives, object, kind and error, for stored objects and for bytes it must
// leave to the full codec.
func TestJSONCodecDirectDecode(t *testing.T) {
	c := NewJSONCodec(scheme.Scheme, corev1.SchemeGroupVersion).(*jsonCodec)
	encode := func(o runtime.Object) string {
		var b bytes.Buffer
		if err := c.Encode(o, &b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	cm := encode(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "n", Labels: map[string]string{"x": "y"}}, Data: map[string]string{"k": "v"}})
	pod := encode(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "i"}}}})
	cases := []struct {
		name string
		data string
		into func() runtime.Object
	}{
		{"configmap", cm, func() runtime.Object { return &corev1.ConfigMap{} }},
		{"pod", pod, func() runtime.Object { return &corev1.Pod{} }},
		{"big numbers stay ints", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","generation":9007199254740993}}`, func() runtime.Object { return &corev1.ConfigMap{} }},
		{"into a different kind", cm, func() runtime.Object { return &corev1.Pod{} }},
		{"another group", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"}}`, func() runtime.Object { return &appsv1.Deployment{} }},
		{"no kind", `{"apiVersion":"v1","metadata":{"name":"a"}}`, func() runtime.Object { return &corev1.ConfigMap{} }},
		{"no version", `{"kind":"ConfigMap","metadata":{"name":"a"}}`, func() runtime.Object { return &corev1.ConfigMap{} }},
		{"bad JSON", `{"apiVersion":"v1","kind":"ConfigMap",`, func() runtime.Object { return &corev1.ConfigMap{} }},
		{"wrong type", `{"apiVersion":"v1","kind":"ConfigMap","data":7}`, func() runtime.Object { return &corev1.ConfigMap{} }},
		{"unstructured", cm, func() runtime.Object { return &unstructured.Unstructured{} }},
		{"dirty target", cm, func() runtime.Object {
			return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"old": "x"}}, BinaryData: map[string][]byte{"b": nil}}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantInto, gotInto := tc.into(), tc.into()
			want, wantGVK, wantErr := c.Codec.Decode([]byte(tc.data), nil, wantInto)
			got, gotGVK, gotErr := c.Decode([]byte(tc.data), nil, gotInto)
			if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
				t.Fatalf("error %v, want %v", gotErr, wantErr)
			}
			if wantErr != nil {
				return
			}
			if !apiequality.Semantic.DeepEqual(want, got) {
				t.Errorf("object\n%#v\nwant\n%#v", got, want)
			}
			if *wantGVK != *gotGVK {
				t.Errorf("kind %v, want %v", gotGVK, wantGVK)
			}
		})
	}
	if !strings.Contains(cm, `"kind":"ConfigMap"`) {
		t.Fatalf("encoded without a kind: %s", cm)
	}
}

func BenchmarkJSONCodecDecode(b *testing.B) {
	c := NewJSONCodec(scheme.Scheme, corev1.SchemeGroupVersion).(*jsonCodec)
	var buf bytes.Buffer
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "n", Labels: map[string]string{"app": "bench"}}, Data: map[string]string{"data": strings.Repeat("x", 1024)}}
	if err := c.Encode(cm, &buf); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		c    runtime.Decoder
	}{{"direct", c}, {"full", c.Codec}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := tc.c.Decode(buf.Bytes(), nil, &corev1.ConfigMap{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

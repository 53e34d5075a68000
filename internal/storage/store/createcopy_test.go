package store

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
)

// TestCreateReturnsWhatDecodeGives: Create (and GuaranteedUpdate) hand
// back a copy of the object instead of decoding the bytes they wrote; the
// copy must encode, as JSON and as protobuf, byte for byte as the decoded
// object (read back with Get) does, and be semantically equal to it,
// times included.
func TestCreateReturnsWhatDecodeGives(t *testing.T) {
	t.Parallel()
	cms, cp := newCMStore(t)
	pods, pp := newPodStore(t)
	ctx := testCtx(t)
	// Sub-second times, as the server sets creationTimestamp and
	// managedFields times; JSON keeps whole seconds.
	now := metav1.NewTime(time.Date(2026, 12, 3, 4, 5, 6, 987654321, time.UTC))
	later := metav1.NewTime(now.Add(1500 * time.Millisecond))
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{
			Namespace: "default", Name: name, GenerateName: "gen-", UID: types.UID("uid-" + name),
			Labels: map[string]string{"a": "b"}, Annotations: map[string]string{},
			CreationTimestamp: now, SelfLink: "/api/v1/namespaces/default/x/" + name,
			Finalizers:      []string{},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "o", UID: "u"}},
			ManagedFields: []metav1.ManagedFieldsEntry{{
				Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &later,
				FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{".":{},"f:k":{}}}`)},
			}},
		}
	}
	immutable := false
	cases := []struct {
		name string
		s    *Store
		key  string
		obj  runtime.Object
	}{
		{"configmap", cms, key(cp, "default", "a"), &corev1.ConfigMap{ObjectMeta: meta("a"), Data: map[string]string{"k": "v", "empty": ""},
			BinaryData: map[string][]byte{}, Immutable: &immutable}},
		{"configmap with nothing", cms, key(cp, "default", "b"), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "b"}}},
		{"configmap with typemeta", cms, key(cp, "default", "c"), &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "c"}, Data: map[string]string{}}},
		{"pod", pods, key(pp, "default", "p"), &corev1.Pod{ObjectMeta: meta("p"), Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "i", Args: []string{}, Env: []corev1.EnvVar{{Name: "e"}},
				Resources: corev1.ResourceRequirements{
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000m"), corev1.ResourceMemory: resource.MustParse("1.5Gi")},
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.1")},
				}}},
			Tolerations: []corev1.Toleration{}, NodeSelector: map[string]string{},
		}, Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: "Ready", LastTransitionTime: later}}}}},
	}
	cf := serializer.NewCodecFactory(scheme.Scheme)
	jsonEnc := cf.LegacyCodec(corev1.SchemeGroupVersion)
	pb, ok := runtime.SerializerInfoForMediaType(cf.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		t.Fatal("no protobuf serializer")
	}
	pbEnc := cf.EncoderForVersion(pb.Serializer, corev1.SchemeGroupVersion)
	encode := func(e runtime.Encoder, o runtime.Object) []byte {
		var b bytes.Buffer
		if err := e.Encode(o, &b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.obj.DeepCopyObject()
			out := tc.s.New()
			if err := tc.s.Create(ctx, tc.key, in, out, 0); err != nil {
				t.Fatal(err)
			}
			if !apiequality.Semantic.DeepEqual(in, tc.obj) {
				t.Fatalf("Create changed its input:\n%#v\n%#v", in, tc.obj)
			}
			got := tc.s.New()
			if err := tc.s.Get(ctx, tc.key, GetOptions{}, got); err != nil {
				t.Fatal(err)
			}
			if a, b := encode(jsonEnc, out), encode(jsonEnc, got); !bytes.Equal(a, b) {
				t.Fatalf("JSON of the created object\n%s\nof the decoded one\n%s", a, b)
			}
			if a, b := encode(pbEnc, out), encode(pbEnc, got); !bytes.Equal(a, b) {
				t.Fatalf("protobuf of the created object\n%q\nof the decoded one\n%q", a, b)
			}
			if !apiequality.Semantic.DeepEqual(out, got) {
				t.Fatalf("created\n%#v\ndecoded\n%#v", out, got)
			}
			om, gm := metaOf(t, out), metaOf(t, got)
			if !om.GetCreationTimestamp().Time.Equal(gm.GetCreationTimestamp().Time) || om.GetSelfLink() != "" ||
				!out.GetObjectKind().GroupVersionKind().Empty() {
				t.Fatalf("created metadata %+v, decoded %+v, kind %v", om, gm, out.GetObjectKind().GroupVersionKind())
			}
			// An update answers with a copy too.
			updated := tc.s.New()
			if err := tc.s.GuaranteedUpdate(ctx, tc.key, updated, false, nil, func(cur runtime.Object, _ ResponseMeta) (runtime.Object, *time.Duration, error) {
				m := metaOf(t, cur)
				m.SetLabels(map[string]string{"updated": "yes"})
				m.SetFinalizers([]string{})
				return cur, nil, nil
			}); err != nil {
				t.Fatal(err)
			}
			reread := tc.s.New()
			if err := tc.s.Get(ctx, tc.key, GetOptions{}, reread); err != nil {
				t.Fatal(err)
			}
			if a, b := encode(jsonEnc, updated), encode(jsonEnc, reread); !bytes.Equal(a, b) {
				t.Fatalf("JSON of the updated object\n%s\nof the decoded one\n%s", a, b)
			}
			if !apiequality.Semantic.DeepEqual(updated, reread) {
				t.Fatalf("updated\n%#v\ndecoded\n%#v", updated, reread)
			}
			// out shares nothing with the input.
			if mf := om.GetManagedFields(); len(mf) > 0 {
				mf[0].Manager = "changed"
				if metaOf(t, in).GetManagedFields()[0].Manager != "m" {
					t.Fatal("the created object shares managedFields with the input")
				}
			}
		})
	}
}

func metaOf(t *testing.T, o runtime.Object) metav1.Object {
	t.Helper()
	m, ok := o.(metav1.Object)
	if !ok {
		t.Fatalf("%T has no metadata", o)
	}
	return m
}

// TestCopyWrittenTakes: the copy stands in only for typed objects of the
// codec's version; unstructured objects and mismatched targets decode.
func TestCopyWrittenTakes(t *testing.T) {
	c := codec().(*jsonCodec)
	cases := []struct {
		name     string
		obj, out runtime.Object
		want     bool
	}{
		{"configmap", &corev1.ConfigMap{}, &corev1.ConfigMap{}, true},
		{"secret", &corev1.Secret{}, &corev1.Secret{}, true},
		{"pod: times outside metadata", &corev1.Pod{}, &corev1.Pod{}, false},
		{"event: times", &corev1.Event{}, &corev1.Event{}, false},
		{"unstructured", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}, &unstructured.Unstructured{}, false},
		{"another type", &corev1.ConfigMap{}, &corev1.Secret{}, false},
		{"not of the version", &appsv1.Deployment{}, &appsv1.Deployment{}, false},
	}
	for _, tc := range cases {
		if got := c.copyWritten(tc.obj, tc.out); got != tc.want {
			t.Errorf("%s: copyWritten = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestWatchTakesWrittenObjects: the watch event of a create or an update
// carries the object the write handed over instead of a decode of the
// value; it must be what the decode gives (JSON bytes, semantic equality,
// resourceVersion), with two watches (one takes, the other decodes).
func TestWatchTakesWrittenObjects(t *testing.T) {
	t.Parallel()
	s, p := newCMStore(t)
	ctx := testCtx(t)
	if s.handoff.active() {
		t.Fatal("handoff active with no watch")
	}
	_ = mustCreate(t, s, key(p, "default", "before"), cm("default", "before", nil, nil))
	if n := len(s.handoff.entries); n != 0 {
		t.Fatalf("%d objects handed over with no watch", n)
	}
	rv := objRV(mustCreate(t, s, key(p, "default", "rv"), cm("default", "rv", nil, nil)))
	w1, err := s.Watch(ctx, p, ListOptions{ResourceVersion: rv, Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w1.Stop()
	w2, err := s.Watch(ctx, p+"/other/", ListOptions{ResourceVersion: rv, Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	cf := serializer.NewCodecFactory(scheme.Scheme)
	enc := cf.LegacyCodec(corev1.SchemeGroupVersion)
	encode := func(o runtime.Object) string {
		var b bytes.Buffer
		if err := enc.Encode(o, &b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	now := metav1.NewTime(time.Date(2026, 12, 3, 4, 5, 6, 987654321, time.UTC))
	for i, ns := range []string{"default", "other", "default"} {
		name := fmt.Sprintf("c%d", i)
		obj := cm(ns, name, map[string]string{"i": name}, map[string]string{"k": strings.Repeat("v", 100)})
		obj.CreationTimestamp = now
		obj.Annotations = map[string]string{}
		created := mustCreate(t, s, key(p, ns, name), obj)
		got := s.New()
		if err := s.Get(ctx, key(p, ns, name), GetOptions{}, got); err != nil {
			t.Fatal(err)
		}
		watches := []watch.Interface{w1}
		if ns == "other" {
			watches = append(watches, w2)
		}
		check := func(want watch.EventType, got, written runtime.Object) {
			t.Helper()
			for _, w := range watches {
				ev := nextEvent(t, w)
				if ev.Type != want {
					t.Fatalf("event %s, want %s", ev.Type, want)
				}
				if a, b := encode(ev.Object), encode(got); a != b {
					t.Fatalf("watched\n%s\ndecoded\n%s", a, b)
				}
				if !apiequality.Semantic.DeepEqual(ev.Object, got) || objRV(ev.Object) != objRV(written) {
					t.Fatalf("watched %#v\ndecoded %#v", ev.Object, got)
				}
				if ev.Object == written {
					t.Fatal("the watch shares the object the write returned")
				}
			}
		}
		check(watch.Added, got, created)
		updated := s.New()
		if err := s.GuaranteedUpdate(ctx, key(p, ns, name), updated, false, nil, func(cur runtime.Object, _ ResponseMeta) (runtime.Object, *time.Duration, error) {
			c := cur.(*corev1.ConfigMap)
			c.Data["k2"] = "v2"
			return c, nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		got = s.New()
		if err := s.Get(ctx, key(p, ns, name), GetOptions{}, got); err != nil {
			t.Fatal(err)
		}
		check(watch.Modified, got, updated)
	}
	s.handoff.mu.Lock()
	n := len(s.handoff.entries)
	s.handoff.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d handed-over objects not taken", n)
	}
}

// TestHandoffBounds: entries nobody takes go oldest first past the count
// and byte bounds; a failed write withdraws its entry; a value that
// differs takes nothing.
func TestHandoffBounds(t *testing.T) {
	var h handoff
	for i := 0; i < handoffMax+10; i++ {
		h.put(fmt.Sprint(i), []byte("v"), &corev1.ConfigMap{})
	}
	if len(h.entries) != handoffMax || len(h.order) != handoffMax || h.bytes != handoffMax {
		t.Fatalf("%d entries, %d in order, %d bytes", len(h.entries), len(h.order), h.bytes)
	}
	if h.take([]byte("0"), []byte("v")) != nil || h.take([]byte("20"), []byte("other")) != nil {
		t.Fatal("took an evicted entry or another value")
	}
	if h.take([]byte("20"), []byte("v")) == nil || h.take([]byte("20"), []byte("v")) != nil {
		t.Fatal("an entry is taken once")
	}
	big := make([]byte, handoffMaxBytes/2+1)
	h.put("big1", big, &corev1.ConfigMap{})
	e := h.put("big2", big, &corev1.ConfigMap{})
	if h.bytes > handoffMaxBytes || h.entries["big1"] != nil {
		t.Fatalf("%d bytes held", h.bytes)
	}
	h.drop(e)
	if h.entries["big2"] != nil || h.bytes != 0 {
		t.Fatalf("dropped entry held, %d bytes", h.bytes)
	}
}

// BenchmarkWrittenObject: what a write costs to answer with, the copy
// against the decode of the bytes written, for a 1 KiB ConfigMap with
// managedFields as the bench creates them.
func BenchmarkWrittenObject(b *testing.B) {
	c := codec().(*jsonCodec)
	now := metav1.Now()
	obj := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kpipe-bench", Name: "bench-1", UID: "0b1c7c35-3f0e-4d1c-9f0e-6b0d3c7e2a11",
			CreationTimestamp: now, Labels: map[string]string{"app": "bench"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "apiserver-bench", Operation: metav1.ManagedFieldsOperationUpdate,
				APIVersion: "v1", Time: &now, FieldsType: "FieldsV1",
				FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{".":{},"f:data":{}},"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`)}}}},
		Data: map[string]string{"data": strings.Repeat("x", 1024)},
	}
	var buf bytes.Buffer
	if err := c.Encode(obj, &buf); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.Run("copy", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if !c.copyWritten(obj, &corev1.ConfigMap{}) {
				b.Fatal("no copy")
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, _, err := c.Decode(data, nil, &corev1.ConfigMap{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

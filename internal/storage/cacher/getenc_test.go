package cacher

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kpipe/kpipe/internal/storage/store"
)

// countingEncoder encodes with enc and counts the encodings it made.
type countingEncoder struct {
	enc runtime.Encoder
	n   int
}

func (e *countingEncoder) Encode(obj runtime.Object, w io.Writer) error {
	if co, ok := obj.(runtime.CacheableObject); ok {
		return co.CacheEncode(e.Identifier(), e.encode, w)
	}
	return e.encode(obj, w)
}

func (e *countingEncoder) encode(obj runtime.Object, w io.Writer) error {
	e.n++
	return e.enc.Encode(obj, w)
}

func (e *countingEncoder) Identifier() runtime.Identifier { return "counting:" + e.enc.Identifier() }

// A get from memory is encoded once per object version: the next get of
// the unchanged object writes the same bytes without encoding, an update
// is encoded anew, and every answer equals the encoding of what Get
// returns.
func TestGetEncodableKeepsEncodings(t *testing.T) {
	s, c := newPair(t)
	ctx := context.Background()
	k := key(s, "ns", "x")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x"}, Data: map[string]string{"k": "v1"}}
	if err := s.Create(ctx, k, cm, nil, 0); err != nil {
		t.Fatal(err)
	}
	enc := &countingEncoder{enc: scheme.Codecs.LegacyCodec(corev1.SchemeGroupVersion)}
	plain := scheme.Codecs.LegacyCodec(corev1.SchemeGroupVersion)
	encode := func(e runtime.Encoder, o runtime.Object) string {
		t.Helper()
		var buf bytes.Buffer
		if err := e.Encode(o, &buf); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	check := func(wantEncodings int) {
		t.Helper()
		got, err := c.GetEncodable(ctx, k, store.GetOptions{}, &corev1.ConfigMap{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := got.(*cachedObject); !ok {
			t.Fatalf("GetEncodable from memory returned %T", got)
		}
		var want corev1.ConfigMap
		if err := c.Get(ctx, k, store.GetOptions{}, &want); err != nil {
			t.Fatal(err)
		}
		if g, w := encode(enc, got), encode(plain, &want); g != w {
			t.Fatalf("GetEncodable encoded\n%s\nGet's object encodes\n%s", g, w)
		}
		if enc.n != wantEncodings {
			t.Fatalf("%d encodings, want %d", enc.n, wantEncodings)
		}
	}
	check(1)
	check(1)
	check(1)
	if err := s.GuaranteedUpdate(ctx, k, &corev1.ConfigMap{}, false, nil, func(in runtime.Object, _ store.ResponseMeta) (runtime.Object, *time.Duration, error) {
		in.(*corev1.ConfigMap).Data["k"] = "v2"
		return in, nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	check(2)
	check(2)

	// An absent object is NotFound, as from Get; an exact revision reads
	// etcd into out.
	if _, err := c.GetEncodable(ctx, key(s, "ns", "absent"), store.GetOptions{}, &corev1.ConfigMap{}); !isNotFound(err) {
		t.Fatalf("absent: %v, want NotFound", err)
	}
	rev, _ := s.CurrentRevision(ctx)
	out := &corev1.ConfigMap{}
	got, err := c.GetEncodable(ctx, k, store.GetOptions{ResourceVersion: fmt.Sprint(rev)}, out)
	if err != nil || got != out || out.Data["k"] != "v2" {
		t.Fatalf("at a revision: %T %v %v, want out filled from etcd", got, out.Data, err)
	}
}

// The kept encodings are bounded: past the byte bound they are dropped.
func TestGetEncodingsBounded(t *testing.T) {
	var g getEncodings
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}
	a := g.wrap("a", obj)
	a.enc.encoded(getEncodingsMaxBytes + 1)
	if again := g.wrap("a", obj); again.enc != a.enc {
		t.Fatal("an unchanged object got new encodings before the bound was passed")
	}
	g.wrap("b", obj)
	if n := len(g.entries); n != 1 || g.bytes != 0 {
		t.Fatalf("after passing the bound: %d entries, %d bytes; want the old ones dropped", n, g.bytes)
	}
	if again := g.wrap("a", obj); again.enc == a.enc {
		t.Fatal("dropped encodings were used again")
	}
	for i := range getEncodingsMaxObjects + 10 {
		g.wrap(fmt.Sprint("k", i), obj)
	}
	if n := len(g.entries); n > getEncodingsMaxObjects {
		t.Fatalf("%d entries kept, bound %d", n, getEncodingsMaxObjects)
	}
}

package encryption_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kpipe/kpipe/internal/storage/backend"
	"github.com/kpipe/kpipe/internal/storage/encryption"
	"github.com/kpipe/kpipe/internal/storage/store"
)

func secretStore(t *testing.T, b *backend.Backend, prefix, cfg string) *store.Store {
	t.Helper()
	c, err := encryption.Parse([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	gr := schema.GroupResource{Resource: "secrets"}
	return store.New(b.Client, store.NewJSONCodec(scheme.Scheme, corev1.SchemeGroupVersion),
		func() runtime.Object { return &corev1.Secret{} },
		func() runtime.Object { return &corev1.SecretList{} },
		prefix, gr, store.WithTransformer(c.For(gr)))
}

func encConfig(keys ...string) string {
	s := "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - aesgcm:\n      keys:\n"
	for _, k := range keys {
		// Each key name has its own secret, wherever it is listed.
		s += "      - {name: " + k + ", secret: " + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte(k[1:]), 32)[:32]) + "}\n"
	}
	return s + "  - identity: {}\n"
}

// The etcd bytes are ciphertext, every read path of the store decrypts,
// and after a rotation old values read and are rewritten by the next
// update, even one that changes nothing.
func TestStoreEncryptsAtRestAndRotates(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := backend.Open(ctx, backend.Config{DataDir: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	const prefix = "/registry/secrets"
	key := prefix + "/ns/db"
	k1 := encConfig("k1")
	s1 := secretStore(t, b, prefix, k1)
	in := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"}, Data: map[string][]byte{"password": []byte("hunter2hunter2")}}
	out := &corev1.Secret{}
	if err := s1.Create(ctx, key, in, out, 0); err != nil {
		t.Fatal(err)
	}
	if string(out.Data["password"]) != "hunter2hunter2" {
		t.Fatalf("create returned %q", out.Data)
	}
	raw := func() []byte {
		resp, err := b.Client.Get(ctx, key)
		if err != nil || len(resp.Kvs) != 1 {
			t.Fatalf("raw read: %v", err)
		}
		return resp.Kvs[0].Value
	}
	v := raw()
	if !bytes.HasPrefix(v, []byte("k8s:enc:aesgcm:v1:k1:")) || bytes.Contains(v, []byte("aHVudGVyMmh1bnRlcjI")) || bytes.Contains(v, []byte(`"db"`)) {
		t.Fatalf("etcd holds %q", v)
	}

	// Rotate: k2 writes, k1 still reads.
	s2 := secretStore(t, b, prefix, encConfig("k2", "k1"))
	w, err := s2.Watch(ctx, prefix+"/", store.ListOptions{ResourceVersion: "0", Recursive: true, Predicate: store.Predicate{}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	got := &corev1.Secret{}
	if err := s2.Get(ctx, key, store.GetOptions{}, got); err != nil || string(got.Data["password"]) != "hunter2hunter2" {
		t.Fatalf("get after rotation: %v %q", err, got.Data)
	}
	list := &corev1.SecretList{}
	if err := s2.GetList(ctx, prefix+"/", store.ListOptions{Recursive: true}, list); err != nil || len(list.Items) != 1 {
		t.Fatalf("list after rotation: %v %d", err, len(list.Items))
	}
	if ev := <-w.ResultChan(); ev.Type != "ADDED" || string(ev.Object.(*corev1.Secret).Data["password"]) != "hunter2hunter2" {
		t.Fatalf("watch initial event %v %v", ev.Type, ev.Object)
	}
	rv := got.ResourceVersion
	// A no-op update still rewrites a stale value, as kube does, so
	// rotating is "add the key, then touch every object".
	if err := s2.GuaranteedUpdate(ctx, key, &corev1.Secret{}, false, nil, func(obj runtime.Object, _ store.ResponseMeta) (runtime.Object, *time.Duration, error) {
		return obj, nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if v := raw(); !bytes.HasPrefix(v, []byte("k8s:enc:aesgcm:v1:k2:")) {
		t.Fatalf("after the no-op update etcd holds %q", v)
	}
	if ev := <-w.ResultChan(); ev.Type != "MODIFIED" || string(ev.Object.(*corev1.Secret).Data["password"]) != "hunter2hunter2" {
		t.Fatalf("watch event %v %v", ev.Type, ev.Object)
	}
	// Now current: the next no-op update writes nothing.
	after := &corev1.Secret{}
	if err := s2.Get(ctx, key, store.GetOptions{}, after); err != nil || after.ResourceVersion == rv {
		t.Fatalf("rewrite did not bump the resourceVersion: %v %s", err, after.ResourceVersion)
	}
	if err := s2.GuaranteedUpdate(ctx, key, &corev1.Secret{}, false, nil, func(obj runtime.Object, _ store.ResponseMeta) (runtime.Object, *time.Duration, error) {
		return obj, nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	again := &corev1.Secret{}
	if err := s2.Get(ctx, key, store.GetOptions{}, again); err != nil || again.ResourceVersion != after.ResourceVersion {
		t.Fatalf("a no-op update of a current value wrote: %s -> %s", after.ResourceVersion, again.ResourceVersion)
	}
	// Delete returns the decrypted object.
	del := &corev1.Secret{}
	if err := s2.Delete(ctx, key, del, nil, nil); err != nil || string(del.Data["password"]) != "hunter2hunter2" {
		t.Fatalf("delete: %v %q", err, del.Data)
	}
}

package informer

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kpipe/kpipe/internal/storage/backend"
	"github.com/kpipe/kpipe/internal/storage/store"
)

var cli *clientv3.Client

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "kpipe-informer-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	b, err := backend.Open(ctx, backend.Config{DataDir: dir}, nil)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting embedded etcd:", err)
		return 1
	}
	defer b.Close()
	cli = b.Client
	return m.Run()
}

func names(objs []runtime.Object) []string {
	var out []string
	for _, o := range objs {
		cm := o.(*corev1.ConfigMap)
		out = append(out, cm.Namespace+"/"+cm.Name+"="+cm.Data["v"])
	}
	return out
}

func TestMirrorsListAndWatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prefix := "/registry-test/informer/configmaps"
	s := store.New(cli, store.NewJSONCodec(scheme.Scheme, corev1.SchemeGroupVersion),
		func() runtime.Object { return &corev1.ConfigMap{} },
		func() runtime.Object { return &corev1.ConfigMapList{} },
		prefix, schema.GroupResource{Resource: "configmaps"})
	put := func(ns, name, v string) {
		t.Helper()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"v": v}}
		k := prefix + "/" + ns + "/" + name
		if v == "1" {
			if err := s.Create(ctx, k, cm, nil, 0); err != nil {
				t.Fatal(err)
			}
			return
		}
		err := s.GuaranteedUpdate(ctx, k, &corev1.ConfigMap{}, false, nil, func(in runtime.Object, _ store.ResponseMeta) (runtime.Object, *time.Duration, error) {
			in.(*corev1.ConfigMap).Data = cm.Data
			return in, nil, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	put("b", "x", "1")
	put("a", "y", "1")

	inf := New(Source{Store: s, Key: prefix, NewList: func() runtime.Object { return &corev1.ConfigMapList{} }}, nil)
	go inf.Run(ctx)
	select {
	case <-inf.Synced():
	case <-ctx.Done():
		t.Fatal("never synced")
	}
	if got := fmt.Sprint(names(inf.List())); got != "[a/y=1 b/x=1]" {
		t.Fatalf("after list: %s", got)
	}
	gen := inf.Generation()

	put("b", "x", "2")
	put("a", "z", "1")
	if err := s.Delete(ctx, prefix+"/a/y", &corev1.ConfigMap{}, nil, nil); err != nil {
		t.Fatal(err)
	}
	want := "[a/z=1 b/x=2]"
	for deadline := time.Now().Add(10 * time.Second); fmt.Sprint(names(inf.List())) != want; {
		if time.Now().After(deadline) {
			t.Fatalf("after watch: %v, want %s", names(inf.List()), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if inf.Generation() <= gen {
		t.Fatalf("generation %d did not move from %d", inf.Generation(), gen)
	}
	if o, ok := inf.Get("b", "x"); !ok || o.(*corev1.ConfigMap).Data["v"] != "2" {
		t.Fatalf("Get(b, x) = %v, %v", o, ok)
	}
	if _, ok := inf.Get("a", "y"); ok {
		t.Fatal("deleted object still there")
	}
}

package store

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kpipe/kpipe/internal/storage/backend"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
)

// cli talks to the one embedded etcd shared by the package's tests; each
// test keeps to its own key prefix.
var cli *clientv3.Client

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "kpipe-store-test-")
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

var prefixSeq atomic.Int64

// uniquePrefix gives a test its own key space.
func uniquePrefix(t *testing.T, resource string) string {
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	return fmt.Sprintf("/registry-test/%s-%d/%s", name, prefixSeq.Add(1), resource)
}

var (
	configMaps = schema.GroupResource{Resource: "configmaps"}
	pods       = schema.GroupResource{Resource: "pods"}
)

func codec() Codec { return NewJSONCodec(scheme.Scheme, corev1.SchemeGroupVersion) }

func newCMStore(t *testing.T, opts ...Option) (*Store, string) {
	t.Helper()
	p := uniquePrefix(t, "configmaps")
	s := New(cli, codec(),
		func() runtime.Object { return &corev1.ConfigMap{} },
		func() runtime.Object { return &corev1.ConfigMapList{} },
		p, configMaps, opts...)
	return s, p
}

func newPodStore(t *testing.T, opts ...Option) (*Store, string) {
	t.Helper()
	p := uniquePrefix(t, "pods")
	s := New(cli, codec(),
		func() runtime.Object { return &corev1.Pod{} },
		func() runtime.Object { return &corev1.PodList{} },
		p, pods, opts...)
	return s, p
}

func key(prefix, ns, name string) string { return prefix + "/" + ns + "/" + name }

func cm(ns, name string, lbls map[string]string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls, UID: types.UID("uid-" + name)},
		Data:       data,
	}
}

func pod(ns, name, node string, lbls map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
}

func podAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	p := obj.(*corev1.Pod)
	return p.Labels, fields.Set{
		"metadata.name":      p.Name,
		"metadata.namespace": p.Namespace,
		"spec.nodeName":      p.Spec.NodeName,
	}, nil
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustCreate(t *testing.T, s *Store, k string, obj runtime.Object) runtime.Object {
	t.Helper()
	out := s.New()
	if err := s.Create(testCtx(t), k, obj, out, 0); err != nil {
		t.Fatalf("Create %s: %v", k, err)
	}
	return out
}

// setData rewrites a config map's data through GuaranteedUpdate.
func setData(t *testing.T, s *Store, k string, data map[string]string) *corev1.ConfigMap {
	t.Helper()
	out := &corev1.ConfigMap{}
	err := s.GuaranteedUpdate(testCtx(t), k, out, false, nil, func(in runtime.Object, _ ResponseMeta) (runtime.Object, *time.Duration, error) {
		c := in.(*corev1.ConfigMap)
		c.Data = data
		return c, nil, nil
	})
	if err != nil {
		t.Fatalf("update %s: %v", k, err)
	}
	return out
}

func modRevision(t *testing.T, k string) int64 {
	t.Helper()
	resp, err := cli.Get(testCtx(t), k)
	if err != nil {
		t.Fatalf("etcd get %s: %v", k, err)
	}
	if len(resp.Kvs) == 0 {
		return 0
	}
	return resp.Kvs[0].ModRevision
}

func rvString(rev int64) string { return fmt.Sprint(rev) }

// wantStatus checks that err is an API error with the given code and,
// when msg is not empty, message.
func wantStatus(t *testing.T, err error, code int32, reason metav1.StatusReason, msg string) *apierrors.StatusError {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %d %s", code, reason)
	}
	se, ok := err.(*apierrors.StatusError)
	if !ok {
		t.Fatalf("got %T %v, want *StatusError", err, err)
	}
	if se.ErrStatus.Code != code || se.ErrStatus.Reason != reason {
		t.Fatalf("got %d %s (%q), want %d %s", se.ErrStatus.Code, se.ErrStatus.Reason, se.ErrStatus.Message, code, reason)
	}
	if msg != "" && se.ErrStatus.Message != msg {
		t.Fatalf("message:\n got %q\nwant %q", se.ErrStatus.Message, msg)
	}
	return se
}

func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed, want an event")
		}
		return ev
	case <-time.After(20 * time.Second):
		t.Fatal("timed out waiting for a watch event")
	}
	return watch.Event{}
}

func expectNoEvent(t *testing.T, w watch.Interface, d time.Duration) {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if ok {
			t.Fatalf("unexpected event %s %#v", ev.Type, ev.Object)
		}
		t.Fatal("watch closed unexpectedly")
	case <-time.After(d):
	}
}

func expectClosed(t *testing.T, w watch.Interface) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case _, ok := <-w.ResultChan():
			if !ok {
				return
			}
		case <-timeout:
			t.Fatal("watch channel not closed")
		}
	}
}

func objName(o runtime.Object) string {
	switch v := o.(type) {
	case *corev1.ConfigMap:
		return v.Name
	case *corev1.Pod:
		return v.Name
	}
	return fmt.Sprintf("%T", o)
}

func objRV(o runtime.Object) string {
	switch v := o.(type) {
	case *corev1.ConfigMap:
		return v.ResourceVersion
	case *corev1.Pod:
		return v.ResourceVersion
	}
	return ""
}

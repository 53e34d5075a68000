package perf

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/internal/testserver"
)

// Through the whole server: lists and watches of pods by spec.nodeName,
// which the watch cache answers from its index, equal etcd's answers at
// the same resourceVersion (items, resourceVersions, continue tokens), and
// the watch sees a pod moved onto and off the node.
func TestPodsByNodeFromCacheEqualEtcd(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	cs, err := kubernetes.NewForConfig(ts.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, ns := range []string{"a", "b"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			if _, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err == nil {
				break
			} else if !apierrors.IsNotFound(err) || time.Now().After(deadline) {
				t.Fatalf("default service account in %s: %v", ns, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	pod := func(ns, name, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	}
	for i := 0; i < 30; i++ {
		ns := []string{"a", "b"}[i%2]
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod(ns, fmt.Sprintf("p-%02d", i), fmt.Sprintf("n%d", i%3)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	names := func(l *corev1.PodList) []string {
		var out []string
		for _, p := range l.Items {
			out = append(out, p.Namespace+"/"+p.Name+"@"+p.ResourceVersion)
		}
		return out
	}
	for _, tc := range []struct {
		ns    string
		field string
		limit int64
	}{
		{"", "spec.nodeName=n1", 0},
		{"", "spec.nodeName=n2", 3},
		{"a", "spec.nodeName=n0", 2},
		{"", "spec.nodeName=n1,metadata.namespace=b", 0},
		{"", "metadata.namespace=a", 4},
		{"", "spec.nodeName=", 0},
	} {
		// A consistent list (the cache, once caught up), then etcd at
		// exactly its revision.
		got, err := cs.CoreV1().Pods(tc.ns).List(ctx, metav1.ListOptions{FieldSelector: tc.field, Limit: tc.limit})
		if err != nil {
			t.Fatal(err)
		}
		want, err := cs.CoreV1().Pods(tc.ns).List(ctx, metav1.ListOptions{FieldSelector: tc.field, Limit: tc.limit,
			ResourceVersion: got.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Items, want.Items) || got.Continue != want.Continue {
			t.Fatalf("%s %q limit %d at %s:\ncache %v %q\netcd  %v %q", tc.ns, tc.field, tc.limit, got.ResourceVersion, names(got), got.Continue, names(want), want.Continue)
		}
		if tc.field == "spec.nodeName=n1" && len(got.Items) != 10 {
			t.Fatalf("%d pods on n1, want 10", len(got.Items))
		}
	}

	// A kubelet's watch: a pod bound to the node arrives, one deleted
	// leaves; pods of other nodes never show.
	list, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n9"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n9", ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := cs.CoreV1().Pods("a").Create(ctx, pod("a", "elsewhere", "n8"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods("b").Create(ctx, pod("b", "here", "n9"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Pods("b").Delete(ctx, "here", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	var seen []string
	timeout := time.After(20 * time.Second)
	for len(seen) < 2 {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed after %v", seen)
			}
			if ev.Type == watch.Bookmark {
				continue
			}
			p := ev.Object.(*corev1.Pod)
			if ev.Type == watch.Modified {
				continue // deletion may set a grace period first
			}
			seen = append(seen, string(ev.Type)+" "+p.Namespace+"/"+p.Name)
		case <-timeout:
			t.Fatalf("watch saw %v", seen)
		}
	}
	if want := []string{"ADDED b/here", "DELETED b/here"}; !reflect.DeepEqual(seen, want) {
		t.Fatalf("watch saw %v, want %v", seen, want)
	}
}

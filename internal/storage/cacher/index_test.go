package cacher

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kpipe/kpipe/internal/storage/store"
)

func podAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	p := obj.(*corev1.Pod)
	return labels.Set(p.Labels), fields.Set{"metadata.name": p.Name, "metadata.namespace": p.Namespace, "spec.nodeName": p.Spec.NodeName}, nil
}

// newPodPair is a pod store and a cache indexed by spec.nodeName, as
// AttachStorage builds them.
func newPodPair(t *testing.T) (*store.Store, *Cacher) {
	t.Helper()
	prefixes++
	s := store.New(etcd.Client, store.NewJSONCodec(scheme.Scheme, corev1.SchemeGroupVersion),
		func() runtime.Object { return &corev1.Pod{} },
		func() runtime.Object { return &corev1.PodList{} },
		fmt.Sprintf("/cachetest/%s-%d/pods", t.Name(), prefixes), schema.GroupResource{Resource: "pods"})
	c := New(s, zap.NewNop(), nil, WithIndex("spec.nodeName", func(o runtime.Object) string { return o.(*corev1.Pod).Spec.NodeName }))
	t.Cleanup(c.Stop)
	return s, c
}

// podChurn creates, moves between nodes (and off them), relabels and
// deletes pods in three namespaces.
func podChurn(t *testing.T, s *store.Store, seed int64, n int) {
	ctx := context.Background()
	r := rand.New(rand.NewSource(seed))
	nodes := []string{"", "n0", "n1", "n2"}
	for i := 0; i < n; i++ {
		ns := fmt.Sprintf("ns-%d", r.Intn(3))
		name := fmt.Sprintf("p-%d", r.Intn(20))
		k := key(s, ns, name)
		switch r.Intn(4) {
		case 0, 1:
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"tier": []string{"a", "b"}[r.Intn(2)]}},
				Spec: corev1.PodSpec{NodeName: nodes[r.Intn(len(nodes))]}}
			if err := s.Create(ctx, k, p, nil, 0); err != nil && !isExists(err) {
				t.Error(err)
			}
		case 2:
			err := s.GuaranteedUpdate(ctx, k, &corev1.Pod{}, false, nil, func(in runtime.Object, _ store.ResponseMeta) (runtime.Object, *time.Duration, error) {
				p := in.(*corev1.Pod)
				p.Spec.NodeName = nodes[r.Intn(len(nodes))]
				p.Labels = map[string]string{"tier": []string{"a", "b"}[r.Intn(2)]}
				return p, nil, nil
			})
			if err != nil && !isNotFound(err) {
				t.Error(err)
			}
		case 3:
			if err := s.Delete(ctx, k, &corev1.Pod{}, nil, nil); err != nil && !isNotFound(err) {
				t.Error(err)
			}
		}
	}
}

func podNames(l *corev1.PodList) []string {
	var out []string
	for _, p := range l.Items {
		out = append(out, p.Namespace+"/"+p.Name+"@"+p.ResourceVersion+"@"+p.Spec.NodeName)
	}
	return out
}

// Lists by spec.nodeName and by namespace come from the index and equal
// etcd's answer at the same revision under concurrent writes: items,
// resourceVersions and continue tokens, page after page.
func TestIndexedListsEqualEtcd(t *testing.T) {
	s, c := newPodPair(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() { defer wg.Done(); podChurn(t, s, int64(w), 300) }()
	}
	node := func(n string) fields.Selector { return fields.OneTermEqualSelector("spec.nodeName", n) }
	check := func(prefix string, pred store.Predicate) {
		t.Helper()
		pred.GetAttrs = podAttrs
		got := &corev1.PodList{}
		if err := c.GetList(ctx, prefix, store.ListOptions{Recursive: true, Predicate: pred}, got); err != nil {
			t.Fatal(err)
		}
		want := &corev1.PodList{}
		if err := s.GetList(ctx, prefix, store.ListOptions{Recursive: true, Predicate: pred, ResourceVersion: got.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact}, want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Items, want.Items) || got.Continue != want.Continue || !reflect.DeepEqual(got.RemainingItemCount, want.RemainingItemCount) {
			t.Fatalf("%s %v %v at %s:\ncache %v continue=%q remaining=%v\netcd  %v continue=%q remaining=%v",
				prefix, pred.Field, pred.Label, got.ResourceVersion, podNames(got), got.Continue, got.RemainingItemCount, podNames(want), want.Continue, want.RemainingItemCount)
		}
		// The next pages, from etcd on the cache's token, complete the
		// same snapshot as etcd's own pages.
		for got.Continue != "" {
			p := pred
			p.Continue = got.Continue
			next, wantNext := &corev1.PodList{}, &corev1.PodList{}
			if err := c.GetList(ctx, prefix, store.ListOptions{Recursive: true, Predicate: p}, next); err != nil {
				t.Fatal(err)
			}
			p.Continue = want.Continue
			if err := s.GetList(ctx, prefix, store.ListOptions{Recursive: true, Predicate: p}, wantNext); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(next.Items, wantNext.Items) || next.Continue != wantNext.Continue {
				t.Fatalf("next page: cache %v, etcd %v", podNames(next), podNames(wantNext))
			}
			got, want = next, wantNext
		}
	}
	const rounds = 30
	for i := 0; i < rounds; i++ {
		check(s.Prefix(), store.Predicate{Field: node("n1")})
		check(s.Prefix(), store.Predicate{Field: node("n2"), Limit: 2})
		check(s.Prefix(), store.Predicate{Field: node(""), Limit: 3})
		check(s.Prefix()+"ns-1/", store.Predicate{Field: node("n0"), Label: labels.SelectorFromSet(labels.Set{"tier": "a"}), Limit: 2})
		check(s.Prefix(), store.Predicate{Field: fields.OneTermEqualSelector("metadata.namespace", "ns-2"), Limit: 4})
		check(s.Prefix(), store.Predicate{Field: fields.AndSelectors(node("n1"), fields.OneTermEqualSelector("metadata.namespace", "ns-0"))})
		check(s.Prefix(), store.Predicate{Field: fields.OneTermNotEqualSelector("spec.nodeName", "n1"), Limit: 5})
	}
	wg.Wait()
	// (A list may go to etcd when the cache lags too long on a loaded
	// machine; most must not.)
	if hits, want := c.indexHits.Load(), int64(3*rounds); hits < want {
		t.Fatalf("%d lists read an index, want at least %d", hits, want)
	}
}

// A watch by spec.nodeName gets from the index exactly the events etcd's
// watch sends with the same selector: pods scheduled to the node are
// ADDED, moved away DELETED; watchers of other nodes get none of them.
func TestIndexedWatchesEqualEtcd(t *testing.T) {
	s, c := newPodPair(t)
	ctx := context.Background()
	podChurn(t, s, 7, 100)
	start, _ := s.CurrentRevision(ctx)
	if !c.waitFor(ctx, start, time.Now()) {
		t.Fatal("the cache did not catch up")
	}
	for _, from := range []string{fmt.Sprint(start), "0"} {
		t.Run("from "+from, func(t *testing.T) {
			type w struct {
				name       string
				key        string
				pred       store.Predicate
				last       string // the marker pod it sees last
				cache, etc watch.Interface
			}
			m := func(ns, node string) string { return ns + "/last-" + from + node }
			var ws []*w
			for n, last := range map[string]string{"n0": m("ns-1", "n0"), "n1": m("ns-0", "n1"), "": m("ns-0", "")} {
				ws = append(ws, &w{name: "node " + n, key: s.Prefix(), last: last, pred: store.Predicate{Field: fields.OneTermEqualSelector("spec.nodeName", n), GetAttrs: podAttrs}})
			}
			ws = append(ws, &w{name: "namespace", key: s.Prefix() + "ns-1/", last: m("ns-1", "n0"), pred: store.Predicate{GetAttrs: podAttrs}})
			ws = append(ws, &w{name: "node in namespace", key: s.Prefix() + "ns-2/", last: m("ns-2", "n2"), pred: store.Predicate{Field: fields.OneTermEqualSelector("spec.nodeName", "n2"), GetAttrs: podAttrs}})
			ws = append(ws, &w{name: "all", key: s.Prefix(), last: m("ns-0", ""), pred: store.Predicate{GetAttrs: podAttrs}})
			rv := from
			if from == "0" {
				cur, _ := s.CurrentRevision(ctx)
				if !c.waitFor(ctx, cur, time.Now()) {
					t.Fatal("the cache did not catch up")
				}
				rv = fmt.Sprint(cur)
			}
			for _, x := range ws {
				var err error
				if x.cache, err = c.Watch(ctx, x.key, store.ListOptions{ResourceVersion: from, Recursive: true, Predicate: x.pred}); err != nil {
					t.Fatal(err)
				}
				if _, ok := x.cache.(*cacheWatcher); !ok {
					t.Fatalf("%s: not served by the cache", x.name)
				}
				// From "0" the cache starts with the current objects as
				// ADDED; etcd does the same with sendInitialEvents.
				opts := store.ListOptions{ResourceVersion: rv, Recursive: true, Predicate: x.pred}
				if from == "0" {
					initial := true
					opts.SendInitialEvents, opts.ResourceVersion = &initial, ""
				}
				if x.etc, err = s.Watch(ctx, x.key, opts); err != nil {
					t.Fatal(err)
				}
			}
			// The node watchers are dispatched to through the index, the
			// namespace ones by namespace.
			c.mu.RLock()
			idx := c.indexes[0].watchers
			byNode := len(idx["n0"]) + len(idx["n1"]) + len(idx[""]) + len(idx["n2"])
			byNS := len(c.nsWatchers["ns-1"])
			c.mu.RUnlock()
			if byNode != 4 || byNS != 1 {
				t.Fatalf("%d watchers by node (want 4), %d by namespace (want 1)", byNode, byNS)
			}
			podChurn(t, s, 8, 200)
			// Last writes every watcher sees, to know where to stop.
			for _, x := range []struct{ ns, node string }{{"ns-1", "n0"}, {"ns-2", "n2"}, {"ns-0", "n1"}, {"ns-0", ""}} {
				out := &corev1.Pod{}
				p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: x.ns, Name: "last-" + from + x.node}, Spec: corev1.PodSpec{NodeName: x.node}}
				if err := s.Create(ctx, key(s, x.ns, p.Name), p, out, 0); err != nil {
					t.Fatal(err)
				}
			}
			for _, x := range ws {
				got := collectPods(t, x.cache, x.last)
				want := collectPods(t, x.etc, x.last)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: cache sent %d events, etcd %d\ncache %v\netcd  %v", x.name, len(got), len(want), got, want)
				}
			}
		})
	}
}

// collectPods reads events until the one of pod last (namespace/name).
func collectPods(t *testing.T, w watch.Interface, last string) []string {
	t.Helper()
	defer w.Stop()
	var out []string
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed after %d events", len(out))
			}
			if ev.Type == watch.Bookmark {
				continue
			}
			p := ev.Object.(*corev1.Pod)
			out = append(out, fmt.Sprintf("%s %s/%s@%s %s %v", ev.Type, p.Namespace, p.Name, p.ResourceVersion, p.Spec.NodeName, p.Labels))
			if p.Namespace+"/"+p.Name == last {
				return out
			}
		case <-timeout:
			t.Fatalf("no event of %s after %d events: %v", last, len(out), out)
		}
	}
}

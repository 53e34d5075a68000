package cacher

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kpipe/kpipe/internal/storage/store"
)

// tierFlips creates x with tier=a, then sets tier to b and back to a.
func tierFlips(t *testing.T, s *store.Store) {
	t.Helper()
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x", Labels: map[string]string{"tier": "a"}}}
	if err := s.Create(ctx, key(s, "ns", "x"), cm, nil, 0); err != nil {
		t.Fatal(err)
	}
	for _, tier := range []string{"b", "a"} {
		err := s.GuaranteedUpdate(ctx, key(s, "ns", "x"), &corev1.ConfigMap{}, false, nil, func(in runtime.Object, _ store.ResponseMeta) (runtime.Object, *time.Duration, error) {
			cm := in.(*corev1.ConfigMap)
			cm.Labels["tier"] = tier
			return cm, nil, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// watchTypes opens a watch from the cache's current revision and
// returns a function that reads n events' types.
func watchTypes(t *testing.T, s *store.Store, c *Cacher, pred store.Predicate) func(n int) []watch.EventType {
	t.Helper()
	ctx := context.Background()
	cur, _ := s.CurrentRevision(ctx)
	if !c.waitFor(ctx, cur, time.Now()) {
		t.Fatal("the cache did not catch up")
	}
	w, err := c.Watch(ctx, s.Prefix(), store.ListOptions{ResourceVersion: fmt.Sprint(cur), Recursive: true, Encodable: true, Predicate: pred})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return func(n int) []watch.EventType {
		var got []watch.EventType
		for len(got) < n {
			select {
			case ev := <-w.ResultChan():
				got = append(got, ev.Type)
			case <-time.After(10 * time.Second):
				t.Fatalf("events %v, then none", got)
			}
		}
		return got
	}
}

// countingAttrs is DefaultAttrs with tier's value mapped through flip,
// counting its calls.
func countingAttrs(calls *atomic.Int64, flip map[string]string) func(runtime.Object) (labels.Set, fields.Set, error) {
	return func(obj runtime.Object) (labels.Set, fields.Set, error) {
		calls.Add(1)
		ls, fs, err := store.DefaultAttrs(obj)
		if err != nil {
			return nil, nil, err
		}
		out := labels.Set{}
		for k, v := range ls {
			out[k] = v
		}
		if v, ok := flip[out["tier"]]; ok {
			out["tier"] = v
		}
		return out, fs, nil
	}
}

// Watchers whose predicates share an AttrsKey share each event's
// attributes: GetAttrs runs once per object and event, not per watcher.
func TestWatchersShareAttrs(t *testing.T) {
	s, c := newPair(t)
	var calls atomic.Int64
	pred := store.Predicate{Label: labels.SelectorFromSet(labels.Set{"tier": "a"}), GetAttrs: countingAttrs(&calls, nil), AttrsKey: "k"}
	a, b := watchTypes(t, s, c, pred), watchTypes(t, s, c, pred)
	tierFlips(t, s)
	want := fmt.Sprint([]watch.EventType{watch.Added, watch.Deleted, watch.Added})
	for _, read := range []func(int) []watch.EventType{a, b} {
		if got := fmt.Sprint(read(3)); got != want {
			t.Fatalf("events %s, want %s", got, want)
		}
	}
	// The create's object, and each update's object and previous one.
	if n := calls.Load(); n != 5 {
		t.Fatalf("GetAttrs ran %d times for 3 events, want 5", n)
	}
}

// A watcher with another AttrsKey selects with its own GetAttrs, whichever
// watcher computes the shared attributes first.
func TestWatchersOwnAttrs(t *testing.T) {
	s, c := newPair(t)
	var calls atomic.Int64
	sel := labels.SelectorFromSet(labels.Set{"tier": "a"})
	plain := watchTypes(t, s, c, store.Predicate{Label: sel, GetAttrs: countingAttrs(&calls, nil), AttrsKey: "k"})
	flipped := watchTypes(t, s, c, store.Predicate{Label: sel, GetAttrs: countingAttrs(&calls, map[string]string{"a": "b", "b": "a"}), AttrsKey: "flipped"})
	none := watchTypes(t, s, c, store.Predicate{Label: sel})
	tierFlips(t, s)
	for _, tc := range []struct {
		name string
		read func(int) []watch.EventType
		want []watch.EventType
	}{
		{"plain", plain, []watch.EventType{watch.Added, watch.Deleted, watch.Added}},
		{"flipped", flipped, []watch.EventType{watch.Added, watch.Deleted}},
		{"no key", none, []watch.EventType{watch.Added, watch.Deleted, watch.Added}},
	} {
		if got := tc.read(len(tc.want)); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: events %v, want %v", tc.name, got, tc.want)
		}
	}
}

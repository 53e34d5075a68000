package store

import (
	"context"
	"fmt"
	"net/http"
	goruntime "runtime"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// want is an expected event: type, object name and, when set, a data value.
type want struct {
	typ  watch.EventType
	name string
	v    string
}

func expectEvents(t *testing.T, w watch.Interface, wants ...want) []watch.Event {
	t.Helper()
	var got []watch.Event
	for _, wt := range wants {
		ev := nextEvent(t, w)
		got = append(got, ev)
		if ev.Type != wt.typ || objName(ev.Object) != wt.name {
			t.Fatalf("got %s %s, want %s %s", ev.Type, objName(ev.Object), wt.typ, wt.name)
		}
		if wt.v != "" {
			if c := ev.Object.(*corev1.ConfigMap); c.Data["v"] != wt.v {
				t.Fatalf("%s %s data %v, want v=%s", ev.Type, wt.name, c.Data, wt.v)
			}
		}
		if objRV(ev.Object) == "" {
			t.Fatalf("%s %s has no resourceVersion", ev.Type, wt.name)
		}
	}
	return got
}

func TestWatch(t *testing.T) {
	t.Parallel()
	s, p := newCMStore(t)
	ctx := testCtx(t)
	a := mustCreate(t, s, key(p, "ns", "a"), cm("ns", "a", nil, map[string]string{"v": "1"})).(*corev1.ConfigMap)
	mustCreate(t, s, key(p, "ns", "b"), cm("ns", "b", nil, map[string]string{"v": "1"}))
	mustCreate(t, s, key(p, "ns", "c"), cm("ns", "c", nil, map[string]string{"v": "1"}))

	t.Run("from a revision is exclusive", func(t *testing.T) {
		w, err := s.Watch(ctx, p, ListOptions{Recursive: true, ResourceVersion: a.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		expectEvents(t, w, want{watch.Added, "b", "1"}, want{watch.Added, "c", "1"})
		expectNoEvent(t, w, 200*time.Millisecond)
	})

	t.Run("from 0 sends the current state then changes", func(t *testing.T) {
		w, err := s.Watch(ctx, p+"/ns", ListOptions{Recursive: true, ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		expectEvents(t, w, want{watch.Added, "a", "1"}, want{watch.Added, "b", "1"}, want{watch.Added, "c", "1"})
		mustCreate(t, s, key(p, "ns", "d"), cm("ns", "d", nil, map[string]string{"v": "1"}))
		upd := setData(t, s, key(p, "ns", "a"), map[string]string{"v": "2"})
		if err := s.Delete(ctx, key(p, "ns", "b"), nil, nil, nil); err != nil {
			t.Fatal(err)
		}
		got := expectEvents(t, w, want{watch.Added, "d", "1"}, want{watch.Modified, "a", "2"}, want{watch.Deleted, "b", "1"})
		if objRV(got[1].Object) != upd.ResourceVersion {
			t.Fatalf("MODIFIED RV %s, update returned %s", objRV(got[1].Object), upd.ResourceVersion)
		}
		// The DELETED event carries the last state at the delete's revision.
		delRV, _ := strconv.Atoi(objRV(got[2].Object))
		if updRV, _ := strconv.Atoi(upd.ResourceVersion); delRV <= updRV {
			t.Fatalf("DELETED RV %d, want after %d", delRV, updRV)
		}
	})

	t.Run("a single key", func(t *testing.T) {
		w, err := s.Watch(ctx, key(p, "ns", "c"), ListOptions{ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		expectEvents(t, w, want{watch.Added, "c", "1"})
		setData(t, s, key(p, "ns", "a"), map[string]string{"v": "3"})
		setData(t, s, key(p, "ns", "c"), map[string]string{"v": "2"})
		expectEvents(t, w, want{watch.Modified, "c", "2"})
	})

	t.Run("send initial events false starts now", func(t *testing.T) {
		w, err := s.Watch(ctx, p, ListOptions{Recursive: true, SendInitialEvents: ptr(false)})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		setData(t, s, key(p, "ns", "c"), map[string]string{"v": "3"})
		expectEvents(t, w, want{watch.Modified, "c", "3"})
	})

	t.Run("send initial events ends with an annotated bookmark", func(t *testing.T) {
		w, err := s.Watch(ctx, p, ListOptions{Recursive: true, SendInitialEvents: ptr(true), ProgressNotify: true, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		evs := expectEvents(t, w, want{watch.Added, "a", ""}, want{watch.Added, "c", ""}, want{watch.Added, "d", ""})
		ev := nextEvent(t, w)
		if ev.Type != watch.Bookmark {
			t.Fatalf("got %s, want BOOKMARK", ev.Type)
		}
		bm := ev.Object.(*corev1.ConfigMap)
		if bm.Annotations[metav1.InitialEventsAnnotationKey] != "true" || bm.Name != "" {
			t.Fatalf("bookmark %+v", bm.ObjectMeta)
		}
		last, _ := strconv.Atoi(objRV(evs[2].Object))
		if rv, _ := strconv.Atoi(bm.ResourceVersion); rv < last {
			t.Fatalf("bookmark RV %d before the initial events' %d", rv, last)
		}
	})

	t.Run("bad resourceVersion", func(t *testing.T) {
		_, err := s.Watch(ctx, p, ListOptions{Recursive: true, ResourceVersion: "x"})
		wantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
	})
}

func TestWatchSelectorTransitions(t *testing.T) {
	t.Parallel()
	s, p := newCMStore(t)
	ctx := testCtx(t)
	w, err := s.Watch(ctx, p, ListOptions{Recursive: true, SendInitialEvents: ptr(false),
		Predicate: Predicate{Label: labels.SelectorFromSet(labels.Set{"app": "web"})}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	relabel := func(name, app, v string) {
		t.Helper()
		o := &corev1.ConfigMap{}
		err := s.GuaranteedUpdate(ctx, key(p, "ns", name), o, false, nil, func(in runtime.Object, _ ResponseMeta) (runtime.Object, *time.Duration, error) {
			c := in.(*corev1.ConfigMap)
			c.Labels = map[string]string{"app": app}
			c.Data = map[string]string{"v": v}
			return c, nil, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	steps := []struct {
		name string
		do   func()
		want []want
	}{
		{"create not matching: nothing", func() {
			mustCreate(t, s, key(p, "ns", "x"), cm("ns", "x", map[string]string{"app": "db"}, map[string]string{"v": "0"}))
		}, nil},
		{"starts matching: ADDED", func() { relabel("x", "web", "1") }, []want{{watch.Added, "x", "1"}}},
		{"still matching: MODIFIED", func() { relabel("x", "web", "2") }, []want{{watch.Modified, "x", "2"}}},
		{"stops matching: DELETED with the old state", func() { relabel("x", "db", "3") }, []want{{watch.Deleted, "x", "2"}}},
		{"not matching either side: nothing", func() { relabel("x", "db", "4") }, nil},
		{"delete not matching: nothing", func() {
			if err := s.Delete(ctx, key(p, "ns", "x"), nil, nil, nil); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"create matching: ADDED", func() {
			mustCreate(t, s, key(p, "ns", "y"), cm("ns", "y", map[string]string{"app": "web"}, map[string]string{"v": "0"}))
		}, []want{{watch.Added, "y", "0"}}},
		{"delete matching: DELETED", func() {
			if err := s.Delete(ctx, key(p, "ns", "y"), nil, nil, nil); err != nil {
				t.Fatal(err)
			}
		}, []want{{watch.Deleted, "y", "0"}}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.do()
			expectEvents(t, w, st.want...)
		})
	}
	expectNoEvent(t, w, 200*time.Millisecond)
}

func TestWatchThousandWritesInOrder(t *testing.T) {
	t.Parallel()
	s, p := newCMStore(t)
	ctx := testCtx(t)
	w, err := s.Watch(ctx, p, ListOptions{Recursive: true, SendInitialEvents: ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	const n = 1000
	k := key(p, "ns", "hot")
	mustCreate(t, s, k, cm("ns", "hot", nil, map[string]string{"v": "0"}))
	done := make(chan error, 1)
	go func() {
		for i := 1; i < n; i++ {
			err := s.GuaranteedUpdate(ctx, k, &corev1.ConfigMap{}, false, nil, func(in runtime.Object, _ ResponseMeta) (runtime.Object, *time.Duration, error) {
				c := in.(*corev1.ConfigMap)
				c.Data = map[string]string{"v": strconv.Itoa(i)}
				return c, nil, nil
			})
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	lastRV := 0
	for i := range n {
		ev := nextEvent(t, w)
		c, ok := ev.Object.(*corev1.ConfigMap)
		if !ok {
			t.Fatalf("event %d: %s %T", i, ev.Type, ev.Object)
		}
		if c.Data["v"] != strconv.Itoa(i) {
			t.Fatalf("event %d carries v=%s", i, c.Data["v"])
		}
		rv, _ := strconv.Atoi(c.ResourceVersion)
		if rv <= lastRV {
			t.Fatalf("event %d RV %d not after %d", i, rv, lastRV)
		}
		lastRV = rv
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestWatchBookmarks(t *testing.T) {
	t.Parallel()
	s, p := newCMStore(t)
	ctx := testCtx(t)
	o := mustCreate(t, s, key(p, "ns", "a"), cm("ns", "a", nil, nil)).(*corev1.ConfigMap)
	w, err := s.Watch(ctx, p, ListOptions{Recursive: true, ResourceVersion: o.ResourceVersion, ProgressNotify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// etcd answers a progress request once the watch is registered; ask
	// until a bookmark arrives.
	deadline := time.After(20 * time.Second)
	for {
		if err := s.RequestWatchProgress(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-w.ResultChan():
			if ev.Type != watch.Bookmark {
				t.Fatalf("got %s, want BOOKMARK", ev.Type)
			}
			bm := ev.Object.(*corev1.ConfigMap)
			rv, _ := strconv.Atoi(bm.ResourceVersion)
			orv, _ := strconv.Atoi(o.ResourceVersion)
			if rv < orv || bm.Name != "" || len(bm.Annotations) != 0 {
				t.Fatalf("bookmark %+v", bm.ObjectMeta)
			}
			return
		case <-time.After(200 * time.Millisecond):
		case <-deadline:
			t.Fatal("no bookmark")
		}
	}
}

func TestWatchStop(t *testing.T) {
	t.Parallel()
	s, p := newCMStore(t)
	mustCreate(t, s, key(p, "ns", "a"), cm("ns", "a", nil, nil))

	tests := []struct {
		name string
		end  func(w watch.Interface, cancel context.CancelFunc)
	}{
		{"Stop", func(w watch.Interface, _ context.CancelFunc) { w.Stop() }},
		{"Stop twice", func(w watch.Interface, _ context.CancelFunc) { w.Stop(); w.Stop() }},
		{"ctx cancel", func(_ watch.Interface, cancel context.CancelFunc) { cancel() }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(testCtx(t))
			defer cancel()
			w, err := s.Watch(ctx, p, ListOptions{Recursive: true, ResourceVersion: "0"})
			if err != nil {
				t.Fatal(err)
			}
			expectEvents(t, w, want{watch.Added, "a", ""})
			tc.end(w, cancel)
			expectClosed(t, w)
			w.Stop() // still safe after the end
		})
	}

	t.Run("no goroutines leak", func(t *testing.T) {
		// Warm up the client's watch stream so its goroutines are counted.
		w0, err := s.Watch(testCtx(t), p, ListOptions{Recursive: true, SendInitialEvents: ptr(false)})
		if err != nil {
			t.Fatal(err)
		}
		defer w0.Stop()
		before := goruntime.NumGoroutine()
		for range 50 {
			w, err := s.Watch(testCtx(t), p, ListOptions{Recursive: true, ResourceVersion: "0"})
			if err != nil {
				t.Fatal(err)
			}
			nextEvent(t, w)
			w.Stop()
		}
		// etcd's client tears its substreams down asynchronously.
		deadline := time.Now().Add(10 * time.Second)
		for goruntime.NumGoroutine() > before+5 {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				t.Fatalf("goroutines %d, before %d\n%s", goruntime.NumGoroutine(), before, buf[:goruntime.Stack(buf, true)])
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

func TestWatchSlowConsumerIsClosed(t *testing.T) {
	t.Parallel()
	s, p := newCMStore(t, WithWatchSendTimeout(200*time.Millisecond))
	ctx := testCtx(t)
	w, err := s.Watch(ctx, p, ListOptions{Recursive: true, SendInitialEvents: ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	const n = defaultWatchBuffer + 20
	for i := range n {
		name := fmt.Sprintf("c%03d", i)
		mustCreate(t, s, key(p, "ns", name), cm("ns", name, nil, nil))
	}
	time.Sleep(time.Second) // never reading: the buffer fills, the send times out
	got := 0
	for range w.ResultChan() {
		got++
	}
	if got == 0 || got >= n {
		t.Fatalf("slow consumer got %d of %d events before the close, want a full buffer", got, n)
	}
}

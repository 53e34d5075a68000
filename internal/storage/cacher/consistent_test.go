package cacher

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kpipe/kpipe/internal/storage/store"
)

// A consistent get (no resourceVersion) is answered from the cache and
// still reads every write acknowledged before it, while writes to another
// resource move etcd's revision past the cache's own events.
func TestConsistentGetsReadTheirWritesFromCache(t *testing.T) {
	s, c := newPair(t)
	other, _ := newPair(t)
	ctx := context.Background()
	k := key(s, "ns", "counter")
	if err := s.Create(ctx, k, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "counter"}}, nil, 0); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // another resource's writes
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint("o", i)}}
			if err := other.Create(ctx, key(other, "ns", cm.Name), cm, nil, 0); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()

	for i := range 200 {
		out := &corev1.ConfigMap{}
		err := s.GuaranteedUpdate(ctx, k, out, false, nil, func(in runtime.Object, _ store.ResponseMeta) (runtime.Object, *time.Duration, error) {
			cm := in.(*corev1.ConfigMap)
			cm.Data = map[string]string{"i": fmt.Sprint(i)}
			return cm, nil, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		got := &corev1.ConfigMap{}
		if err := c.Get(ctx, k, store.GetOptions{}, got); err != nil {
			t.Fatal(err)
		}
		if got.ResourceVersion != out.ResourceVersion || got.Data["i"] != fmt.Sprint(i) {
			t.Fatalf("write %d acknowledged at %s; the get after it read %s with %v", i, out.ResourceVersion, got.ResourceVersion, got.Data)
		}
	}
	if n := c.getHits.Load(); n < 200 {
		t.Fatalf("%d of 200 consistent gets came from the cache", n)
	}
	// A missing object is NotFound from the cache too.
	if err := c.Get(ctx, key(s, "ns", "absent"), store.GetOptions{}, &corev1.ConfigMap{}); !isNotFound(err) {
		t.Fatalf("get of a missing object: %v", err)
	}
}

// Readers arriving while a revision request is in flight share the next
// one, never the one already sent: two requests serve any number.
func TestRevisionRequestsCoalesce(t *testing.T) {
	var calls atomic.Int64
	release := make(chan struct{})
	started := make(chan int64, 10)
	r := &revisions{fetch: func(context.Context) (int64, error) {
		n := calls.Add(1)
		started <- n
		if n == 1 {
			<-release
		}
		return n * 100, nil
	}}
	ctx := context.Background()
	first := make(chan int64)
	go func() { rev, _ := r.current(ctx); first <- rev }()
	<-started // the first request is in flight
	var wg sync.WaitGroup
	revs := make(chan int64, 64)
	for range 64 {
		wg.Add(1)
		go func() { defer wg.Done(); rev, _ := r.current(ctx); revs <- rev }()
	}
	// Let the 64 queue behind the in-flight request.
	deadline := time.Now().Add(5 * time.Second)
	for {
		r.mu.Lock()
		queued := r.next != nil
		r.mu.Unlock()
		if queued || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	close(release)
	if got := <-first; got != 100 {
		t.Fatalf("first reader got %d", got)
	}
	wg.Wait()
	close(revs)
	for rev := range revs {
		if rev != 200 {
			t.Fatalf("a reader that arrived during the first request got its answer %d", rev)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d revision requests for 65 readers", n)
	}
	// Idle again: the next reader sends its own.
	if rev, _ := r.current(ctx); rev != 300 {
		t.Fatalf("after idle: %d", rev)
	}
}

// The progress notifications that consistent reads ask for move the
// cache's revision but do not flood watchers with bookmarks: they get
// about one per bookmark interval.
func TestConsistentReadsDoNotFloodBookmarks(t *testing.T) {
	s, c := newPair(t)
	other, _ := newPair(t)
	ctx := context.Background()
	w, err := c.Watch(ctx, s.Prefix(), store.ListOptions{Recursive: true, ProgressNotify: true, ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for i := range 30 {
		// Another resource's write leaves this cache behind etcd, so the
		// get needs a progress notification to catch up.
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint("b", i)}}
		if err := other.Create(ctx, key(other, "ns", cm.Name), cm, nil, 0); err != nil {
			t.Fatal(err)
		}
		if err := c.Get(ctx, key(s, "ns", "x"), store.GetOptions{}, &corev1.ConfigMap{}); !isNotFound(err) {
			t.Fatal(err)
		}
	}
	if n := c.getHits.Load(); n < 30 {
		t.Fatalf("%d of 30 gets came from the cache", n)
	}
	bookmarks := 0
	for {
		select {
		case ev := <-w.ResultChan():
			if ev.Type == watch.Bookmark {
				bookmarks++
			}
			continue
		case <-time.After(200 * time.Millisecond):
		}
		break
	}
	if bookmarks > 1 {
		t.Fatalf("the watcher got %d bookmarks for 30 consistent reads", bookmarks)
	}
}

// A revision request that hangs (etcd unreachable) ends at its own
// timeout, and the readers after it get a request of their own.
func TestRevisionRequestIsBounded(t *testing.T) {
	defer func(d time.Duration) { revisionTimeout = d }(revisionTimeout)
	revisionTimeout = 100 * time.Millisecond
	var calls atomic.Int64
	r := &revisions{fetch: func(ctx context.Context) (int64, error) {
		if calls.Add(1) == 1 {
			<-ctx.Done() // the first one hangs until its deadline
			return 0, ctx.Err()
		}
		return 42, nil
	}}
	done := make(chan error, 1)
	go func() { _, err := r.current(context.Background()); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a hung revision request reported no error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a hung revision request held its reader past its timeout")
	}
	if rev, err := r.current(context.Background()); err != nil || rev != 42 {
		t.Fatalf("the next reader got %d, %v", rev, err)
	}
}

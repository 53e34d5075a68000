package watche2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

// TestObjectLifecycle runs the tests of deletion, apply races, bookmarks,
// goldens and the kubectl commands that watch, on one server to keep the
// package's run time down. Its watches get a bookmark every 200ms.
func TestObjectLifecycle(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{Configure: func(c *config.Config) {
		c.Storage.BookmarkInterval = 200 * time.Millisecond
	}})
	cs := kubernetes.NewForConfigOrDie(ts.Config)
	t.Run("pod graceful deletion", func(t *testing.T) { testPodGracefulDeletion(t, ts, cs) })
	t.Run("propagation policy", func(t *testing.T) { testPropagationPolicy(t, ts, cs) })
	t.Run("concurrent apply creates", func(t *testing.T) { testConcurrentApplyCreates(t, ts, cs) })
	t.Run("periodic bookmarks", func(t *testing.T) { testPeriodicBookmarks(t, cs) })
	t.Run("golden patch results", func(t *testing.T) { testGoldenPatchResults(t, ts, cs) })
	t.Run("golden apply conflict and managedFields", func(t *testing.T) { testGoldenApplyConflictAndManagedFields(t, ts, cs) })
	t.Run("kubectl get -w and rollout status", func(t *testing.T) { testKubectlGetWatchAndRolloutStatus(t, ts, cs) })
	t.Run("kubectl delete waits", func(t *testing.T) { testKubectlDeleteWaits(t, ts, cs) })
}

// testPeriodicBookmarks checks that a watch with allowWatchBookmarks gets
// a BOOKMARK every interval even when nothing changes (kube sends one
// about every minute; the test shortens the interval), at a revision that
// never goes back and is never before an event already sent, while a
// watch that did not ask gets none.
func testPeriodicBookmarks(t *testing.T, cs kubernetes.Interface) {
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "bm")
	cms := cs.CoreV1().ConfigMaps("bm")
	created, err := cms.Create(ctx, e2eutil.ConfigMap("a", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	with, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: created.ResourceVersion, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer with.Stop()
	without, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: created.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer without.Stop()

	bookmark := func(t *testing.T) int {
		t.Helper()
		ev := nextEvent(t, with)
		bm, ok := ev.Object.(*corev1.ConfigMap)
		if ev.Type != watch.Bookmark || !ok || bm.Name != "" {
			t.Fatalf("got %s %#v, want a bookmark", ev.Type, ev.Object)
		}
		return mustAtoi(t, bm.ResourceVersion)
	}
	last := mustAtoi(t, created.ResourceVersion)
	for i := 0; i < 3; i++ {
		rv := bookmark(t)
		if rv < last {
			t.Fatalf("bookmark %d at %d, before %d", i, rv, last)
		}
		last = rv
	}
	// After a write, the event comes first and later bookmarks are not
	// before it.
	b, err := cms.Create(ctx, e2eutil.ConfigMap("b", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for {
		ev := nextEvent(t, with)
		if ev.Type == watch.Bookmark {
			continue // sent before the write
		}
		if got := ev.Object.(*corev1.ConfigMap); ev.Type != watch.Added || got.Name != "b" {
			t.Fatalf("got %s %s, want ADDED b", ev.Type, got.Name)
		}
		break
	}
	if rv := bookmark(t); rv < mustAtoi(t, b.ResourceVersion) {
		t.Errorf("bookmark at %d, before the event at %s", rv, b.ResourceVersion)
	}
	wantEvent(t, without, watch.Added, "b")
	select {
	case ev := <-without.ResultChan():
		t.Errorf("a watch without allowWatchBookmarks got %s %v", ev.Type, ev.Object)
	default:
	}
}

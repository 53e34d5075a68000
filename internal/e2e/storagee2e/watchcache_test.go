package storagee2e

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"sync"
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

// Two servers on one etcd prefix, one reading through the watch cache and
// one reading etcd every time: under concurrent writes, every list the
// cached server answers is what the uncached one answers at the same
// resourceVersion, continue token included, and a watch from a revision
// sends the same events through both. A get after a create reads it.
func TestWatchCacheAnswersEqualEtcd(t *testing.T) {
	var prefix string
	cached := testserver.Start(t, testserver.Options{Configure: func(c *config.Config) { prefix = c.Storage.Prefix }})
	direct := testserver.Start(t, testserver.Options{Configure: func(c *config.Config) {
		c.Storage.Prefix = prefix
		c.Storage.WatchCache.Enabled = false
	}})
	cc := kubernetes.NewForConfigOrDie(cached.Config)
	dc := kubernetes.NewForConfigOrDie(direct.Config)
	ctx := context.Background()
	e2eutil.Namespace(t, cc, "wc")
	start, err := cc.CoreV1().ConfigMaps("wc").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				name := fmt.Sprintf("cm-%d-%d", w, i%10)
				tier := []string{"a", "b"}[i%2]
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"tier": tier}}}
				made, err := cc.CoreV1().ConfigMaps("wc").Create(ctx, cm, metav1.CreateOptions{})
				if err != nil {
					if err := cc.CoreV1().ConfigMaps("wc").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
						t.Error(err)
					}
					continue
				}
				// A consistent get, from the cache, reads the write just
				// acknowledged: only this worker writes this name.
				got, err := cc.CoreV1().ConfigMaps("wc").Get(ctx, name, metav1.GetOptions{})
				if err != nil || got.ResourceVersion != made.ResourceVersion || !reflect.DeepEqual(got, made) {
					t.Errorf("get after create of %s at %s: %v %v", name, made.ResourceVersion, got.GetResourceVersion(), err)
				}
			}
		}()
	}
	same := func(opts metav1.ListOptions) {
		t.Helper()
		got, err := cc.CoreV1().ConfigMaps("wc").List(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		exact := opts
		exact.ResourceVersion, exact.ResourceVersionMatch = got.ResourceVersion, metav1.ResourceVersionMatchExact
		want, err := dc.CoreV1().ConfigMaps("wc").List(ctx, exact)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Items, want.Items) || got.Continue != want.Continue || !reflect.DeepEqual(got.RemainingItemCount, want.RemainingItemCount) {
			t.Fatalf("list %+v at %s: cached %d items continue %q, etcd %d items continue %q",
				opts, got.ResourceVersion, len(got.Items), got.Continue, len(want.Items), want.Continue)
		}
	}
	for range 15 {
		same(metav1.ListOptions{})
		same(metav1.ListOptions{Limit: 4})
		same(metav1.ListOptions{LabelSelector: "tier=a", Limit: 3})
	}
	wg.Wait()
	for i := range 3 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("kept-", i), Labels: map[string]string{"tier": "b"}}, Data: map[string]string{"k": fmt.Sprint(i)}}
		if _, err := cc.CoreV1().ConfigMaps("wc").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	sameGets(t, cached, direct, "wc")
	// The cached server answered its lists from memory.
	_, metrics := e2eutil.Get(t, e2eutil.MustLoopbackClient(t, cached), cached.URL()+"/metrics")
	e2eutil.MustContain(t, "metrics", metrics, `apiserver_cache_list_total{index="",resource_prefix="/configmaps"}`)
	_, err = dc.CoreV1().ConfigMaps("wc").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The last write of the namespace marks the end of both streams.
	last := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "last", Labels: map[string]string{"tier": "a"}}}
	if _, err = cc.CoreV1().ConfigMaps("wc").Create(ctx, last, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	events := func(cs kubernetes.Interface, selector string) []string {
		t.Helper()
		w, err := cs.CoreV1().ConfigMaps("wc").Watch(ctx, metav1.ListOptions{ResourceVersion: start.ResourceVersion, LabelSelector: selector})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		var out []string
		timeout := time.After(60 * time.Second)
		for {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					t.Fatalf("watch closed after %d events", len(out))
				}
				if ev.Type == watch.Bookmark {
					continue
				}
				cm := ev.Object.(*corev1.ConfigMap)
				out = append(out, fmt.Sprintf("%s %s %s %v", ev.Type, cm.Name, cm.ResourceVersion, cm.Labels))
				if cm.Name == "last" {
					return out
				}
			case <-timeout:
				t.Fatalf("no event for the last write after %d events", len(out))
			}
		}
	}
	for _, sel := range []string{"", "tier=a"} {
		got, want := events(cc, sel), events(dc, sel)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("watch %q: cached %d events, etcd %d\n%v\n%v", sel, len(got), len(want), got, want)
		}
		if len(got) < 40 {
			t.Fatalf("watch %q saw only %d events", sel, len(got))
		}
	}
}

// sameGets compares the bytes of every ConfigMap in ns as the two servers
// answer a get in each media type, twice: the cached server's second
// answer is the encoding it kept from the first.
func sameGets(t *testing.T, cached, direct *testserver.TestServer, ns string) {
	t.Helper()
	list, err := kubernetes.NewForConfigOrDie(direct.Config).CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) == 0 {
		t.Fatal("nothing to get")
	}
	get := func(ts *testserver.TestServer, c *http.Client, name, accept string) string {
		t.Helper()
		resp, b := e2eutil.GetAs(t, c, ts.URL()+"/api/v1/namespaces/"+ns+"/configmaps/"+name, accept)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("get %s as %s: %d %s", name, accept, resp.StatusCode, b)
		}
		return resp.Header.Get("Content-Type") + "\n" + string(b)
	}
	cc, dc := e2eutil.MustLoopbackClient(t, cached), e2eutil.MustLoopbackClient(t, direct)
	for _, cm := range list.Items {
		for _, accept := range []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"} {
			want := get(direct, dc, cm.Name, accept)
			for i := range 2 {
				if got := get(cached, cc, cm.Name, accept); got != want {
					t.Fatalf("get %d of %s as %s: cached server answered\n%q\netcd's\n%q", i+1, cm.Name, accept, got, want)
				}
			}
		}
	}
}

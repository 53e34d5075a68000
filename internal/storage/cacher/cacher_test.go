package cacher

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kpipe/kpipe/internal/storage/backend"
	"github.com/kpipe/kpipe/internal/storage/store"
)

var etcd *backend.Backend

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kpipe-cacher-test-")
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	etcd, err = backend.Open(ctx, backend.Config{DataDir: dir}, nil)
	cancel()
	if err != nil {
		panic(err)
	}
	code := m.Run()
	etcd.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}

var prefixes int

// newPair is an etcd store and a cache in front of it, on a fresh prefix.
func newPair(t *testing.T) (*store.Store, *Cacher) {
	t.Helper()
	prefixes++
	s := store.New(etcd.Client, store.NewJSONCodec(scheme.Scheme, corev1.SchemeGroupVersion),
		func() runtime.Object { return &corev1.ConfigMap{} },
		func() runtime.Object { return &corev1.ConfigMapList{} },
		fmt.Sprintf("/cachetest/%s-%d/configmaps", t.Name(), prefixes), schema.GroupResource{Resource: "configmaps"})
	c := New(s, zap.NewNop(), nil)
	t.Cleanup(c.Stop)
	// Reads before the cache is filled go to etcd, as kube's do.
	if !c.waitFor(context.Background(), 0, time.Now()) {
		t.Fatal("the cache never became ready")
	}
	return s, c
}

func key(s *store.Store, ns, name string) string { return s.Prefix() + ns + "/" + name }

// churn writes, updates and deletes ConfigMaps in three namespaces, with
// a label that flips, until stop closes.
func churn(t *testing.T, s *store.Store, seed int64, n int) {
	ctx := context.Background()
	r := rand.New(rand.NewSource(seed))
	for i := 0; i < n; i++ {
		ns := fmt.Sprintf("ns-%d", r.Intn(3))
		name := fmt.Sprintf("cm-%d", r.Intn(20))
		k := key(s, ns, name)
		switch r.Intn(4) {
		case 0, 1:
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"tier": []string{"a", "b"}[r.Intn(2)]}}}
			if err := s.Create(ctx, k, cm, nil, 0); err != nil && !isExists(err) {
				t.Error(err)
			}
		case 2:
			err := s.GuaranteedUpdate(ctx, k, &corev1.ConfigMap{}, false, nil, func(in runtime.Object, _ store.ResponseMeta) (runtime.Object, *time.Duration, error) {
				cm := in.(*corev1.ConfigMap)
				cm.Labels = map[string]string{"tier": []string{"a", "b"}[r.Intn(2)]}
				cm.Data = map[string]string{"i": fmt.Sprint(i)}
				return cm, nil, nil
			})
			if err != nil && !isNotFound(err) {
				t.Error(err)
			}
		case 3:
			if err := s.Delete(ctx, k, &corev1.ConfigMap{}, nil, nil); err != nil && !isNotFound(err) {
				t.Error(err)
			}
		}
	}
}

func names(l *corev1.ConfigMapList) []string {
	var out []string
	for _, cm := range l.Items {
		out = append(out, cm.Namespace+"/"+cm.Name+"@"+cm.ResourceVersion)
	}
	return out
}

// Under concurrent writes, every list the cache answers equals what etcd
// answers at the revision the cache reports: items, resourceVersions,
// continue tokens and remaining counts; and the next page, served by etcd
// from the cache's token, completes the same snapshot.
func TestListsEqualEtcdUnderWrites(t *testing.T) {
	s, c := newPair(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() { defer wg.Done(); churn(t, s, int64(w), 300) }()
	}
	check := func(prefix string, pred store.Predicate) {
		t.Helper()
		got := &corev1.ConfigMapList{}
		if err := c.GetList(ctx, prefix, store.ListOptions{Recursive: true, Predicate: pred}, got); err != nil {
			t.Fatal(err)
		}
		want := &corev1.ConfigMapList{}
		if err := s.GetList(ctx, prefix, store.ListOptions{Recursive: true, Predicate: pred, ResourceVersion: got.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact}, want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Items, want.Items) || got.Continue != want.Continue || !reflect.DeepEqual(got.RemainingItemCount, want.RemainingItemCount) {
			t.Fatalf("%s %v at %s:\ncache %v continue=%q remaining=%v\netcd  %v continue=%q remaining=%v",
				prefix, pred.Label, got.ResourceVersion, names(got), got.Continue, got.RemainingItemCount, names(want), want.Continue, want.RemainingItemCount)
		}
		if got.Continue != "" {
			rest := &corev1.ConfigMapList{}
			p := pred
			p.Continue = got.Continue
			if err := c.GetList(ctx, prefix, store.ListOptions{Recursive: true, Predicate: p}, rest); err != nil {
				t.Fatal(err)
			}
			if rest.ResourceVersion != got.ResourceVersion {
				t.Fatalf("the second page is at %s, the first at %s", rest.ResourceVersion, got.ResourceVersion)
			}
		}
	}
	const rounds = 40
	for i := 0; i < rounds; i++ {
		check(s.Prefix(), store.Predicate{})
		check(s.Prefix(), store.Predicate{Limit: 7})
		check(s.Prefix()+"ns-1/", store.Predicate{Limit: 3})
		check(s.Prefix(), store.Predicate{Label: labels.SelectorFromSet(labels.Set{"tier": "a"}), Limit: 5})
		check(s.Prefix()+"ns-2/", store.Predicate{Label: labels.SelectorFromSet(labels.Set{"tier": "b"})})
	}
	wg.Wait()
	// Every first page came from memory (continued pages from etcd).
	if hits := c.listHits.Load(); hits < 5*rounds {
		t.Fatalf("%d of %d lists were answered by the cache", hits, 5*rounds)
	}
	// Quiet now: a consistent list is at etcd's current revision.
	got := &corev1.ConfigMapList{}
	if err := c.GetList(ctx, s.Prefix(), store.ListOptions{Recursive: true}, got); err != nil {
		t.Fatal(err)
	}
	rev, _ := s.CurrentRevision(ctx)
	if got.ResourceVersion != fmt.Sprint(rev) {
		t.Fatalf("consistent list at %s, etcd at %d", got.ResourceVersion, rev)
	}
	// resourceVersion=0 gets answer from memory with the stored object.
	for _, cm := range got.Items {
		a, b := &corev1.ConfigMap{}, &corev1.ConfigMap{}
		if err := c.Get(ctx, key(s, cm.Namespace, cm.Name), store.GetOptions{ResourceVersion: "0"}, a); err != nil {
			t.Fatal(err)
		}
		if err := s.Get(ctx, key(s, cm.Namespace, cm.Name), store.GetOptions{}, b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("get from cache %+v, from etcd %+v", a, b)
		}
	}
	if err := c.Get(ctx, key(s, "ns-0", "missing"), store.GetOptions{ResourceVersion: "0"}, &corev1.ConfigMap{}); !isNotFound(err) {
		t.Fatalf("missing object: %v", err)
	}
}

type seen struct {
	typ  watch.EventType
	name string
	rv   string
	data string
}

func collect(t *testing.T, w watch.Interface, until string) []seen {
	t.Helper()
	defer w.Stop()
	var out []seen
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
			cm := ev.Object.(*corev1.ConfigMap)
			out = append(out, seen{ev.Type, cm.Namespace + "/" + cm.Name, cm.ResourceVersion, fmt.Sprint(cm.Labels, cm.Data)})
			if cm.ResourceVersion == until {
				return out
			}
		case <-timeout:
			t.Fatalf("no event at %s after %d events", until, len(out))
		}
	}
}

// Watches from the cache see exactly the events etcd's watch sends, from
// the same revision, with the same selector transitions.
func TestWatchesEqualEtcd(t *testing.T) {
	s, c := newPair(t)
	ctx := context.Background()
	churn(t, s, 7, 100)
	start, _ := s.CurrentRevision(ctx)
	if !c.waitFor(ctx, start, time.Now()) {
		t.Fatal("the cache did not catch up")
	}
	churn(t, s, 8, 200)
	// A last write to know where to stop.
	last := &corev1.ConfigMap{}
	if err := s.Create(ctx, key(s, "ns-0", "last"), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-0", Name: "last", Labels: map[string]string{"tier": "a"}}}, last, 0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		key  string
		pred store.Predicate
	}{
		{"all", s.Prefix(), store.Predicate{}},
		{"namespace", s.Prefix() + "ns-0/", store.Predicate{}},
		{"selector", s.Prefix(), store.Predicate{Label: labels.SelectorFromSet(labels.Set{"tier": "a"})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := store.ListOptions{ResourceVersion: fmt.Sprint(start), Recursive: true, Predicate: tc.pred}
			cw, err := c.Watch(ctx, tc.key, opts)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := cw.(*cacheWatcher); !ok {
				t.Fatalf("the watch from %d was not served by the cache", start)
			}
			ew, err := s.Watch(ctx, tc.key, opts)
			if err != nil {
				t.Fatal(err)
			}
			got, want := collect(t, cw, last.ResourceVersion), collect(t, ew, last.ResourceVersion)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("cache sent %d events, etcd %d\ncache %v\netcd  %v", len(got), len(want), got, want)
			}
		})
	}
}

// A watcher that never reads is cut off without holding up another.
func TestSlowWatcherIsCutOff(t *testing.T) {
	// Restored after the cache stops (cleanups run last first).
	old := watcherQueueMax
	t.Cleanup(func() { watcherQueueMax = old })
	watcherQueueMax = 200
	s, c := newPair(t)
	ctx := context.Background()
	if !c.waitFor(ctx, 1, time.Now()) {
		t.Fatal("cache not ready")
	}
	stalled, err := c.Watch(ctx, s.Prefix(), store.ListOptions{ResourceVersion: "0", Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	reader, err := c.Watch(ctx, s.Prefix(), store.ListOptions{ResourceVersion: "0", Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	n := watcherQueueMax + resultBuffer + 50
	got := make(chan int)
	go func() {
		count := 0
		for range reader.ResultChan() {
			count++
			if count == n {
				break
			}
		}
		got <- count
	}()
	for i := range n {
		if err := s.Create(ctx, key(s, "ns", fmt.Sprint(i)), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint(i)}}, nil, 0); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case count := <-got:
		if count != n {
			t.Fatalf("the reading watcher got %d of %d events", count, n)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the reading watcher was held up")
	}
	reader.Stop()
	// The stalled one ends: its channel closes after what was in flight.
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-stalled.ResultChan():
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("the stalled watcher was not cut off")
		}
	}
}

// A revision older than the window goes to etcd, which still has it.
func TestWatchOlderThanWindowGoesToEtcd(t *testing.T) {
	s, c := newPair(t)
	ctx := context.Background()
	start, _ := s.CurrentRevision(ctx)
	c.mu.Lock()
	c.window = 5
	c.mu.Unlock()
	for i := range 20 {
		if err := s.Create(ctx, key(s, "ns", fmt.Sprint(i)), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint(i)}}, nil, 0); err != nil {
			t.Fatal(err)
		}
	}
	cur, _ := s.CurrentRevision(ctx)
	if !c.waitFor(ctx, cur, time.Now()) {
		t.Fatal("cache not ready")
	}
	w, err := c.Watch(ctx, s.Prefix(), store.ListOptions{ResourceVersion: fmt.Sprint(start), Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := w.(*cacheWatcher); ok {
		t.Fatal("a revision older than the window was served by the cache")
	}
	if got := collect(t, w, fmt.Sprint(cur)); len(got) != 20 {
		t.Fatalf("etcd replayed %d events, want 20", len(got))
	}
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }
func isExists(err error) bool   { return apierrors.IsAlreadyExists(err) }

// The cache fills from a list in pages at one revision: with writes going
// on while it pages, it holds exactly what etcd held at that revision, and
// then follows.
func TestFillsInPages(t *testing.T) {
	old := syncPage
	syncPage = 7
	defer func() { syncPage = old }()
	prefixes++
	s := store.New(etcd.Client, store.NewJSONCodec(scheme.Scheme, corev1.SchemeGroupVersion),
		func() runtime.Object { return &corev1.ConfigMap{} },
		func() runtime.Object { return &corev1.ConfigMapList{} },
		fmt.Sprintf("/cachetest/%s-%d/configmaps", t.Name(), prefixes), schema.GroupResource{Resource: "configmaps"})
	churn(t, s, 3, 150)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); churn(t, s, 4, 100) }()
	c := New(s, zap.NewNop(), nil)
	t.Cleanup(c.Stop)
	wg.Wait()
	ctx := context.Background()
	got := &corev1.ConfigMapList{}
	if err := c.GetList(ctx, s.Prefix(), store.ListOptions{Recursive: true}, got); err != nil {
		t.Fatal(err)
	}
	if c.listHits.Load() != 1 {
		t.Fatal("the list was not answered by the cache")
	}
	want := &corev1.ConfigMapList{}
	if err := s.GetList(ctx, s.Prefix(), store.ListOptions{Recursive: true, ResourceVersion: got.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact}, want); err != nil {
		t.Fatal(err)
	}
	if len(want.Items) < 10 || !reflect.DeepEqual(got.Items, want.Items) {
		t.Fatalf("cache %v\netcd  %v", names(got), names(want))
	}
}

// Watches with sendInitialEvents (client-go's watch-list, and controllers
// that watch from nothing) are served by the cache and see what etcd's
// watch sends: the current objects as ADDED, the bookmark that ends them
// when bookmarks are on, then the changes; sendInitialEvents=false only
// the changes.
func TestWatchListEqualsEtcd(t *testing.T) {
	s, c := newPair(t)
	ctx := context.Background()
	churn(t, s, 5, 120)
	cur, _ := s.CurrentRevision(ctx)
	if !c.waitFor(ctx, cur, time.Now()) {
		t.Fatal("the cache did not catch up")
	}
	yes, no := true, false
	cases := []struct {
		name      string
		key       string
		rv        string
		send      *bool
		bookmarks bool
		pred      store.Predicate
	}{
		{"initial events and bookmark", s.Prefix(), "", &yes, true, store.Predicate{}},
		{"initial events from 0", s.Prefix(), "0", &yes, true, store.Predicate{}},
		{"initial events from a revision", s.Prefix(), fmt.Sprint(cur), &yes, true, store.Predicate{}},
		{"initial events without bookmarks", s.Prefix() + "ns-1/", "", &yes, false, store.Predicate{}},
		{"initial events with a selector", s.Prefix(), "", &yes, true, store.Predicate{Label: labels.SelectorFromSet(labels.Set{"tier": "a"})}},
		{"no initial events", s.Prefix(), "", &no, false, store.Predicate{}},
	}
	type pair struct{ cache, etcd watch.Interface }
	ws := make([]pair, len(cases))
	for i, tc := range cases {
		opts := store.ListOptions{ResourceVersion: tc.rv, Recursive: true, Predicate: tc.pred, SendInitialEvents: tc.send, ProgressNotify: tc.bookmarks}
		cw, err := c.Watch(ctx, tc.key, opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := cw.(*cacheWatcher); !ok {
			t.Fatalf("%s: not served by the cache", tc.name)
		}
		ew, err := s.Watch(ctx, tc.key, opts)
		if err != nil {
			t.Fatal(err)
		}
		ws[i] = pair{cw, ew}
	}
	// etcd's watches start from their own list; let them get there.
	time.Sleep(200 * time.Millisecond)
	churn(t, s, 6, 60)
	last := &corev1.ConfigMap{}
	if err := s.Create(ctx, key(s, "ns-1", "last"), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-1", Name: "last", Labels: map[string]string{"tier": "a"}}}, last, 0); err != nil {
		t.Fatal(err)
	}
	for i, tc := range cases {
		got, want := collectList(t, ws[i].cache, last.ResourceVersion), collectList(t, ws[i].etcd, last.ResourceVersion)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: cache sent %d events, etcd %d\ncache %v\netcd  %v", tc.name, len(got), len(want), got, want)
		}
	}
}

// collectList is collect with the bookmark that ends the initial events.
func collectList(t *testing.T, w watch.Interface, until string) []string {
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
			cm := ev.Object.(*corev1.ConfigMap)
			if ev.Type == watch.Bookmark {
				if cm.Annotations[metav1.InitialEventsAnnotationKey] == "true" {
					out = append(out, "BOOKMARK initial-events-end @"+cm.ResourceVersion)
				}
				continue
			}
			out = append(out, fmt.Sprintf("%s %s/%s@%s %v %v", ev.Type, cm.Namespace, cm.Name, cm.ResourceVersion, cm.Labels, cm.Data))
			if cm.ResourceVersion == until {
				return out
			}
		case <-timeout:
			t.Fatalf("no event at %s after %d events", until, len(out))
		}
	}
}

// Watchers that only encode share each event's encoding: two of them get
// objects that encode to exactly what the plain object encodes to, with
// one encoding per event between them; other watchers get plain copies.
func TestEncodableWatchersShareEncodings(t *testing.T) {
	s, c := newPair(t)
	ctx := context.Background()
	cur, _ := s.CurrentRevision(ctx)
	if !c.waitFor(ctx, cur, time.Now()) {
		t.Fatal("the cache did not catch up")
	}
	opts := store.ListOptions{ResourceVersion: fmt.Sprint(cur), Recursive: true, Encodable: true}
	a, err := c.Watch(ctx, s.Prefix(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	b, err := c.Watch(ctx, s.Prefix(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
	opts.Encodable = false
	plain, err := c.Watch(ctx, s.Prefix(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Stop()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x", Labels: map[string]string{"a": "b"}}, Data: map[string]string{"k": "v"}}
	if err := s.Create(ctx, key(s, "ns", "x"), cm, nil, 0); err != nil {
		t.Fatal(err)
	}
	next := func(w watch.Interface) runtime.Object {
		t.Helper()
		for {
			select {
			case ev := <-w.ResultChan():
				if ev.Type == watch.Bookmark {
					continue
				}
				return ev.Object
			case <-time.After(10 * time.Second):
				t.Fatal("no event")
			}
		}
	}
	enc := scheme.Codecs.LegacyCodec(corev1.SchemeGroupVersion)
	encode := func(o runtime.Object) string {
		var buf bytes.Buffer
		if err := enc.Encode(o, &buf); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	oa, ob, op := next(a), next(b), next(plain)
	if _, ok := op.(*corev1.ConfigMap); !ok {
		t.Fatalf("a plain watcher got %T", op)
	}
	ca, ok := oa.(*cachedObject)
	if !ok {
		t.Fatalf("an encodable watcher got %T", oa)
	}
	want := encode(op)
	if got := encode(oa); got != want {
		t.Fatalf("encoded\n%s\nwant\n%s", got, want)
	}
	if got := encode(ob); got != want {
		t.Fatalf("second watcher encoded\n%s\nwant\n%s", got, want)
	}
	if n := len(*ca.enc.list.Load()); n != 1 {
		t.Fatalf("%d encodings for one encoder", n)
	}
	if ob.(*cachedObject).enc != ca.enc {
		t.Fatal("the two watchers do not share the event's encodings")
	}
	if ob != oa {
		t.Fatal("the two watchers do not share the event's object")
	}
	// The object the encoders and GetObject see is a copy.
	got := ca.GetObject().(*corev1.ConfigMap)
	got.Labels["a"] = "changed"
	if encode(ob) != want || encode(op) != want {
		t.Fatal("changing GetObject's result changed the cache")
	}
}

// Package cacher is the watch cache: per resource, the current objects in
// memory, fed by one etcd watch, with a window of recent events. It serves
// lists (consistent ones once it has caught up with etcd's current
// revision, as kube's consistent-list-from-cache does), gets with
// resourceVersion=0, and watches from any revision in its window, so N
// watchers cost one etcd watch. Writes and everything it cannot answer go
// to the etcd store it wraps, which is also where a paged list continues.
package cacher

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kpipe/kpipe/internal/storage/store"
)

// Defaults, as kube sizes its caches: a window of recent events, and how
// long a read waits for the cache to reach a revision before etcd answers.
const (
	defaultWindow  = 1000
	waitForRev     = 3 * time.Second
	resultBuffer   = 64
	resyncBackoff  = time.Second
	progressPeriod = 100 * time.Millisecond
)

// watcherQueueMax is how many events a watcher may be behind before it is
// cut off (a variable for tests). Its queue holds references to the
// cache's events, and only while it is behind.
var watcherQueueMax = 4096

// syncPage is the page size of the list that fills the cache (a variable
// for tests).
var syncPage int64 = 500

// Cacher answers reads of one resource from memory. The embedded store
// serves writes and whatever the cache cannot answer.
type Cacher struct {
	*store.Store
	prefix string // the resource's key prefix, ending in "/"
	log    *zap.Logger
	window int

	mu       sync.RWMutex
	ready    bool
	rev      int64 // the revision the cache reflects
	oldest   int64 // the window holds every event after this revision
	objects  map[string]runtime.Object
	keys     keySet  // the keys of objects, in order
	events   []event // ring of recent events, oldest first
	watchers map[*cacheWatcher]struct{}
	advanced chan struct{} // closed and replaced when rev moves or ready changes

	// indexes, and the watchers by where events for them are dispatched
	// (index.go); all under mu.
	indexes     []*fieldIndex
	nsWatchers  map[string]watcherSet
	allWatchers watcherSet

	// listHits counts lists answered from memory, indexHits those of
	// them read through an index (tests read them).
	listHits  atomic.Int64
	indexHits atomic.Int64
	getHits   atomic.Int64
	metrics   *Metrics
	// gets keeps the encodings of objects gets answered with.
	gets getEncodings

	// revs and progressReq coalesce what consistent reads ask etcd.
	revs        revisions
	progressReq progress
	// lastBookmark is when watchers last got a bookmark, under mu.
	lastBookmark time.Time

	stop context.CancelFunc
	done chan struct{}
}

type event struct {
	typ  watch.EventType
	key  string
	obj  runtime.Object // the object after the event (before it, for a delete)
	prev runtime.Object // the object before the event; nil for a create
	rev  int64
	// initialEnd marks the bookmark after a watch's initial events.
	initialEnd bool
	// enc are obj's encodings, shared by the watchers that only encode.
	enc *encodings
}

// New starts a cache in front of s, for every key under its prefix. It fills in the background; until then
// every read goes to s.
func New(s *store.Store, log *zap.Logger, m *Metrics, opts ...Option) *Cacher {
	prefix := s.Prefix()
	ctx, cancel := context.WithCancel(context.Background())
	c := &Cacher{
		Store:    s,
		prefix:   prefix,
		log:      log,
		metrics:  m,
		window:   defaultWindow,
		objects:  map[string]runtime.Object{},
		watchers: map[*cacheWatcher]struct{}{},
		advanced: make(chan struct{}),
		stop:     cancel,
		done:     make(chan struct{}),
	}
	c.revs.fetch = s.CurrentRevision
	c.progressReq.request = s.RequestWatchProgress
	for _, o := range opts {
		o(c)
	}
	c.resetIndexes()
	go c.run(ctx)
	return c
}

// Stop ends the cache's etcd watch and every watch it serves.
func (c *Cacher) Stop() {
	c.stop()
	<-c.done
}

// run keeps the cache in step with etcd: list, then watch from the list's
// revision; on any error, start over.
func (c *Cacher) run(ctx context.Context) {
	defer close(c.done)
	for {
		err := c.sync(ctx)
		c.reset()
		if ctx.Err() != nil {
			return
		}
		c.log.Info("watch cache restarting", zap.String("resource", c.GroupResource().String()), zap.Error(err))
		select {
		case <-ctx.Done():
			return
		case <-time.After(resyncBackoff):
		}
	}
}

// reset drops the cache: reads go to etcd and watchers are closed, so
// clients re-watch from their last revision, as after kube's cache resets.
func (c *Cacher) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ready = false
	c.objects, c.events = map[string]runtime.Object{}, nil
	c.keys.reset(nil)
	for w := range c.watchers {
		w.terminate()
	}
	c.watchers = map[*cacheWatcher]struct{}{}
	c.resetIndexes()
	c.signal()
}

func (c *Cacher) signal() {
	close(c.advanced)
	c.advanced = make(chan struct{})
}

func (c *Cacher) sync(ctx context.Context) error {
	// The objects come in pages at one revision, as an informer lists:
	// one response for the whole resource would be held in memory at
	// once, several times over, while it is decoded.
	var rev int64
	var objects map[string]runtime.Object
	var keys []string
	cont := ""
	for {
		list := c.NewList()
		opts := store.ListOptions{Recursive: true, Predicate: store.Predicate{Limit: syncPage, Continue: cont}}
		if err := c.Store.GetList(ctx, c.prefix, opts, list); err != nil {
			return err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return err
		}
		lm, err := meta.ListAccessor(list)
		if err != nil {
			return err
		}
		if rev, err = parseRev(lm.GetResourceVersion()); err != nil {
			return err
		}
		if objects == nil {
			n := len(items)
			if r := lm.GetRemainingItemCount(); r != nil {
				n += int(*r)
			}
			objects = make(map[string]runtime.Object, n)
			keys = make([]string, 0, n)
		}
		for _, o := range items {
			k, err := c.keyOf(o)
			if err != nil {
				return err
			}
			objects[k] = o
			keys = append(keys, k)
		}
		if cont = lm.GetContinue(); cont == "" {
			break
		}
	}
	sort.Strings(keys)
	w, err := c.Store.Watch(ctx, c.prefix, store.ListOptions{ResourceVersion: fmt.Sprint(rev), Recursive: true, ProgressNotify: true})
	if err != nil {
		return err
	}
	defer w.Stop()
	c.mu.Lock()
	c.objects, c.events = objects, nil
	c.keys.reset(keys)
	for _, idx := range c.indexes {
		idx.keys = map[string]map[string]struct{}{}
	}
	for k, o := range objects {
		c.index(k, nil, o)
	}
	c.rev, c.oldest, c.ready = rev, rev, true
	c.signal()
	c.mu.Unlock()
	if c.metrics != nil {
		gr := c.GroupResource()
		c.metrics.initializations.WithLabelValues(gr.Group, gr.Resource).Inc()
		c.metrics.resourceVersion.WithLabelValues(gr.Group, gr.Resource).Set(float64(rev))
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return errors.New("etcd watch closed")
			}
			if err := c.apply(ev); err != nil {
				return err
			}
		}
	}
}

// apply takes one event from etcd into the cache and to the watchers.
func (c *Cacher) apply(ev watch.Event) error {
	switch ev.Type {
	case watch.Error:
		return apierrors.FromObject(ev.Object)
	case watch.Bookmark:
		rev, err := revOf(ev.Object)
		if err != nil {
			return err
		}
		// A progress notification moves the cache's revision, which
		// consistent reads wait for, and is the watchers' heartbeat: they
		// get it as a bookmark about once per bookmark interval, not for
		// each of the notifications those reads ask for.
		c.mu.Lock()
		if rev >= c.rev {
			c.rev = rev
			c.signal()
			if now := time.Now(); now.Sub(c.lastBookmark) >= c.Store.BookmarkInterval()*3/4 {
				c.lastBookmark = now
				c.dispatch(event{typ: watch.Bookmark, rev: rev})
			}
		}
		c.mu.Unlock()
		return nil
	}
	key, err := c.keyOf(ev.Object)
	if err != nil {
		return err
	}
	rev, err := revOf(ev.Object)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := event{typ: ev.Type, key: key, obj: ev.Object, prev: c.objects[key], rev: rev, enc: &encodings{}}
	switch ev.Type {
	case watch.Deleted:
		c.index(key, e.prev, nil)
		delete(c.objects, key)
		c.keys.delete(key)
	default:
		c.index(key, e.prev, ev.Object)
		c.objects[key] = ev.Object
		if e.prev == nil {
			c.keys.insert(key)
		}
	}
	if len(c.events) >= c.window {
		c.oldest = c.events[0].rev
		c.events = c.events[1:]
	}
	c.events = append(c.events, e)
	c.rev = rev
	c.signal()
	c.dispatch(e)
	if c.metrics != nil {
		gr := c.GroupResource()
		c.metrics.dispatched.WithLabelValues(gr.Group, gr.Resource).Inc()
		c.metrics.resourceVersion.WithLabelValues(gr.Group, gr.Resource).Set(float64(rev))
	}
	return nil
}

// keyOf is an object's etcd key under the resource prefix.
func (c *Cacher) keyOf(obj runtime.Object) (string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", err
	}
	if ns := m.GetNamespace(); ns != "" {
		return c.prefix + ns + "/" + m.GetName(), nil
	}
	return c.prefix + m.GetName(), nil
}

// Ready reports whether the cache is filled and answering reads.
func (c *Cacher) Ready() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.ready
}

// waitFor waits until the cache reflects rev, learned at since, or reports
// false when it cannot within waitForRev (the caller then asks etcd). It
// has etcd send a progress notification, so a resource that other
// resources' writes have left behind catches up at once.
func (c *Cacher) waitFor(ctx context.Context, rev int64, since time.Time) bool {
	deadline := time.NewTimer(waitForRev)
	defer deadline.Stop()
	asked := time.Time{}
	for {
		c.mu.RLock()
		ok, ready, ch := c.rev >= rev, c.ready, c.advanced
		c.mu.RUnlock()
		if ready && ok {
			return true
		}
		if ready && time.Since(asked) > progressPeriod {
			if !asked.IsZero() {
				since = time.Now().Add(-progressPeriod / 2) // the last one may be lost
			}
			asked = time.Now()
			c.progressReq.ask(ctx, since)
		}
		select {
		case <-ch:
		case <-time.After(progressPeriod):
		case <-deadline.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// fresh waits until the cache can answer a read at opts' revision, as
// kube's cacher does: "" is a consistent read (etcd's current revision,
// one cheap request), "0" is any, a number is a minimum.
func (c *Cacher) fresh(ctx context.Context, rv string) bool {
	switch rv {
	case "0":
		c.mu.RLock()
		defer c.mu.RUnlock()
		return c.ready
	case "":
		if !c.Ready() {
			return false // still filling: etcd answers at once
		}
		since := time.Now()
		cur, err := c.revs.current(ctx)
		if err != nil {
			return false
		}
		return c.waitFor(ctx, cur, since)
	}
	want, err := parseRev(rv)
	if err != nil {
		return false
	}
	return c.waitFor(ctx, want, time.Now())
}

// Get implements store.Interface. resourceVersion=0 is served from the
// cache as it is, a consistent get (no resourceVersion) once the cache has
// caught up with etcd's current revision, as consistent lists are: the
// revision requests of concurrent gets are coalesced (consistent.go), so
// they cost etcd a fraction of a read each, where kube reads etcd for
// every one. An exact resourceVersion reads etcd, which keeps history.
func (c *Cacher) Get(ctx context.Context, key string, opts store.GetOptions, out runtime.Object) error {
	obj, ok, err := c.getCached(ctx, key, opts, out)
	if err != nil || !ok || obj == nil {
		return err
	}
	return copyInto(obj, out)
}

// getCached answers a get from memory when it may (ok): with the cache's
// own object, which the caller must not change, or with nil after zeroing
// out for an absent key under IgnoreNotFound. Otherwise it reads etcd into
// out.
func (c *Cacher) getCached(ctx context.Context, key string, opts store.GetOptions, out runtime.Object) (obj runtime.Object, ok bool, err error) {
	// A key with a "." or ".." segment goes to the store, which refuses
	// it with kube's error rather than a NotFound.
	if (opts.ResourceVersion != "0" && opts.ResourceVersion != "") || !cleanUnder(key, c.prefix) || !c.fresh(ctx, opts.ResourceVersion) {
		return nil, false, c.Store.Get(ctx, key, opts, out)
	}
	c.getHits.Add(1)
	c.mu.RLock()
	obj, found := c.objects[key]
	c.mu.RUnlock()
	if !found {
		if opts.IgnoreNotFound {
			return nil, true, runtime.SetZeroValue(out)
		}
		return nil, true, apierrors.NewNotFound(c.GroupResource(), key[strings.LastIndex(key, "/")+1:])
	}
	return obj, true, nil
}

// cacheable reports whether a list can be answered from memory. Continued
// pages, exact revisions and single keys read etcd, which keeps history.
func (c *Cacher) cacheable(key string, opts store.ListOptions) bool {
	if !opts.Recursive || opts.Predicate.Continue != "" || !cleanUnder(key, c.prefix) {
		return false
	}
	switch opts.ResourceVersionMatch {
	case metav1.ResourceVersionMatchExact:
		return false
	case "":
		// Legacy: a paged list with a resourceVersion reads at it.
		if opts.Predicate.Limit > 0 && opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
			return false
		}
	case metav1.ResourceVersionMatchNotOlderThan:
	default:
		return false
	}
	return true
}

// GetList implements store.Interface. A page from the cache carries a
// continue token at the cache's revision; etcd serves the next pages at
// that same revision, so a paged list stays one snapshot.
func (c *Cacher) GetList(ctx context.Context, key string, opts store.ListOptions, listObj runtime.Object) error {
	if !c.cacheable(key, opts) || !c.fresh(ctx, opts.ResourceVersion) {
		return c.Store.GetList(ctx, key, opts, listObj)
	}
	if !strings.HasSuffix(key, "/") {
		key += "/"
	}
	pred := opts.Predicate
	c.listHits.Add(1)
	if c.metrics != nil {
		gr := c.GroupResource()
		c.metrics.lists.WithLabelValues("/"+gr.String(), "").Inc()
	}
	c.mu.RLock()
	rev := c.rev
	// The prefix ends in "/": its keys sort before the same path with "0".
	lo, hi := key, key[:len(key)-1]+"0"
	var matched []runtime.Object
	var lastKey string
	hasMore, total := false, 0
	visit := func(k string) bool {
		if pred.Limit > 0 && int64(len(matched)) == pred.Limit {
			return false
		}
		obj := c.objects[k]
		if ok, err := pred.Matches(obj); err != nil || !ok {
			return true
		}
		matched = append(matched, obj)
		lastKey = k
		return true
	}
	if keys, indexed := c.candidates(pred, lo, hi); indexed {
		c.indexHits.Add(1)
		for _, k := range keys {
			if !visit(k) {
				break
			}
		}
	} else {
		c.keys.each(lo, hi, visit)
	}
	// As etcd pages: once the page is full, any key after it in the range
	// (matching or not) means there is more, and the token resumes after
	// the last item.
	if pred.Limit > 0 && int64(len(matched)) == pred.Limit {
		hasMore = c.keys.after(lastKey, hi)
	}
	if hasMore && pred.Empty() {
		total = c.keys.count(lo, hi)
	}
	c.mu.RUnlock()

	items := make([]runtime.Object, len(matched))
	for i, o := range matched {
		items[i] = o.DeepCopyObject()
	}
	lm, err := meta.ListAccessor(listObj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	var next string
	var remaining *int64
	if hasMore {
		if next, err = store.EncodeContinue(lastKey+"\x00", key, rev); err != nil {
			return apierrors.NewInternalError(err)
		}
		if pred.Empty() {
			n := int64(total) - pred.Limit
			remaining = &n
		}
	}
	if err := meta.SetList(listObj, items); err != nil {
		return apierrors.NewInternalError(err)
	}
	lm.SetResourceVersion(fmt.Sprint(rev))
	lm.SetContinue(next)
	lm.SetRemainingItemCount(remaining)
	return nil
}

func copyInto(obj, out runtime.Object) error {
	src := reflect.ValueOf(obj.DeepCopyObject())
	dst := reflect.ValueOf(out)
	if dst.Kind() != reflect.Pointer || src.Type() != dst.Type() {
		return apierrors.NewInternalError(fmt.Errorf("watch cache: cannot copy %T into %T", obj, out))
	}
	dst.Elem().Set(src.Elem())
	return nil
}

func revOf(obj runtime.Object) (int64, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return 0, err
	}
	return parseRev(m.GetResourceVersion())
}

func parseRev(rv string) (int64, error) {
	var n int64
	if _, err := fmt.Sscan(rv, &n); err != nil || n < 0 {
		return 0, fmt.Errorf("watch cache: bad resourceVersion %q", rv)
	}
	return n, nil
}

// cleanUnder reports whether key is a plain path below prefix; anything
// else goes to the store, which refuses it with kube's error.
func cleanUnder(key, prefix string) bool {
	if !strings.HasPrefix(key, prefix) {
		return false
	}
	for _, seg := range strings.Split(key[len(prefix):], "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

func revString(rev int64) string { return fmt.Sprint(rev) }

package cacher

import (
	"context"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kpipe/kpipe/internal/storage/store"
)

// cacheWatcher is one watch served from the cache. The cache queues events
// for it without ever blocking: the queue grows only while the watcher is
// behind, and a watcher more than watcherQueueMax events behind is cut off
// (its result channel closes, the client re-watches from its last
// revision), so a reader that stalls never holds up the others or grows
// memory without bound.
type cacheWatcher struct {
	key       string
	recursive bool
	pred      store.Predicate
	bookmarks bool
	newFunc   func() runtime.Object
	slot      slot // where the cache dispatches to it (index.go)
	encodable bool // it only encodes: objects may be cachedObjects

	mu     sync.Mutex
	queue  []event       // pushed, not yet served
	wake   chan struct{} // signalled when queue gets events
	result chan watch.Event
	done   chan struct{}
	once   sync.Once
}

// push hands e to the watcher; c.mu is held.
func (w *cacheWatcher) push(e event, c *Cacher) {
	if e.typ == watch.Bookmark && !w.bookmarks {
		return
	}
	if e.typ != watch.Bookmark && !w.selects(e.key) {
		return
	}
	w.mu.Lock()
	full := len(w.queue) >= watcherQueueMax
	if !full {
		w.queue = append(w.queue, e)
	}
	w.mu.Unlock()
	if full {
		c.unregister(w)
		w.terminate()
		return
	}
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *cacheWatcher) selects(key string) bool {
	if w.recursive {
		return strings.HasPrefix(key, w.key)
	}
	return key == w.key
}

func (w *cacheWatcher) terminate() {
	w.once.Do(func() { close(w.done) })
}

// Stop implements watch.Interface.
func (w *cacheWatcher) Stop() { w.terminate() }

// ResultChan implements watch.Interface.
func (w *cacheWatcher) ResultChan() <-chan watch.Event { return w.result }

// Watch implements store.Interface, with the store's semantics. Watches
// from "" or "0", or with sendInitialEvents, start with the current
// objects as ADDED events (and, with sendInitialEvents and bookmarks, a
// bookmark marking their end); from a revision in the window, with the
// window's events after it; sendInitialEvents=false from "" or "0", with
// what comes next. A revision older than the window, or a cache still
// filling, go to etcd.
func (c *Cacher) Watch(ctx context.Context, key string, opts store.ListOptions) (watch.Interface, error) {
	if !cleanUnder(key, c.prefix) {
		return c.Store.Watch(ctx, key, opts)
	}
	rv := opts.ResourceVersion
	sendInitial := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	initial := sendInitial || (opts.SendInitialEvents == nil && (rv == "" || rv == "0"))
	endBookmark := sendInitial && opts.ProgressNotify
	freshAt := rv
	if opts.SendInitialEvents != nil && !sendInitial && rv == "0" {
		// The store starts such a watch at etcd's current revision.
		freshAt = ""
	}
	if !c.fresh(ctx, freshAt) {
		return c.Store.Watch(ctx, key, opts)
	}
	if opts.Recursive && !strings.HasSuffix(key, "/") {
		key += "/"
	}
	var from int64
	if rv != "" && rv != "0" {
		var err error
		if from, err = parseRev(rv); err != nil {
			return c.Store.Watch(ctx, key, opts)
		}
	}
	w := &cacheWatcher{
		key: key, recursive: opts.Recursive, pred: opts.Predicate, bookmarks: opts.ProgressNotify, encodable: opts.Encodable,
		newFunc: c.New,
		wake:    make(chan struct{}, 1),
		// Buffered, so the HTTP watch sees events waiting and writes them
		// before it flushes, instead of one flush per event.
		result: make(chan watch.Event, resultBuffer),
		done:   make(chan struct{}),
	}
	c.mu.Lock()
	if !c.ready || (!initial && from != 0 && from < c.oldest) {
		c.mu.Unlock()
		return c.Store.Watch(ctx, key, opts)
	}
	var first []event
	switch {
	case initial:
		// Only the watched range (the one key of a watch on a name),
		// and through an index when the selector allows.
		lo, hi := key, key+"\x00"
		if w.recursive {
			hi = key[:len(key)-1] + "0"
		}
		keys, ok := c.candidates(w.pred, lo, hi)
		if !ok {
			keys = c.keys.slice(lo, hi)
		}
		for _, k := range keys {
			if w.selects(k) {
				first = append(first, event{typ: watch.Added, key: k, obj: c.objects[k], rev: c.rev})
			}
		}
		if endBookmark {
			first = append(first, event{typ: watch.Bookmark, rev: c.rev, initialEnd: true})
		}
	case from == 0:
		// sendInitialEvents=false: only what comes next.
	default:
		for _, e := range c.events {
			if e.rev > from && w.selects(e.key) {
				first = append(first, e)
			}
		}
	}
	c.register(w)
	c.mu.Unlock()

	go func() {
		<-w.done
		c.mu.Lock()
		c.unregister(w)
		c.mu.Unlock()
	}()
	go w.serve(ctx, first)
	return w, nil
}

// serve sends the initial events, then the pushed ones, each through the
// selectors with kube's transitions, until the watch stops.
func (w *cacheWatcher) serve(ctx context.Context, initial []event) {
	defer close(w.result)
	send := func(e event) bool {
		out, ok := w.convert(e)
		if !ok {
			return true
		}
		// Without a select while the channel has room: this runs for
		// every event and watcher.
		select {
		case w.result <- out:
			return true
		default:
		}
		select {
		case w.result <- out:
			return true
		case <-w.done:
			return false
		case <-ctx.Done():
			w.terminate()
			return false
		}
	}
	for _, e := range initial {
		if !send(e) {
			return
		}
	}
	var batch []event
	for {
		w.mu.Lock()
		// Take what is queued; the emptied slice is reused for the next.
		batch, w.queue = w.queue, batch[:0]
		w.mu.Unlock()
		for i, e := range batch {
			if !send(e) {
				return
			}
			batch[i] = event{} // let go of the objects
		}
		if len(batch) > 0 {
			continue
		}
		select {
		case <-w.wake:
		case <-w.done:
			return
		case <-ctx.Done():
			w.terminate()
			return
		}
	}
}

// convert applies the selectors as kube's cacheWatcher does: an object
// that starts matching is ADDED, one that stops matching is DELETED with
// its previous state at the event's revision. Objects are copies: the
// encoder may touch them, and other watchers share the cache's.
func (w *cacheWatcher) convert(e event) (watch.Event, bool) {
	if e.typ == watch.Bookmark {
		obj := w.newFunc()
		if m, err := meta.Accessor(obj); err == nil {
			m.SetResourceVersion(revString(e.rev))
			if e.initialEnd {
				m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
			}
		}
		return watch.Event{Type: watch.Bookmark, Object: obj}, true
	}
	var objAttrs, prevAttrs *attrs
	if e.enc != nil {
		objAttrs, prevAttrs = &e.enc.objAttrs, &e.enc.prevAttrs
	}
	cur := w.matches(e.obj, objAttrs)
	if e.typ == watch.Deleted {
		if !cur {
			return watch.Event{}, false
		}
		return watch.Event{Type: watch.Deleted, Object: w.object(e)}, true
	}
	old := e.prev != nil && w.matches(e.prev, prevAttrs)
	switch {
	case cur && (e.prev == nil || e.typ == watch.Added):
		return watch.Event{Type: watch.Added, Object: w.object(e)}, true
	case cur && old:
		return watch.Event{Type: watch.Modified, Object: w.object(e)}, true
	case cur:
		return watch.Event{Type: watch.Added, Object: w.object(e)}, true
	case old:
		prev := e.prev.DeepCopyObject()
		if m, err := meta.Accessor(prev); err == nil {
			m.SetResourceVersion(revString(e.rev))
		}
		return watch.Event{Type: watch.Deleted, Object: prev}, true
	}
	return watch.Event{}, false
}

// object is e's object for this watcher: the one wrapper, with the
// encodings, that the event's watchers share when they only encode, a
// copy otherwise.
func (w *cacheWatcher) object(e event) runtime.Object {
	if w.encodable && e.enc != nil {
		return e.enc.object(e.obj)
	}
	return e.obj.DeepCopyObject()
}

// matches reports whether obj passes the watcher's selectors; a, when
// set and the predicate names its GetAttrs, holds obj's attributes
// shared with the event's other watchers.
func (w *cacheWatcher) matches(obj runtime.Object, a *attrs) bool {
	if a == nil || w.pred.AttrsKey == "" || w.pred.Empty() {
		ok, err := w.pred.Matches(obj)
		return err == nil && ok
	}
	ls, fs, err := a.get(w.pred, obj)
	return err == nil && w.pred.MatchesAttrs(ls, fs)
}

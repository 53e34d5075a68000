// Package informer mirrors one resource's objects in memory: a list, then
// a watch from the list's revision, listed again when the watch breaks or
// its revision is compacted. Admission plugins read their configuration
// objects (webhook configurations, policies, bindings) from one, so a
// request never reads etcd for them; through the watch cache one etcd
// watch feeds them all.
package informer

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kpipe/kpipe/internal/storage/store"
)

// Source is where an Informer reads: a store, the collection's key, and
// a constructor for the list type.
type Source struct {
	Store   store.Interface
	Key     string
	NewList func() runtime.Object
}

// Informer is one resource's objects, kept current.
type Informer struct {
	src Source
	log *zap.Logger

	mu      sync.RWMutex
	objects map[string]runtime.Object // namespace/name
	sorted  []runtime.Object          // built lazily, nil when stale

	generation atomic.Uint64
	synced     chan struct{}
	syncOnce   sync.Once
}

// New returns an Informer over src; Run feeds it.
func New(src Source, log *zap.Logger) *Informer {
	if log == nil {
		log = zap.NewNop()
	}
	return &Informer{src: src, log: log, objects: map[string]runtime.Object{}, synced: make(chan struct{})}
}

// Synced is closed once the first list is in.
func (i *Informer) Synced() <-chan struct{} { return i.synced }

// Generation grows with every change, so a reader can cache what it
// derives from the objects (compiled expressions, HTTP clients) and
// rebuild only when it moved.
func (i *Informer) Generation() uint64 { return i.generation.Load() }

// List returns the objects sorted by namespace and name. The slice and
// the objects are shared: callers must not change them.
func (i *Informer) List() []runtime.Object {
	i.mu.RLock()
	s := i.sorted
	i.mu.RUnlock()
	if s != nil {
		return s
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.sorted == nil {
		keys := make([]string, 0, len(i.objects))
		for k := range i.objects {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		s := make([]runtime.Object, 0, len(keys))
		for _, k := range keys {
			s = append(s, i.objects[k])
		}
		i.sorted = s
	}
	return i.sorted
}

// Get returns one object, shared as List's are.
func (i *Informer) Get(namespace, name string) (runtime.Object, bool) {
	i.mu.RLock()
	defer i.mu.RUnlock()
	o, ok := i.objects[namespace+"/"+name]
	return o, ok
}

// Run lists and watches until ctx ends, backing off on errors.
func (i *Informer) Run(ctx context.Context) {
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		err := i.listAndWatch(ctx)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			backoff = 50 * time.Millisecond
			continue
		}
		i.log.Warn("informer: list and watch", zap.String("key", i.src.Key), zap.Error(err))
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// listAndWatch returns nil when the watch ended in a way a new list
// fixes (closed, or 410), and the error otherwise.
func (i *Informer) listAndWatch(ctx context.Context) error {
	list := i.src.NewList()
	if err := i.src.Store.GetList(ctx, i.src.Key, store.ListOptions{Recursive: true}, list); err != nil {
		return err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	la, err := meta.ListAccessor(list)
	if err != nil {
		return err
	}
	i.replace(items)
	i.syncOnce.Do(func() { close(i.synced) })
	w, err := i.src.Store.Watch(ctx, i.src.Key, store.ListOptions{ResourceVersion: la.GetResourceVersion(), Recursive: true})
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				i.put(ev.Object, false)
			case watch.Deleted:
				i.put(ev.Object, true)
			case watch.Error:
				err := apierrors.FromObject(ev.Object)
				if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
					return nil
				}
				return err
			}
		}
	}
}

func key(obj runtime.Object) (string, bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", false
	}
	return m.GetNamespace() + "/" + m.GetName(), true
}

func (i *Informer) replace(items []runtime.Object) {
	objects := make(map[string]runtime.Object, len(items))
	for _, o := range items {
		if k, ok := key(o); ok {
			objects[k] = o
		}
	}
	i.mu.Lock()
	i.objects, i.sorted = objects, nil
	i.mu.Unlock()
	i.generation.Add(1)
}

func (i *Informer) put(obj runtime.Object, deleted bool) {
	k, ok := key(obj)
	if !ok {
		return
	}
	i.mu.Lock()
	if deleted {
		delete(i.objects, k)
	} else {
		i.objects[k] = obj
	}
	i.sorted = nil
	i.mu.Unlock()
	i.generation.Add(1)
}

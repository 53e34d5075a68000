package cacher

import (
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kpipe/kpipe/internal/storage/store"
)

// Option configures a Cacher.
type Option func(*Cacher)

// WithIndex indexes the cache by a field (kube's pods by spec.nodeName):
// value gives an object's value of it. A list or watch whose field
// selector requires one exact value reads only the objects, and gets only
// the events, with that value; the selectors still decide.
func WithIndex(field string, value func(runtime.Object) string) Option {
	return func(c *Cacher) {
		c.indexes = append(c.indexes, &fieldIndex{field: field, value: value})
	}
}

type fieldIndex struct {
	field    string
	value    func(runtime.Object) string
	keys     map[string]map[string]struct{}        // value -> keys
	watchers map[string]map[*cacheWatcher]struct{} // value -> watchers selecting it
}

type watcherSet = map[*cacheWatcher]struct{}

// slot is where a watcher is registered for dispatch: under an index
// value, under a namespace, or with all the others.
type slot struct {
	idx   *fieldIndex
	ns    bool
	value string
}

// resetIndexes empties the indexes and the dispatch sets; c.mu is held.
func (c *Cacher) resetIndexes() {
	for _, idx := range c.indexes {
		idx.keys = map[string]map[string]struct{}{}
		idx.watchers = map[string]watcherSet{}
	}
	c.nsWatchers = map[string]watcherSet{}
	c.allWatchers = watcherSet{}
}

// index moves key from old's index values to cur's (either may be nil);
// c.mu is held.
func (c *Cacher) index(key string, old, cur runtime.Object) {
	for _, idx := range c.indexes {
		var was, is string
		if old != nil {
			was = idx.value(old)
		}
		if cur != nil {
			is = idx.value(cur)
		}
		if old != nil && (cur == nil || was != is) {
			if set := idx.keys[was]; set != nil {
				delete(set, key)
				if len(set) == 0 {
					delete(idx.keys, was)
				}
			}
		}
		if cur != nil && (old == nil || was != is) {
			set := idx.keys[is]
			if set == nil {
				set = map[string]struct{}{}
				idx.keys[is] = set
			}
			set[key] = struct{}{}
		}
	}
}

// namespaceOf is the namespace part of a key under the prefix: "" for a
// cluster-scoped object or the whole collection.
func (c *Cacher) namespaceOf(key string) (string, bool) {
	rest := strings.TrimPrefix(key, c.prefix)
	i := strings.IndexByte(rest, '/')
	if i < 0 {
		return "", false
	}
	return rest[:i], true
}

// register adds w to the dispatch sets; c.mu is held.
func (c *Cacher) register(w *cacheWatcher) {
	c.watchers[w] = struct{}{}
	if f := w.pred.Field; f != nil {
		for _, idx := range c.indexes {
			if v, ok := f.RequiresExactMatch(idx.field); ok {
				w.slot = slot{idx: idx, value: v}
				set := idx.watchers[v]
				if set == nil {
					set = watcherSet{}
					idx.watchers[v] = set
				}
				set[w] = struct{}{}
				return
			}
		}
	}
	if ns, ok := c.namespaceOf(w.key); ok && ns != "" {
		w.slot = slot{ns: true, value: ns}
		set := c.nsWatchers[ns]
		if set == nil {
			set = watcherSet{}
			c.nsWatchers[ns] = set
		}
		set[w] = struct{}{}
		return
	}
	w.slot = slot{}
	c.allWatchers[w] = struct{}{}
}

// unregister removes w from the dispatch sets; c.mu is held.
func (c *Cacher) unregister(w *cacheWatcher) {
	delete(c.watchers, w)
	var sets map[string]watcherSet
	switch {
	case w.slot.idx != nil:
		sets = w.slot.idx.watchers
	case w.slot.ns:
		sets = c.nsWatchers
	default:
		delete(c.allWatchers, w)
		return
	}
	if set := sets[w.slot.value]; set != nil {
		delete(set, w)
		if len(set) == 0 {
			delete(sets, w.slot.value)
		}
	}
}

// dispatch pushes e to the watchers that may select it: those of its
// namespace, those of its object's (and previous object's) index values,
// and the rest. c.mu is held.
func (c *Cacher) dispatch(e event) {
	if e.typ == watch.Bookmark {
		for w := range c.watchers {
			w.push(e, c)
		}
		return
	}
	for w := range c.allWatchers {
		w.push(e, c)
	}
	if ns, ok := c.namespaceOf(e.key); ok && ns != "" {
		for w := range c.nsWatchers[ns] {
			w.push(e, c)
		}
	}
	for _, idx := range c.indexes {
		if len(idx.watchers) == 0 {
			continue
		}
		v := idx.value(e.obj)
		for w := range idx.watchers[v] {
			w.push(e, c)
		}
		if e.prev != nil {
			if pv := idx.value(e.prev); pv != v {
				for w := range idx.watchers[pv] {
					w.push(e, c)
				}
			}
		}
	}
}

// candidates are the keys in [lo, hi) a list with pred must look at, in
// order: from an index when pred's field selector requires an exact
// indexed value, from a namespace's range when it requires one namespace;
// nil means all of them. c.mu is held, and the keys are read under it.
func (c *Cacher) candidates(pred store.Predicate, lo, hi string) (keys []string, indexed bool) {
	if pred.Field == nil {
		return nil, false
	}
	for _, idx := range c.indexes {
		v, ok := pred.Field.RequiresExactMatch(idx.field)
		if !ok {
			continue
		}
		set := idx.keys[v]
		keys = make([]string, 0, len(set))
		for k := range set {
			if k >= lo && k < hi {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		return keys, true
	}
	if ns, ok := pred.Field.RequiresExactMatch("metadata.namespace"); ok && ns != "" {
		from, to := max(lo, c.prefix+ns+"/"), min(hi, c.prefix+ns+"0")
		return c.keys.slice(from, to), true
	}
	return nil, false
}

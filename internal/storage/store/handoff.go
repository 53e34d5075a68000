package store

import (
	"bytes"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
)

// handoff passes the objects Create and GuaranteedUpdate write to the
// store's watchers, so that the watch event of a write needs no decode of
// the value: the
// watcher that sees the event first takes the object, any other decodes
// as before. An object is handed over only when a copy is what the decode
// gives (see copyWritten) and is matched on its key and the exact bytes
// written: the same bytes decode to the same object, so a match cannot be
// wrong even if it is not the write that handed it over. The watch event
// may come before the write's answer, so objects are handed over before
// the write. Entries nobody takes (a key no watch covers, a failed write) go
// first in first out past handoffMax entries or handoffMaxBytes of values.
type handoff struct {
	watchers atomic.Int32 // running watches: none, nothing is handed over

	mu      sync.Mutex
	entries map[string]*handed
	order   []*handed // oldest first
	bytes   int       // values of the entries
}

type handed struct {
	key   string
	value []byte // as written, transformed
	obj   runtime.Object
}

const (
	handoffMax      = 512
	handoffMaxBytes = 8 << 20
)

// active reports whether a watch may take what is handed over.
func (h *handoff) active() bool { return h.watchers.Load() > 0 }

// put hands obj, whose stored form under key is value, to the watchers.
// The caller gives obj up.
func (h *handoff) put(key string, value []byte, obj runtime.Object) *handed {
	e := &handed{key: key, value: value, obj: obj}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.entries == nil {
		h.entries = map[string]*handed{}
	}
	if old := h.entries[key]; old != nil {
		h.bytes -= len(old.value)
	}
	h.entries[key] = e
	h.bytes += len(value)
	h.order = append(h.order, e)
	for len(h.order) > handoffMax || h.bytes > handoffMaxBytes {
		first := h.order[0]
		h.order[0] = nil
		h.order = h.order[1:]
		h.removeLocked(first)
	}
	return e
}

// drop withdraws e (its write failed).
func (h *handoff) drop(e *handed) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.removeLocked(e)
}

func (h *handoff) removeLocked(e *handed) {
	if h.entries[e.key] == e {
		delete(h.entries, e.key)
		h.bytes -= len(e.value)
	}
}

// take returns the object handed over for key with exactly value as its
// stored form, and removes it; nil if there is none.
func (h *handoff) take(key, value []byte) runtime.Object {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.entries[string(key)]
	if e == nil || !bytes.Equal(e.value, value) {
		return nil
	}
	h.removeLocked(e)
	return e.obj
}

package cacher

import (
	"bytes"
	"io"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kpipe/kpipe/internal/storage/store"
)

// encodings are one event's object's serializations, one per encoder,
// shared by every watcher the event goes to: 200 watchers of a resource
// cost one encoding of each event, not 200 copies and 200 encodings.
// Every watcher looks its encoding up, so the lookup takes no lock: the
// list is replaced, never changed, when an encoder is added.
type encodings struct {
	mu   sync.Mutex // serializes additions
	list atomic.Pointer[[]*encoding]
	// The event's object's and previous object's attributes, computed
	// once for the watchers that share a store.Predicate.AttrsKey.
	objAttrs, prevAttrs attrs
	// shared is the event's object as every encodable watcher gets it.
	shared atomic.Pointer[cachedObject]
	// encoded, when set, is told the size of each new encoding.
	encoded func(n int)
}

// object returns the one cachedObject of obj, the event's object, that
// the event's encodable watchers share, as kube's watchers share one
// cachingObject per event.
func (e *encodings) object(obj runtime.Object) *cachedObject {
	if o := e.shared.Load(); o != nil {
		return o
	}
	e.shared.CompareAndSwap(nil, &cachedObject{obj: obj, enc: e})
	return e.shared.Load()
}

// attrs are an object's labels and fields, as one GetAttrs computes them.
type attrs struct {
	done atomic.Bool
	mu   sync.Mutex
	key  string
	ls   labels.Set
	fs   fields.Set
	err  error
}

// get returns obj's attributes from pred's GetAttrs: the first caller's,
// computed once, when pred's AttrsKey is the first caller's.
func (a *attrs) get(pred store.Predicate, obj runtime.Object) (labels.Set, fields.Set, error) {
	getAttrs := pred.GetAttrs
	if getAttrs == nil {
		getAttrs = store.DefaultAttrs
	}
	if !a.done.Load() {
		a.mu.Lock()
		if !a.done.Load() {
			a.key = pred.AttrsKey
			a.ls, a.fs, a.err = getAttrs(obj)
			a.done.Store(true)
		}
		a.mu.Unlock()
	}
	if a.key != pred.AttrsKey {
		return getAttrs(obj)
	}
	return a.ls, a.fs, a.err
}

type encoding struct {
	id   runtime.Identifier
	once sync.Once
	raw  []byte
	err  error
}

func (e *encodings) get(id runtime.Identifier) *encoding {
	if r := e.find(id); r != nil {
		return r
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if r := e.find(id); r != nil {
		return r
	}
	var list []*encoding
	if l := e.list.Load(); l != nil {
		list = append(list, *l...)
	}
	r := &encoding{id: id}
	list = append(list, r)
	e.list.Store(&list)
	return r
}

// find returns id's encoding, nil if it has none yet. An event has few:
// one per encoder and event type in use.
func (e *encodings) find(id runtime.Identifier) *encoding {
	l := e.list.Load()
	if l == nil {
		return nil
	}
	for _, r := range *l {
		if r.id == id {
			return r
		}
	}
	return nil
}

// cachedObject is an event's object for a watcher that only encodes it
// (store.ListOptions.Encodable), or an object a get answers with
// (GetEncodable): apimachinery's encoders see a
// runtime.CacheableObject and encode it once per event and encoder. The
// wrapped object is the cache's own and is never handed out: encoders and
// GetObject get copies.
type cachedObject struct {
	obj   runtime.Object
	enc   *encodings
	gvkMu sync.Mutex // watchers share the wrapper
	gvk   schema.GroupVersionKind
}

var (
	_ runtime.CacheableObject = (*cachedObject)(nil)
	_ runtime.Object          = (*cachedObject)(nil)
)

// CacheEncode implements runtime.CacheableObject.
func (o *cachedObject) CacheEncode(id runtime.Identifier, encode func(runtime.Object, io.Writer) error, w io.Writer) error {
	r := o.enc.get(id)
	r.once.Do(func() {
		var buf bytes.Buffer
		r.err = encode(o.obj.DeepCopyObject(), &buf)
		r.raw = buf.Bytes()
		if o.enc.encoded != nil {
			o.enc.encoded(len(r.raw))
		}
	})
	if r.err != nil {
		return r.err
	}
	_, err := w.Write(r.raw)
	return err
}

// GetObject implements runtime.CacheableObject: a copy the caller owns.
func (o *cachedObject) GetObject() runtime.Object { return o.obj.DeepCopyObject() }

// GetObjectKind implements runtime.Object; the wrapper keeps its own kind,
// so nothing reaches the shared object through it.
func (o *cachedObject) GetObjectKind() schema.ObjectKind { return o }

// DeepCopyObject implements runtime.Object. The wrapped object is never
// changed, so copies share it and its encodings.
func (o *cachedObject) DeepCopyObject() runtime.Object {
	return &cachedObject{obj: o.obj, enc: o.enc, gvk: o.GroupVersionKind()}
}

// SetGroupVersionKind implements schema.ObjectKind.
func (o *cachedObject) SetGroupVersionKind(gvk schema.GroupVersionKind) {
	o.gvkMu.Lock()
	defer o.gvkMu.Unlock()
	o.gvk = gvk
}

// GroupVersionKind implements schema.ObjectKind.
func (o *cachedObject) GroupVersionKind() schema.GroupVersionKind {
	o.gvkMu.Lock()
	defer o.gvkMu.Unlock()
	return o.gvk
}

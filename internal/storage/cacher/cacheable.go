package cacher

import (
	"bytes"
	"io"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// encodings are one event's object's serializations, one per encoder,
// shared by every watcher the event goes to: 200 watchers of a resource
// cost one encoding of each event, not 200 copies and 200 encodings.
type encodings struct {
	mu sync.Mutex
	m  map[runtime.Identifier]*encoding
}

type encoding struct {
	once sync.Once
	raw  []byte
	err  error
}

func (e *encodings) get(id runtime.Identifier) *encoding {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil {
		e.m = map[runtime.Identifier]*encoding{}
	}
	r := e.m[id]
	if r == nil {
		r = &encoding{}
		e.m[id] = r
	}
	return r
}

// cachedObject is an event's object for a watcher that only encodes it
// (store.ListOptions.Encodable): apimachinery's encoders see a
// runtime.CacheableObject and encode it once per event and encoder. The
// wrapped object is the cache's own and is never handed out: encoders and
// GetObject get copies.
type cachedObject struct {
	obj runtime.Object
	enc *encodings
	gvk schema.GroupVersionKind
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
	c := *o
	return &c
}

// SetGroupVersionKind implements schema.ObjectKind.
func (o *cachedObject) SetGroupVersionKind(gvk schema.GroupVersionKind) { o.gvk = gvk }

// GroupVersionKind implements schema.ObjectKind.
func (o *cachedObject) GroupVersionKind() schema.GroupVersionKind { return o.gvk }

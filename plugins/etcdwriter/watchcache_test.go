package etcdwriter

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// sharedObj is a runtime.CacheableObject as the watch cache hands one
// event's object to all its watchers: it keeps one encoding per
// identifier and counts the encodings it made.
type sharedObj struct {
	obj runtime.Object
	mu  sync.Mutex
	raw map[runtime.Identifier][]byte
	ids []runtime.Identifier
}

func (o *sharedObj) CacheEncode(id runtime.Identifier, encode func(runtime.Object, io.Writer) error, w io.Writer) error {
	o.mu.Lock()
	raw, ok := o.raw[id]
	if !ok {
		var buf bytes.Buffer
		if err := encode(o.obj.DeepCopyObject(), &buf); err != nil {
			o.mu.Unlock()
			return err
		}
		raw = buf.Bytes()
		o.raw[id] = raw
		o.ids = append(o.ids, id)
	}
	o.mu.Unlock()
	_, err := w.Write(raw)
	return err
}

func (o *sharedObj) GetObject() runtime.Object                   { return o.obj.DeepCopyObject() }
func (o *sharedObj) GetObjectKind() schema.ObjectKind            { return schema.EmptyObjectKind }
func (o *sharedObj) DeepCopyObject() runtime.Object              { return o }
func (o *sharedObj) SetGroupVersionKind(schema.GroupVersionKind) {}

// Watches of a shared object write what they write for a plain one, in
// every form, while the object keeps one whole event per event type and
// encoders: the second JSON watch re-encodes nothing.
func TestWatchStreamSharedEncodings(t *testing.T) {
	const url = "/api/v1/namespaces/ns/configmaps?watch=true&resourceVersion=1"
	shared := &sharedObj{obj: configMap("a", "2"), raw: map[runtime.Identifier][]byte{}}
	for _, accept := range []string{"", "application/vnd.kubernetes.protobuf", "", "application/json;as=Table;v=v1;g=meta.k8s.io"} {
		want := stream(t, url, accept,
			watch.Event{Type: watch.Added, Object: configMap("a", "2")},
			watch.Event{Type: watch.Modified, Object: configMap("a", "2")},
		).Body.String()
		got := stream(t, url, accept,
			watch.Event{Type: watch.Added, Object: shared},
			watch.Event{Type: watch.Modified, Object: shared},
		).Body.String()
		if got != want {
			t.Errorf("Accept %q: shared object's stream\n%q\nwant\n%q", accept, got, want)
		}
	}
	// JSON and protobuf, ADDED and MODIFIED; Tables are made per watch.
	if len(shared.ids) != 4 {
		t.Errorf("%d encodings, want 4: %q", len(shared.ids), shared.ids)
	}
	for _, id := range shared.ids {
		if !strings.HasPrefix(string(id), "watchEvent:") {
			t.Errorf("encoding %q is not a whole event's", id)
		}
	}
}

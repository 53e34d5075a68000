package etcdwriter

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/internal/storage/store"
)

// fakeStore hands out one fake watcher and records what it was asked.
type fakeStore struct {
	store.Interface
	w    *watch.FakeWatcher
	key  string
	opts store.ListOptions
}

func (f *fakeStore) Watch(_ context.Context, key string, opts store.ListOptions) (watch.Interface, error) {
	f.key, f.opts = key, opts
	return f.w, nil
}

func newWatchWriter() (*Writer, *fakeStore, chan struct{}) {
	reg := api.NewRegistry(api.Resources(api.Options{}))
	fs := &fakeStore{w: watch.NewFakeWithChanSize(10, false)}
	for _, res := range reg.All() {
		res.Store = fs
	}
	stopping := make(chan struct{})
	return &Writer{resources: reg, prefix: "/registry", stopping: stopping}, fs, stopping
}

// serveWatch runs the stage on one request as the engine would.
func serveWatch(ctx context.Context, wr *Writer, url, accept string) *httptest.ResponseRecorder {
	req := httptest.NewRequestWithContext(ctx, "GET", url, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	info, _ := request.NewResolver().Resolve(req)
	req = req.WithContext(request.WithScope(req.Context(), &request.Scope{Info: info}))
	rec := httptest.NewRecorder()
	wr.Middleware(http.NotFoundHandler()).ServeHTTP(rec, req)
	return rec
}

func TestWatchOptions(t *testing.T) {
	tests := []struct {
		name, url, accept string
		key               string
		recursive         bool
		field, rv         string
		initial           *bool
		bookmarks         bool
		code              int
		msg               string
	}{
		{name: "from a revision", url: "/api/v1/namespaces/ns/configmaps?watch=true&resourceVersion=5",
			key: "/registry/configmaps/ns/", recursive: true, rv: "5"},
		{name: "no revision gets kube's WatchList defaults", url: "/api/v1/namespaces/ns/configmaps?watch=true",
			key: "/registry/configmaps/ns/", recursive: true, initial: new(true)},
		{name: "all namespaces", url: "/api/v1/configmaps?watch=true&resourceVersion=0&allowWatchBookmarks=true",
			key: "/registry/configmaps/", recursive: true, rv: "0", initial: new(true), bookmarks: true},
		{name: "one object by field selector", url: "/api/v1/namespaces/ns/configmaps?watch=true&resourceVersion=5&fieldSelector=metadata.name%3Dx",
			key: "/registry/configmaps/ns/x", field: "metadata.name=x", rv: "5"},
		{name: "one object across namespaces", url: "/api/v1/configmaps?watch=true&resourceVersion=5&fieldSelector=metadata.name%3Dx",
			key: "/registry/configmaps/", recursive: true, field: "metadata.name=x", rv: "5"},
		{name: "legacy path", url: "/api/v1/watch/namespaces/ns/configmaps/x",
			key: "/registry/configmaps/ns/x", field: "metadata.name=x"},
		{name: "cluster-scoped by name", url: "/api/v1/watch/namespaces/ns?resourceVersion=3",
			key: "/registry/namespaces/ns", field: "metadata.name=ns", rv: "3"},
		{name: "sendInitialEvents", url: "/api/v1/namespaces/ns/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
			key: "/registry/configmaps/ns/", recursive: true, initial: new(true), bookmarks: true},

		{name: "sendInitialEvents without NotOlderThan", url: "/api/v1/namespaces/ns/configmaps?watch=true&sendInitialEvents=true",
			code: 422, msg: `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan`},
		{name: "resourceVersionMatch without sendInitialEvents", url: "/api/v1/namespaces/ns/configmaps?watch=true&resourceVersion=1&resourceVersionMatch=Exact",
			code: 422, msg: `ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]`},
		{name: "name and selector disagree", url: "/api/v1/watch/namespaces/ns/configmaps/x?fieldSelector=metadata.name%3Dy",
			code: 400, msg: "fieldSelector metadata.name doesn't match requested name"},
		{name: "bad label selector", url: "/api/v1/namespaces/ns/configmaps?watch=true&labelSelector=a+in+(",
			code: 400},
		{name: "unknown field", url: "/api/v1/namespaces/ns/configmaps?watch=true&fieldSelector=spec.x%3D1",
			code: 400, msg: "field label not supported: spec.x"},
		{name: "YAML has no stream form", url: "/api/v1/namespaces/ns/configmaps?watch=true", accept: "application/yaml",
			code: 406, msg: notAcceptableMsg},
		{name: "bad includeObject", url: "/api/v1/namespaces/ns/configmaps?watch=true&includeObject=All", accept: "application/json;as=Table;v=v1;g=meta.k8s.io",
			code: 400, msg: `Unable to convert to Table as requested: includeObject: Invalid value: "All": must be 'Metadata', 'Object', 'None', or empty`},
		{name: "subresource", url: "/api/v1/watch/namespaces/ns/pods/x/status", code: 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wr, fs, stopping := newWatchWriter()
			close(stopping) // answer and end at once
			rec := serveWatch(context.Background(), wr, tc.url, tc.accept)
			if tc.code != 0 {
				var st metav1.Status
				_ = json.Unmarshal(rec.Body.Bytes(), &st)
				if rec.Code != tc.code || (tc.msg != "" && st.Message != tc.msg) {
					t.Fatalf("got %d %q, want %d %q", rec.Code, st.Message, tc.code, tc.msg)
				}
				if fs.key != "" {
					t.Errorf("a refused watch reached the store")
				}
				return
			}
			if rec.Code != 200 {
				t.Fatalf("got %d %s", rec.Code, rec.Body)
			}
			o := fs.opts
			field := ""
			if o.Predicate.Field != nil {
				field = o.Predicate.Field.String()
			}
			if fs.key != tc.key || o.Recursive != tc.recursive || field != tc.field || o.ResourceVersion != tc.rv || o.ProgressNotify != tc.bookmarks {
				t.Errorf("store watch %q recursive=%v field=%q rv=%q bookmarks=%v\nwant %q recursive=%v field=%q rv=%q bookmarks=%v",
					fs.key, o.Recursive, field, o.ResourceVersion, o.ProgressNotify, tc.key, tc.recursive, tc.field, tc.rv, tc.bookmarks)
			}
			if (o.SendInitialEvents == nil) != (tc.initial == nil) || (tc.initial != nil && *o.SendInitialEvents != *tc.initial) {
				t.Errorf("sendInitialEvents %v, want %v", o.SendInitialEvents, tc.initial)
			}
			if !fs.w.IsStopped() {
				t.Error("the store watch was not stopped")
			}
		})
	}
}

func configMap(name, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: rv}, Data: map[string]string{"k": "v"}}
}

// stream serves a watch of the given events, which end the stream.
func stream(t *testing.T, url, accept string, events ...watch.Event) *httptest.ResponseRecorder {
	t.Helper()
	wr, fs, _ := newWatchWriter()
	for _, ev := range events {
		fs.w.Action(ev.Type, ev.Object)
	}
	fs.w.Stop()
	rec := serveWatch(context.Background(), wr, url, accept)
	if rec.Code != 200 {
		t.Fatalf("got %d %s", rec.Code, rec.Body)
	}
	return rec
}

func TestWatchStreamJSON(t *testing.T) {
	expired := apierrors.NewResourceExpired("too old").Status()
	rec := stream(t, "/api/v1/namespaces/ns/configmaps?watch=true&resourceVersion=1", "",
		watch.Event{Type: watch.Added, Object: configMap("a", "2")},
		watch.Event{Type: watch.Bookmark, Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "3"}}},
		watch.Event{Type: watch.Error, Object: &expired},
	)
	if ct, te := rec.Header().Get("Content-Type"), rec.Header().Get("Transfer-Encoding"); ct != "application/json" || te != "chunked" || !rec.Flushed {
		t.Errorf("Content-Type %q, Transfer-Encoding %q, flushed %v", ct, te, rec.Flushed)
	}
	want := `{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","resourceVersion":"2"},"data":{"k":"v"}}}
{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"3"}}}
{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old","reason":"Expired","code":410}}
`
	if got := rec.Body.String(); got != want {
		t.Errorf("stream:\n%s\nwant:\n%s", got, want)
	}
}

func TestWatchStreamProtobuf(t *testing.T) {
	rec := stream(t, "/api/v1/namespaces/ns/configmaps?watch=true&resourceVersion=1", "application/vnd.kubernetes.protobuf",
		watch.Event{Type: watch.Added, Object: configMap("a", "2")},
		watch.Event{Type: watch.Deleted, Object: configMap("b", "3")},
	)
	if ct := rec.Header().Get("Content-Type"); ct != "application/vnd.kubernetes.protobuf;stream=watch" {
		t.Errorf("Content-Type %q", ct)
	}
	body := rec.Body.Bytes()
	for _, want := range []struct{ typ, name string }{{"ADDED", "a"}, {"DELETED", "b"}} {
		if len(body) < 4 {
			t.Fatalf("stream ends early")
		}
		n := binary.BigEndian.Uint32(body)
		var ev metav1.WatchEvent
		if err := ev.Unmarshal(body[4 : 4+n]); err != nil {
			t.Fatal(err)
		}
		body = body[4+n:]
		obj, _, err := api.Codecs.UniversalDeserializer().Decode(ev.Object.Raw, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if cm, ok := obj.(*corev1.ConfigMap); ev.Type != want.typ || !ok || cm.Name != want.name {
			t.Errorf("got %s %#v, want %s %s", ev.Type, obj, want.typ, want.name)
		}
	}
	if len(body) != 0 {
		t.Errorf("%d bytes after the last frame", len(body))
	}
}

func TestWatchStreamTable(t *testing.T) {
	expired := apierrors.NewResourceExpired("too old").Status()
	rec := stream(t, "/api/v1/namespaces/ns/configmaps?watch=true&resourceVersion=1", "application/json;as=Table;v=v1;g=meta.k8s.io",
		watch.Event{Type: watch.Added, Object: configMap("a", "2")},
		watch.Event{Type: watch.Modified, Object: configMap("a", "3")},
		watch.Event{Type: watch.Error, Object: &expired},
	)
	sc := bufio.NewScanner(rec.Body)
	for i := 0; sc.Scan(); i++ {
		var ev struct {
			Type   string
			Object metav1.Table
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			if ev.Type != "ERROR" || ev.Object.Kind != "Status" {
				t.Errorf("ERROR event: %s", sc.Bytes())
			}
			continue
		}
		tb := ev.Object
		if tb.Kind != "Table" || tb.APIVersion != "meta.k8s.io/v1" || len(tb.Rows) != 1 || tb.Rows[0].Cells[0] != "a" ||
			!strings.Contains(string(tb.Rows[0].Object.Raw), `"kind":"PartialObjectMetadata"`) {
			t.Errorf("event %d: %s", i, sc.Bytes())
		}
		if heads := len(tb.ColumnDefinitions) > 0; heads != (i == 0) {
			t.Errorf("event %d: column definitions %v, want them on the first only", i, heads)
		}
	}
}

// The stream ends, and the store watch stops, on each way out.
func TestWatchEnds(t *testing.T) {
	tests := []struct {
		name  string
		query string
		end   func(cancel context.CancelFunc, stopping chan struct{})
	}{
		{"client gone", "", func(cancel context.CancelFunc, _ chan struct{}) { cancel() }},
		{"shutdown", "", func(_ context.CancelFunc, stopping chan struct{}) { close(stopping) }},
		{"timeoutSeconds", "&timeoutSeconds=1", func(context.CancelFunc, chan struct{}) {}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wr, fs, stopping := newWatchWriter()
			fs.w = watch.NewFake() // unbuffered: Add returns once the stage reads
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan *httptest.ResponseRecorder)
			go func() {
				done <- serveWatch(ctx, wr, "/api/v1/namespaces/ns/configmaps?watch=true&resourceVersion=1"+tc.query, "")
			}()
			fs.w.Add(configMap("a", "2"))
			tc.end(cancel, stopping)
			select {
			case rec := <-done:
				if !strings.Contains(rec.Body.String(), `"name":"a"`) {
					t.Errorf("body %s", rec.Body)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the watch did not end")
			}
			if !fs.w.IsStopped() {
				t.Error("the store watch was not stopped")
			}
		})
	}
}

package etcdwriter

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/internal/storage/store"
)

// minRequestTimeout is kube-apiserver's --min-request-timeout default: a
// watch without timeoutSeconds lasts a random time between it and twice it.
const minRequestTimeout = 1800 * time.Second

// notAcceptableMsg is NegotiateOutput's 406, which kube also answers when
// the chosen type (YAML) has no stream form.
const notAcceptableMsg = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"

// watch serves a watch: list or single object, ?watch=true or a legacy
// /watch/ path. Errors before the stream starts are returned to be answered
// as a Status; once it has started, the stream just ends.
func (wr *Writer) watch(w http.ResponseWriter, r *http.Request, res *api.Resource, info *request.RequestInfo) error {
	if info.Subresource != "" {
		// kube routes no watch below an object.
		return notFound()
	}
	if !res.HasVerb("watch") {
		return apierrors.NewMethodNotSupported(res.GroupResource(), info.Verb)
	}
	out, err := api.NegotiateOutput(r, true)
	if err != nil {
		return err
	}
	if out.Info.StreamSerializer == nil {
		return &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusNotAcceptable,
			Reason: metav1.StatusReasonNotAcceptable, Message: notAcceptableMsg,
		}}
	}
	pred, opts, err := watchOptions(r, res, info)
	if err != nil {
		return err
	}
	if out.Table {
		// Check includeObject before streaming, as kube does.
		if err := checkTableOptions(r); err != nil {
			return err
		}
	}
	if !flushable(w) {
		return apierrors.NewInternalError(fmt.Errorf("unable to start watch - can't get http.Flusher: %T", w))
	}

	timeout := time.Duration(0)
	if opts.TimeoutSeconds != nil {
		timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	if timeout == 0 {
		timeout = time.Duration(float64(minRequestTimeout) * (1 + rand.Float64()))
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()

	// One named object is watched at its own key when the key is known,
	// as kube's registry does; otherwise (no namespace, or a name that is
	// no path segment) the predicate picks it out.
	key, recursive := res.CollectionKey(wr.prefix, info.Namespace), true
	if info.Name != "" && (!res.Namespaced || info.Namespace != "") && api.CheckPathName(info.Name) == nil {
		key, recursive = res.Key(wr.prefix, info.Namespace, info.Name), false
	}
	wi, err := res.Store.Watch(ctx, key, store.ListOptions{
		ResourceVersion:      opts.ResourceVersion,
		ResourceVersionMatch: opts.ResourceVersionMatch,
		Predicate:            pred,
		Recursive:            recursive,
		SendInitialEvents:    opts.SendInitialEvents,
		ProgressNotify:       opts.AllowWatchBookmarks,
		// The events are only encoded (encode unwraps for tables).
		Encodable: true,
	})
	if err != nil {
		return err
	}
	defer wi.Stop()
	// From here on the watch needs only this stage: a reload need not wait
	// for it to retire the admission plugins and authenticators it passed.
	request.Detach(r.Context())

	batch := &batchWriter{}
	enc := newEventEncoder(r, res, out, batch)
	rc := http.NewResponseController(w)
	mediaType := out.Info.MediaType
	if mediaType != "application/json" {
		mediaType += ";stream=watch"
	}
	w.Header().Set("Content-Type", mediaType)
	w.Header().Set("Transfer-Encoding", "chunked")
	w.WriteHeader(http.StatusOK)
	if rc.Flush() != nil {
		return nil
	}
	stall := newStallGuard(rc, watchStallTimeout)
	defer stall.stop()
	gone := func() error {
		if stall.stalled() {
			wr.log.Warn("closing watch: consumer did not read events",
				zap.String("resource", res.GroupResource().String()), zap.String("key", key), zap.Duration("waited", watchStallTimeout))
		}
		return nil
	}

	ch := wi.ResultChan()
	for {
		select {
		case <-ctx.Done():
			// The client left or timeoutSeconds passed.
			return nil
		case <-wr.stopping:
			return nil
		case ev, ok := <-ch:
			if !ok {
				return nil
			}
			// Encode the events at hand into one batch and write it at
			// once: the HTTP/2 response buffers only 4 KiB, and each of
			// its writes is a round trip to the connection's writer.
			// An encoding error or the end of the results ends the
			// stream after the events before it.
			end := false
			for !end {
				if enc.encode(ev) != nil {
					end = true
					break
				}
				if len(ch) == 0 || batch.len() >= watchBatchMax {
					break
				}
				ev, ok = <-ch
				end = !ok
			}
			stall.begin()
			if batch.writeTo(w) != nil {
				return gone()
			}
			if end {
				return nil
			}
			// Flush once the events at hand are written, as kube does.
			if len(ch) == 0 {
				if rc.Flush() != nil {
					return gone()
				}
			}
			stall.end()
		}
	}
}

// watchBatchMax bounds the bytes of events a watch writes at once.
const watchBatchMax = 64 << 10

// batchPool holds the buffers of watches' batches between batches, so an
// idle watch holds none.
var batchPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// batchWriter collects a watch's encoded events until they are written.
type batchWriter struct {
	buf *bytes.Buffer
}

func (b *batchWriter) Write(p []byte) (int, error) {
	if b.buf == nil {
		b.buf = batchPool.Get().(*bytes.Buffer)
	}
	return b.buf.Write(p)
}

func (b *batchWriter) len() int {
	if b.buf == nil {
		return 0
	}
	return b.buf.Len()
}

// writeTo writes the batch to w in one write and lets go of the buffer.
func (b *batchWriter) writeTo(w io.Writer) error {
	if b.buf == nil {
		return nil
	}
	_, err := w.Write(b.buf.Bytes())
	b.release()
	return err
}

func (b *batchWriter) release() {
	if b.buf == nil {
		return
	}
	if b.buf.Cap() <= 4*watchBatchMax {
		b.buf.Reset()
		batchPool.Put(b.buf)
	}
	b.buf = nil
}

// watchOptions reads the list parameters as list does (with kube's
// WatchList defaults and validation), and folds a name from the path or the
// field selector into the predicate.
func watchOptions(r *http.Request, res *api.Resource, info *request.RequestInfo) (store.Predicate, *metav1.ListOptions, error) {
	pred, opts, err := listOptions(r, res)
	if err != nil {
		return pred, nil, err
	}
	pred.Limit, pred.Continue = 0, ""
	// Every watch of res selects with res.Attrs: the cache may compute
	// them once per event. res is alive while its watches are, so its
	// address names it.
	pred.AttrsKey = fmt.Sprintf("resource %p", res)
	if info.Name != "" {
		if pred.Field != nil && !pred.Field.Empty() {
			if got, ok := pred.Field.RequiresExactMatch("metadata.name"); !ok || got != info.Name {
				return pred, nil, apierrors.NewBadRequest("fieldSelector metadata.name doesn't match requested name")
			}
		} else {
			pred.Field = fields.OneTermEqualSelector("metadata.name", info.Name)
		}
	}
	return pred, opts, nil
}

// checkTableOptions rejects Table parameters kube would not convert with.
func checkTableOptions(r *http.Request) error {
	var opts metav1.TableOptions
	if err := api.ParameterCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, &opts); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	switch errs := metav1validation.ValidateTableOptions(&opts); len(errs) {
	case 0:
		return nil
	case 1:
		return apierrors.NewBadRequest(fmt.Sprintf("Unable to convert to Table as requested: %v", errs[0].Error()))
	default:
		return apierrors.NewBadRequest(fmt.Sprintf("Unable to convert to Table as requested: %v", errs))
	}
}

// flushable reports whether w, or a writer it wraps, can flush.
func flushable(w http.ResponseWriter) bool {
	for {
		if _, ok := w.(http.Flusher); ok {
			return true
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return false
		}
		w = u.Unwrap()
	}
}

// eventEncoder writes watch events as metav1.WatchEvent frames: the object
// encoded in the negotiated form (or as a Table), wrapped in the event by
// the stream serializer, one frame per event.
type eventEncoder struct {
	r      *http.Request
	res    *api.Resource
	table  bool
	object runtime.Encoder
	event  runtime.Encoder
	frames io.Writer
	// headed is set once a Table event went out: later ones carry no
	// column definitions.
	headed bool
	objBuf bytes.Buffer
	evBuf  bytes.Buffer
	// ids are the identifiers of whole encoded events, by event type,
	// under which an event's object keeps them (see encode).
	ids map[watch.EventType]runtime.Identifier
	// encodeTyped is encodeEvent of typ, made once, not per event.
	typ         watch.EventType
	encodeTyped func(runtime.Object, io.Writer) error
}

func newEventEncoder(r *http.Request, res *api.Resource, out api.Output, w io.Writer) *eventEncoder {
	gv := res.GroupVersion
	if out.Table {
		gv = metaV1
	}
	stream := out.Info.StreamSerializer
	e := &eventEncoder{
		r:      r,
		res:    res,
		table:  out.Table,
		object: api.Codecs.EncoderForVersion(out.Info.Serializer, gv),
		event:  api.Codecs.EncoderForVersion(stream.Serializer, res.GroupVersion),
		frames: stream.Framer.NewFrameWriter(w),
		ids:    map[watch.EventType]runtime.Identifier{},
	}
	e.encodeTyped = func(obj runtime.Object, w io.Writer) error { return e.encodeEvent(e.typ, obj, w) }
	return e
}

func (e *eventEncoder) encode(ev watch.Event) error {
	obj := ev.Object
	if e.table {
		if co, ok := obj.(runtime.CacheableObject); ok {
			obj = co.GetObject()
		}
		// ERROR events keep their Status.
		if _, isStatus := obj.(*metav1.Status); !isStatus {
			t, err := toTable(e.r, e.res, obj)
			if err != nil {
				return err
			}
			if e.headed {
				t.ColumnDefinitions = nil
			}
			obj = t
		}
		e.headed = true
	}
	e.evBuf.Reset()
	if co, ok := obj.(runtime.CacheableObject); ok {
		// An object the watch cache shares between its watchers keeps
		// the whole event, not only the object, encoded: every watcher
		// with the same encoders then writes the bytes the first one
		// made, where wrapping the object in the event would re-scan it
		// (encoding/json compacts a RawExtension) once per watcher.
		e.typ = ev.Type
		if err := co.CacheEncode(e.eventID(ev.Type), e.encodeTyped, &e.evBuf); err != nil {
			return err
		}
	} else if err := e.encodeEvent(ev.Type, obj, &e.evBuf); err != nil {
		return err
	}
	// One write per frame: the protobuf framer prefixes each write's length.
	_, err := e.frames.Write(e.evBuf.Bytes())
	return err
}

// encodeEvent writes obj in a WatchEvent of type typ to w.
func (e *eventEncoder) encodeEvent(typ watch.EventType, obj runtime.Object, w io.Writer) error {
	e.objBuf.Reset()
	if err := e.object.Encode(obj, &e.objBuf); err != nil {
		return err
	}
	return e.event.Encode(&metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: e.objBuf.Bytes()}}, w)
}

// eventID identifies a whole event of type typ encoded by e's encoders.
func (e *eventEncoder) eventID(typ watch.EventType) runtime.Identifier {
	id, ok := e.ids[typ]
	if !ok {
		id = runtime.Identifier("watchEvent:" + string(typ) + ":" + string(e.object.Identifier()) + ":" + string(e.event.Identifier()))
		e.ids[typ] = id
	}
	return id
}

package etcdwriter

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/api/status"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/internal/storage/store"
	"github.com/kpipe/kpipe/internal/tracing"
)

// Writer is the terminal stage.
type Writer struct {
	resources *api.Registry
	prefix    string
	// stopping closes at shutdown; open watches end when it does.
	stopping <-chan struct{}
	log      *zap.Logger
}

var (
	_ pipeline.Stage       = (*Writer)(nil)
	_ pipeline.Provisioner = (*Writer)(nil)
)

// Provision implements pipeline.Provisioner.
func (wr *Writer) Provision(env *pipeline.Env) error {
	wr.log = zap.NewNop()
	if env.Log != nil {
		wr.log = env.Log
	}
	if env.Shared != nil {
		wr.resources = env.Shared.Resources
		wr.prefix = env.Shared.StoragePrefix
		wr.stopping = env.Shared.Stopping
	}
	return nil
}

// Middleware implements pipeline.Stage.
func (wr *Writer) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, ok := request.InfoFrom(r.Context())
		if !ok || !info.IsResourceRequest {
			next.ServeHTTP(w, r)
			return
		}
		if err := wr.serve(w, r, info); err != nil {
			writeError(w, r, err)
		}
	})
}

// serve answers one resource request, or returns the error to answer.
func (wr *Writer) serve(w http.ResponseWriter, r *http.Request, info *request.RequestInfo) error {
	if wr.resources == nil {
		return notFound()
	}
	res, ok := wr.resources.Lookup(info.APIGroup, info.APIVersion, info.Resource)
	if !ok {
		return notFound()
	}
	if info.Subresource != "" && res.Subresources[info.Subresource] == nil {
		return notFound()
	}
	if !res.Namespaced && info.Namespace != "" && info.Resource != "namespaces" {
		return notFound()
	}
	// The decode stage has set it on writes; reads reach only this one.
	api.AddWarning(w.Header(), res.DeprecationWarning(info.Subresource))
	if res.Subresources[info.Subresource].IsKubelet() {
		return wr.serveKubelet(w, r, res, info)
	}
	if info.Subresource == "eviction" {
		if info.Verb != "create" {
			return apierrors.NewMethodNotSupported(res.GroupResource(), info.Verb)
		}
		return wr.evict(w, r, res, info)
	}
	if create := res.VirtualCreate(info.Subresource); create != nil {
		if info.Verb != "create" {
			return apierrors.NewMethodNotSupported(res.GroupResource(), info.Verb)
		}
		return wr.createVirtual(w, r, res, info, create)
	}
	switch info.Verb {
	case "get":
		if info.Subresource == "scale" {
			return wr.getScale(w, r, res, info)
		}
		return wr.get(w, r, res, info)
	case "list":
		return wr.list(w, r, res, info)
	case "watch":
		return wr.watch(w, r, res, info)
	case "create":
		return wr.create(w, r, res)
	case "update":
		if info.Subresource == "scale" {
			return wr.updateScale(w, r, res)
		}
		return wr.update(w, r, res)
	case "delete":
		return wr.delete(w, r, res)
	case "deletecollection":
		return wr.deleteCollection(w, r, res, info)
	}
	// Connect subresources other than the kubelet ones (proxy) are not served.
	return apierrors.NewMethodNotSupported(res.GroupResource(), info.Verb)
}

func (wr *Writer) get(w http.ResponseWriter, r *http.Request, res *api.Resource, info *request.RequestInfo) error {
	out, err := api.NegotiateOutput(r, true)
	if err != nil {
		return err
	}
	var opts metav1.GetOptions
	if err := api.ParameterCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, &opts); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	obj := res.New()
	key, err := res.RequestKey(wr.prefix, info.Namespace, info.Name)
	if err != nil {
		return err
	}
	gopts := store.GetOptions{ResourceVersion: opts.ResourceVersion}
	if eg, ok := res.Store.(store.EncodableGetter); ok && !out.Table {
		// The answer is only encoded: the cache may hand its own object
		// with the encoding the last get of it made.
		if obj, err = eg.GetEncodable(r.Context(), key, gopts, obj); err != nil {
			return err
		}
	} else if err := res.Store.Get(r.Context(), key, gopts, obj); err != nil {
		return err
	}
	return respond(w, r, out, http.StatusOK, res, obj)
}

func (wr *Writer) list(w http.ResponseWriter, r *http.Request, res *api.Resource, info *request.RequestInfo) error {
	out, err := api.NegotiateOutput(r, true)
	if err != nil {
		return err
	}
	pred, opts, err := listOptions(r, res)
	if err != nil {
		return err
	}
	list := res.NewList()
	key := res.CollectionKey(wr.prefix, info.Namespace)
	if err := res.Store.GetList(r.Context(), key, store.ListOptions{
		ResourceVersion:      opts.ResourceVersion,
		ResourceVersionMatch: opts.ResourceVersionMatch,
		Predicate:            pred,
		Recursive:            true,
	}, list); err != nil {
		return err
	}
	return respond(w, r, out, http.StatusOK, res, list)
}

func (wr *Writer) create(w http.ResponseWriter, r *http.Request, res *api.Resource) error {
	op, out, err := writeSetup(r)
	if err != nil {
		return err
	}
	if err := checkWrite(r, res, op); err != nil {
		return err
	}
	m, _ := meta.Accessor(op.Object)
	var ttl time.Duration
	if res.TTL != nil {
		ttl = res.TTL(op.Object)
	}
	stored := res.New()
	if op.DryRun {
		if res.Hooks != nil {
			if err := res.Hooks.DryRunCreate(r.Context(), op.Object); err != nil {
				return err
			}
		}
		stored = op.Object
	} else {
		if res.Hooks != nil {
			finish, herr := res.Hooks.BeginCreate(r.Context(), op.Object)
			if herr != nil {
				return herr
			}
			// Allocations stay only if the object is stored.
			written := false
			defer func() { finish(written) }()
			defer func() { written = err == nil }()
		}
		generated := m.GetGenerateName() != "" && m.GetName() != "" && len(m.GetName()) > len(m.GetGenerateName())
		for attempt := 0; ; attempt++ {
			key := res.Key(wr.prefix, op.Namespace, m.GetName())
			tracing.Event(r.Context(), "About to store object in database")
			err = res.Store.Create(r.Context(), key, op.Object, stored, ttl)
			if err == nil {
				tracing.Event(r.Context(), "Write to database call succeeded")
				break
			}
			if apierrors.IsAlreadyExists(err) && generated && attempt < 7 {
				// A generated name clashed: draw another, as kube does.
				m.SetName(api.GenerateName(m.GetGenerateName()))
				continue
			}
			if apierrors.IsAlreadyExists(err) && op.Created {
				// An update or apply that creates lost the race to another
				// create: it runs again as an update of what won, as
				// kube's GuaranteedUpdate retries on the new object.
				op.Retry = true
				return nil
			}
			if apierrors.IsAlreadyExists(err) {
				return beingDeleted(r.Context(), res, key, err)
			}
			return err
		}
	}
	return respondWrite(w, r, op, out, http.StatusCreated, res, stored)
}

// beingDeleted adds kube's "object is being deleted" to an AlreadyExists
// when the existing object is terminating.
func beingDeleted(ctx context.Context, res *api.Resource, key string, err error) error {
	existing := res.New()
	if res.Store.Get(ctx, key, store.GetOptions{}, existing) == nil {
		if m, merr := meta.Accessor(existing); merr == nil && m.GetDeletionTimestamp() != nil {
			if se, ok := err.(*apierrors.StatusError); ok {
				se.ErrStatus.Message = "object is being deleted: " + se.ErrStatus.Message
			}
		}
	}
	return err
}

func (wr *Writer) update(w http.ResponseWriter, r *http.Request, res *api.Resource) error {
	op, out, err := writeSetup(r)
	if err != nil {
		return err
	}
	if op.Created {
		// PUT of a missing object where the type allows it is a create.
		return wr.create(w, r, res)
	}
	if err := checkWrite(r, res, op); err != nil {
		return err
	}
	m, _ := meta.Accessor(op.Object)
	old, _ := meta.Accessor(op.Old)
	liveRV := old.GetResourceVersion()
	if m.GetResourceVersion() != liveRV {
		return conflict(res, op.Name)
	}
	if op.DryRun {
		if res.Hooks != nil && op.Subresource == "" {
			if err := res.Hooks.DryRunUpdate(r.Context(), op.Object, op.Old); err != nil {
				return err
			}
		}
		m.SetResourceVersion(liveRV)
		return respondWrite(w, r, op, out, http.StatusOK, res, op.Object)
	}
	var ttl *time.Duration
	if res.TTL != nil {
		t := res.TTL(op.Object)
		ttl = &t
	}
	key := res.Key(wr.prefix, op.Namespace, op.Name)
	if deleteDuringUpdate(op.Object, op.Old) {
		// The update removed the last finalizer of an object being
		// deleted: it goes now, on the revision the stages saw, as kube's
		// store deletes during such an update.
		deleted := res.New()
		err := res.Store.Delete(r.Context(), key, deleted, &store.Preconditions{ResourceVersion: &liveRV}, nil)
		if apierrors.IsConflict(err) && op.Unconditional {
			op.Retry = true
			return nil
		}
		if err != nil {
			return err
		}
		afterDelete(r.Context(), res, deleted)
		return respondWrite(w, r, op, out, http.StatusOK, res, deleted)
	}
	stored := res.New()
	stale := false
	if res.Hooks != nil && op.Subresource == "" {
		finish, herr := res.Hooks.BeginUpdate(r.Context(), op.Object, op.Old)
		if herr != nil {
			return herr
		}
		// err is the storage write's result below.
		defer func() { finish(err == nil && !stale) }()
	}
	tracing.Event(r.Context(), "About to store object in database")
	err = res.Store.GuaranteedUpdate(r.Context(), key, stored, false, nil, func(current runtime.Object, _ store.ResponseMeta) (runtime.Object, *time.Duration, error) {
		cm, err := meta.Accessor(current)
		if err != nil {
			return nil, nil, err
		}
		if cm.GetResourceVersion() != liveRV {
			// The object changed after the stages saw it.
			stale = true
			return nil, nil, errStale
		}
		m.SetResourceVersion(liveRV)
		return op.Object, ttl, nil
	})
	if stale {
		if !op.Unconditional {
			return conflict(res, op.Name)
		}
		op.Retry = true
		return nil
	}
	if err != nil {
		return err
	}
	tracing.Event(r.Context(), "Write to database call succeeded")
	return respondWrite(w, r, op, out, http.StatusOK, res, stored)
}

var errStale = fmt.Errorf("the object changed")

func conflict(res *api.Resource, name string) error {
	return apierrors.NewConflict(res.GroupResource(), name,
		fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
}

func preconditions(o *metav1.DeleteOptions) *store.Preconditions {
	if o == nil || o.Preconditions == nil {
		return nil
	}
	return &store.Preconditions{UID: o.Preconditions.UID, ResourceVersion: o.Preconditions.ResourceVersion}
}

// writeSetup is what every write starts with: its Operation and the
// negotiated response form.
func writeSetup(r *http.Request) (*request.Operation, api.Output, error) {
	op, err := operation(r)
	if err != nil {
		return nil, api.Output{}, err
	}
	out, err := api.NegotiateOutput(r, false)
	return op, out, err
}

// operation is the Operation decode built for this write.
func operation(r *http.Request) (*request.Operation, error) {
	op, ok := request.OperationFrom(r.Context())
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("no operation for a write: is the decode stage in the pipeline?"))
	}
	return op, nil
}

func notFound() error {
	return apierrors.NewGenericServerResponse(http.StatusNotFound, "", schema.GroupResource{}, "", "", 0, false)
}

// writeError answers with a Status, adding the operation's warnings.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	if op, ok := request.OperationFrom(r.Context()); ok {
		addWarnings(w, op.Warnings)
	}
	status.Write(w, err)
}

// addWarnings sets kube's Warning headers: `299 - "message"`.
func addWarnings(w http.ResponseWriter, warnings []string) {
	for _, msg := range warnings {
		w.Header().Add("Warning", "299 - "+strconv.Quote(msg))
	}
}

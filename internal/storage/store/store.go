// Package store is kpipe's etcd-backed object store: Kubernetes typed
// objects stored as JSON, with kube-apiserver's storage semantics
// (resourceVersion is the etcd mod revision, optimistic concurrency on it,
// lists pinned to one revision across pages, watch from a revision).
//
// Keys. Callers pass full etcd keys, for example
// /registry/configmaps/default/x; the store prepends nothing. The prefix
// given to New is the resource's key prefix (for example
// /registry/configmaps): every key must lie under it, it is what Count and
// UpdateObjectCount count, and keys with "." or ".." segments are refused,
// so a bad name can never reach another resource's keys.
//
// Errors are k8s.io/apimachinery/pkg/api/errors values carrying the
// group-resource and name, worded as kube-apiserver words them, so the HTTP
// layer can render them as Status unchanged.
package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// Interface is what the request path uses; a watch cache will implement it too.
type Interface interface {
	// Create stores obj at key unless the key exists. A ttl > 0 attaches an
	// etcd lease so the object expires. out, when not nil, receives the
	// stored object with its resourceVersion.
	Create(ctx context.Context, key string, obj runtime.Object, out runtime.Object, ttl time.Duration) error
	Get(ctx context.Context, key string, opts GetOptions, out runtime.Object) error
	GetList(ctx context.Context, key string, opts ListOptions, listObj runtime.Object) error
	// GuaranteedUpdate reads the current object, calls tryUpdate, and writes
	// with a transaction on the read ModRevision; on conflict it re-reads and
	// calls tryUpdate again (bounded retries, then a Conflict error).
	// Preconditions are checked on each try. ignoreNotFound lets tryUpdate
	// create (it receives a zero object).
	GuaranteedUpdate(ctx context.Context, key string, out runtime.Object, ignoreNotFound bool, pre *Preconditions, tryUpdate UpdateFunc) error
	Delete(ctx context.Context, key string, out runtime.Object, pre *Preconditions, validate ValidateDeleteFunc) error
	Watch(ctx context.Context, key string, opts ListOptions) (watch.Interface, error)
	// CurrentRevision is one cheap request for etcd's current revision.
	CurrentRevision(ctx context.Context) (int64, error)
	// Count counts the objects under key (a collection prefix).
	Count(ctx context.Context, key string) (int64, error)
}

// EncodableGetter is a store that can answer a get whose object is only
// encoded, a get's response, with an object it shares instead of a copy:
// the watch cache, which keeps the object's encodings with it.
type EncodableGetter interface {
	// GetEncodable returns the object at key. It is out, filled as Get
	// fills it, or a runtime.CacheableObject the caller must only encode.
	GetEncodable(ctx context.Context, key string, opts GetOptions, out runtime.Object) (runtime.Object, error)
}

// UpdateFunc computes the new object from the current one. A nil ttl means
// no lease, as in kube: an update that returns nil drops an existing lease.
type UpdateFunc func(input runtime.Object, res ResponseMeta) (output runtime.Object, ttl *time.Duration, err error)

// ValidateDeleteFunc may refuse a delete after seeing the current object.
type ValidateDeleteFunc func(ctx context.Context, obj runtime.Object) error

// Preconditions must hold on the current object for an update or delete.
type Preconditions struct {
	UID             *types.UID
	ResourceVersion *string
}

// ResponseMeta describes the object handed to an UpdateFunc. TTL is always
// 0, as in kube's etcd3 store: reading it would cost a lease request per
// update.
type ResponseMeta struct {
	ResourceVersion uint64
	TTL             int64
}

// GetOptions are the options of Get.
type GetOptions struct {
	IgnoreNotFound bool
	// ResourceVersion is a minimum, as kube's etcd3 store treats it: the
	// current object is read and a revision newer than etcd's is an error.
	ResourceVersion string
}

// ListOptions are the options of GetList and Watch.
type ListOptions struct {
	ResourceVersion      string
	ResourceVersionMatch metav1.ResourceVersionMatch
	Predicate            Predicate
	// Recursive means key is a prefix (a collection) rather than one object.
	Recursive         bool
	SendInitialEvents *bool
	// ProgressNotify asks for bookmarks (allowWatchBookmarks).
	ProgressNotify bool
	// Encodable is set by a watcher that only encodes the events' objects
	// (the HTTP watch): the watch cache may then hand it objects that
	// keep their encodings (runtime.CacheableObject), shared by every
	// watcher of the event, rather than copies.
	Encodable bool
}

// Predicate selects objects by label and field, and pages a list.
type Predicate struct {
	Label labels.Selector
	Field fields.Selector
	// GetAttrs defaults to the object's labels and the fields
	// metadata.name and metadata.namespace.
	GetAttrs func(runtime.Object) (labels.Set, fields.Set, error)
	// AttrsKey, when set, names GetAttrs: predicates with the same key
	// have the same GetAttrs, so the watch cache computes an event's
	// attributes once for all its watchers, as kube's does.
	AttrsKey string
	Limit    int64
	Continue string
}

// Empty reports whether the predicate selects everything.
func (p Predicate) Empty() bool {
	return (p.Label == nil || p.Label.Empty()) && (p.Field == nil || p.Field.Empty())
}

// Matches reports whether obj passes the selectors.
func (p Predicate) Matches(obj runtime.Object) (bool, error) {
	if p.Empty() {
		return true, nil
	}
	getAttrs := p.GetAttrs
	if getAttrs == nil {
		getAttrs = DefaultAttrs
	}
	ls, fs, err := getAttrs(obj)
	if err != nil {
		return false, err
	}
	return p.MatchesAttrs(ls, fs), nil
}

// MatchesAttrs reports whether an object with labels ls and fields fs
// passes the selectors.
func (p Predicate) MatchesAttrs(ls labels.Set, fs fields.Set) bool {
	if p.Label != nil && !p.Label.Matches(ls) {
		return false
	}
	if p.Field != nil && !p.Field.Matches(fs) {
		return false
	}
	return true
}

// DefaultAttrs returns the object's labels and kube's default field set
// for namespaced objects.
func DefaultAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, err
	}
	return labels.Set(m.GetLabels()), fields.Set{
		"metadata.name":      m.GetName(),
		"metadata.namespace": m.GetNamespace(),
	}, nil
}

// Codec encodes objects to and decodes them from their stored JSON form.
// NewJSONCodec builds one from a scheme.
type Codec = runtime.Codec

const (
	defaultMaxUpdateRetries = 100
	defaultWatchSendTimeout = 30 * time.Second
	defaultWatchBuffer      = 100
)

// Store is the etcd implementation of Interface.
type Store struct {
	client      *clientv3.Client
	codec       Codec
	newFunc     func() runtime.Object
	newListFunc func() runtime.Object
	prefix      string // ends in "/"
	keyRoot     string // left out of the keys errors quote
	gr          schema.GroupResource

	leases   *leaseManager
	metrics  *metrics
	log      *zap.Logger
	progress *ProgressRequester

	transformer Transformer
	handoff     handoff

	requestTimeout   time.Duration
	maxUpdateRetries int
	watchSendTimeout time.Duration
	watchBuffer      int
}

var _ Interface = (*Store)(nil)

// Option configures a Store.
type Option func(*Store)

// WithRegisterer records etcd_request_duration_seconds,
// etcd_requests_total, etcd_request_errors_total and
// apiserver_storage_objects in reg. Stores sharing reg share the metrics.
func WithRegisterer(reg prometheus.Registerer) Option {
	return func(s *Store) { s.metrics = newMetrics(reg) }
}

// WithKeyRoot names the etcd prefix every resource's keys share (say
// /registry). Kube's storage keys leave it out, so the keys its errors
// quote do too: "/configmaps/." rather than the etcd prefix.
func WithKeyRoot(root string) Option {
	return func(s *Store) { s.keyRoot = strings.TrimSuffix(root, "/") }
}

// WithLogger sets the logger (default: none).
func WithLogger(log *zap.Logger) Option {
	return func(s *Store) { s.log = log }
}

// WithRequestTimeout bounds each request whose ctx has no deadline, so a
// caller that forgot one cannot hang on an unreachable etcd. Watches are
// not bounded. Default: none (the caller's ctx rules).
func WithRequestTimeout(d time.Duration) Option {
	return func(s *Store) { s.requestTimeout = d }
}

// WithMaxUpdateRetries bounds the conflict retries of GuaranteedUpdate and
// Delete (default 100).
func WithMaxUpdateRetries(n int) Option {
	return func(s *Store) { s.maxUpdateRetries = n }
}

// WithWatchSendTimeout sets how long a watch waits on a consumer whose
// buffer is full before closing the watch (default 30s).
func WithWatchSendTimeout(d time.Duration) Option {
	return func(s *Store) { s.watchSendTimeout = d }
}

// New returns a store for one resource. prefix is the resource's key
// prefix (see the package comment); keys are used as given.
func New(client *clientv3.Client, codec Codec, newFunc, newListFunc func() runtime.Object, prefix string, groupResource schema.GroupResource, opts ...Option) *Store {
	p := path.Join("/", prefix)
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	s := &Store{
		client:           client,
		codec:            codec,
		newFunc:          newFunc,
		newListFunc:      newListFunc,
		prefix:           p,
		gr:               groupResource,
		leases:           newLeaseManager(client),
		log:              zap.NewNop(),
		maxUpdateRetries: defaultMaxUpdateRetries,
		watchSendTimeout: defaultWatchSendTimeout,
		watchBuffer:      defaultWatchBuffer,
	}
	for _, o := range opts {
		o(s)
	}
	if s.maxUpdateRetries < 1 {
		s.maxUpdateRetries = 1
	}
	return s
}

// New returns an empty object of the stored type.
func (s *Store) New() runtime.Object { return s.newFunc() }

// NewList returns an empty list of the stored type.
func (s *Store) NewList() runtime.Object { return s.newListFunc() }

// GroupResource is the resource the store holds.
func (s *Store) GroupResource() schema.GroupResource { return s.gr }

// reqCtx applies the request timeout when ctx has no deadline.
func (s *Store) reqCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.requestTimeout <= 0 {
		return ctx, func() {}
	}
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.requestTimeout)
}

// checkKey validates key as kube's storage.PrepareKey does, against the
// store's prefix. Recursive keys get a trailing "/" so /a never matches /ab.
func (s *Store) checkKey(key string, recursive bool) (string, error) {
	if key == "" || key == "/" {
		return "", apierrors.NewInternalError(fmt.Errorf("empty key: %q", key))
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "." || seg == ".." {
			// A namespace "." from a request path ends here: kube's
			// storage answers a plain error, a 500 with no reason.
			// A list's key has no trailing "/" in kube's message.
			quoted := strings.TrimPrefix(key, s.keyRoot)
			if recursive {
				quoted = strings.TrimSuffix(quoted, "/")
			}
			return "", unknownError(fmt.Sprintf("invalid key: %q", quoted))
		}
	}
	if recursive && !strings.HasSuffix(key, "/") {
		key += "/"
	}
	if !strings.HasPrefix(key, s.prefix) {
		return "", apierrors.NewInternalError(fmt.Errorf("invalid key: %q lacks resource prefix: %q", key, s.prefix))
	}
	return key, nil
}

// nameOf is the object name for error messages: the key's last segment.
func nameOf(key string) string {
	return path.Base(key)
}

// encode serializes obj without resourceVersion and selfLink, which are
// never stored (the mod revision is the resourceVersion). obj is restored
// afterwards.
func (s *Store) encode(obj runtime.Object) ([]byte, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	rv, link := m.GetResourceVersion(), m.GetSelfLink()
	m.SetResourceVersion("")
	m.SetSelfLink("")
	defer func() {
		m.SetResourceVersion(rv)
		m.SetSelfLink(link)
	}()
	var buf bytes.Buffer
	if err := s.codec.Encode(obj, &buf); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return buf.Bytes(), nil
}

// decode fills into from stored data and sets its resourceVersion to rev.
// into is zeroed first: JSON decoding would otherwise merge into old
// fields. Typed objects come back with empty TypeMeta, as kube's storage
// returns them (the HTTP encoder sets apiVersion and kind).
func (s *Store) decode(data []byte, into runtime.Object, rev int64) error {
	if err := runtime.SetZeroValue(into); err != nil {
		return apierrors.NewInternalError(err)
	}
	if _, _, err := s.codec.Decode(data, nil, into); err != nil {
		return apierrors.NewInternalError(fmt.Errorf("decoding %s: %w", s.gr, err))
	}
	if _, ok := into.(runtime.Unstructured); !ok {
		into.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	}
	return setRV(into, rev)
}

func setRV(obj runtime.Object, rev int64) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if rev == 0 {
		m.SetResourceVersion("")
	} else {
		m.SetResourceVersion(strconv.FormatInt(rev, 10))
	}
	return nil
}

// parseRV parses a resourceVersion as kube's APIObjectVersioner does.
func parseRV(rv string) (int64, error) {
	if rv == "" || rv == "0" {
		return 0, nil
	}
	v, err := strconv.ParseUint(rv, 10, 64)
	if err != nil || v > 1<<63-1 {
		if err == nil {
			err = strconv.ErrRange
		}
		return 0, invalidRVError{rv: rv, err: err}
	}
	return int64(v), nil
}

// Create implements Interface.
func (s *Store) Create(ctx context.Context, key string, obj, out runtime.Object, ttl time.Duration) error {
	k, err := s.checkKey(key, false)
	if err != nil {
		return err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if rv := m.GetResourceVersion(); rv != "" && rv != "0" {
		return unknownError("resourceVersion should not be set on objects to be created")
	}
	data, err := s.encode(obj)
	if err != nil {
		return err
	}
	ctx, cancel := s.reqCtx(ctx)
	defer cancel()
	stored, err := s.toStorage(ctx, data, k)
	if err != nil {
		return err
	}
	var lease clientv3.LeaseID
	if ttl > 0 {
		if lease, err = s.leases.get(ctx, ttl); err != nil {
			return s.toAPIError(err, "create")
		}
	}
	var handed *handed
	if c, ok := s.codec.(writtenCopier); ok && s.handoff.active() {
		if h := s.newFunc(); c.copyWritten(obj, h) {
			handed = s.handoff.put(k, stored, h)
		}
	}
	start := time.Now()
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(k), "=", 0)).
		Then(clientv3.OpPut(k, bytesAsString(stored), clientv3.WithLease(lease))).
		Commit()
	s.metrics.observe("create", s.gr, start, err)
	if err != nil || !resp.Succeeded {
		if handed != nil {
			s.handoff.drop(handed)
		}
		if err != nil {
			return s.toAPIError(err, "create")
		}
		return apierrors.NewAlreadyExists(s.gr, nameOf(k))
	}
	if out == nil {
		return nil
	}
	if c, ok := s.codec.(writtenCopier); ok && c.copyWritten(obj, out) {
		return setRV(out, resp.Header.Revision)
	}
	return s.decode(data, out, resp.Header.Revision)
}

// Get implements Interface.
func (s *Store) Get(ctx context.Context, key string, opts GetOptions, out runtime.Object) error {
	k, err := s.checkKey(key, false)
	if err != nil {
		return err
	}
	minRV, err := parseRV(opts.ResourceVersion)
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %v", err))
	}
	ctx, cancel := s.reqCtx(ctx)
	defer cancel()
	start := time.Now()
	resp, err := s.client.Get(ctx, k)
	s.metrics.observe("get", s.gr, start, err)
	if err != nil {
		return s.toAPIError(err, "get")
	}
	if minRV > resp.Header.Revision {
		return tooLargeRV(minRV, resp.Header.Revision, 0)
	}
	if len(resp.Kvs) == 0 {
		if opts.IgnoreNotFound {
			if err := runtime.SetZeroValue(out); err != nil {
				return apierrors.NewInternalError(err)
			}
			return nil
		}
		return apierrors.NewNotFound(s.gr, nameOf(k))
	}
	kv := resp.Kvs[0]
	return s.decodeStored(ctx, kv.Value, k, out, kv.ModRevision)
}

// state is an object as last read from etcd. rev is 0 when it does not
// exist; data is the plaintext, compared to skip no-op writes, unless the
// stored value is stale (written with an old encryption key).
type state struct {
	obj   runtime.Object
	rev   int64
	data  []byte
	stale bool
}

// readState turns a key's value (nil when absent) into a state.
func (s *Store) readState(ctx context.Context, value []byte, rev int64, exists, ignoreNotFound bool, key string) (*state, error) {
	st := &state{obj: s.newFunc()}
	if !exists {
		if !ignoreNotFound {
			return nil, apierrors.NewNotFound(s.gr, nameOf(key))
		}
		return st, nil
	}
	data, stale, err := s.fromStorage(ctx, value, key)
	if err != nil {
		return nil, err
	}
	st.rev, st.data, st.stale = rev, data, stale
	if err := s.decode(data, st.obj, rev); err != nil {
		return nil, err
	}
	return st, nil
}

func (s *Store) currentState(ctx context.Context, key string, ignoreNotFound bool) (*state, error) {
	start := time.Now()
	resp, err := s.client.Get(ctx, key)
	s.metrics.observe("get", s.gr, start, err)
	if err != nil {
		return nil, err
	}
	if len(resp.Kvs) == 0 {
		return s.readState(ctx, nil, 0, false, ignoreNotFound, key)
	}
	return s.readState(ctx, resp.Kvs[0].Value, resp.Kvs[0].ModRevision, true, ignoreNotFound, key)
}

// stateFromTxn reads the current value that a failed transaction's Else
// branch fetched, saving a round trip on conflict.
func (s *Store) stateFromTxn(ctx context.Context, resp *clientv3.TxnResponse, key string, ignoreNotFound bool) (*state, error) {
	if len(resp.Responses) == 0 || resp.Responses[0].GetResponseRange() == nil {
		return nil, apierrors.NewInternalError(errors.New("transaction failed without the current value"))
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 {
		return s.readState(ctx, nil, 0, false, ignoreNotFound, key)
	}
	return s.readState(ctx, kvs[0].Value, kvs[0].ModRevision, true, ignoreNotFound, key)
}

// GuaranteedUpdate implements Interface.
func (s *Store) GuaranteedUpdate(ctx context.Context, key string, out runtime.Object, ignoreNotFound bool, pre *Preconditions, tryUpdate UpdateFunc) error {
	k, err := s.checkKey(key, false)
	if err != nil {
		return err
	}
	name := nameOf(k)
	ctx, cancel := s.reqCtx(ctx)
	defer cancel()
	st, err := s.currentState(ctx, k, ignoreNotFound)
	if err != nil {
		return s.toAPIError(err, "update")
	}
	for attempt := 1; ; attempt++ {
		if err := s.checkPreconditions(pre, k, st.obj, true); err != nil {
			return err
		}
		ret, ttl, err := tryUpdate(st.obj, ResponseMeta{ResourceVersion: uint64(st.rev)})
		if err != nil {
			return err
		}
		data, err := s.encode(ret)
		if err != nil {
			return err
		}
		// kube skips writes that change nothing, so no-op updates do
		// not bump the resourceVersion or wake watchers.
		if st.rev != 0 && !st.stale && bytes.Equal(data, st.data) {
			return s.decode(st.data, out, st.rev)
		}
		stored, err := s.toStorage(ctx, data, k)
		if err != nil {
			return err
		}
		var lease clientv3.LeaseID
		if ttl != nil && *ttl > 0 {
			if lease, err = s.leases.get(ctx, *ttl); err != nil {
				return s.toAPIError(err, "update")
			}
		}
		c, copier := s.codec.(writtenCopier)
		var handed *handed
		if copier && s.handoff.active() {
			if h := s.newFunc(); c.copyWritten(ret, h) {
				handed = s.handoff.put(k, stored, h)
			}
		}
		start := time.Now()
		resp, err := s.client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(k), "=", st.rev)).
			Then(clientv3.OpPut(k, bytesAsString(stored), clientv3.WithLease(lease))).
			Else(clientv3.OpGet(k)).
			Commit()
		s.metrics.observe("update", s.gr, start, err)
		if handed != nil && (err != nil || !resp.Succeeded) {
			s.handoff.drop(handed)
		}
		if err != nil {
			return s.toAPIError(err, "update")
		}
		if resp.Succeeded {
			// As in Create: a copy of what was written, not a decode.
			if copier && c.copyWritten(ret, out) {
				return setRV(out, resp.Header.Revision)
			}
			return s.decode(data, out, resp.Header.Revision)
		}
		if attempt >= s.maxUpdateRetries {
			return apierrors.NewConflict(s.gr, name, errors.New(optimisticLockMsg))
		}
		if st, err = s.stateFromTxn(ctx, resp, k, ignoreNotFound); err != nil {
			return err
		}
	}
}

// Delete implements Interface. The returned object carries the revision of
// the delete, as kube returns it and as the DELETED watch event shows it.
func (s *Store) Delete(ctx context.Context, key string, out runtime.Object, pre *Preconditions, validate ValidateDeleteFunc) error {
	k, err := s.checkKey(key, false)
	if err != nil {
		return err
	}
	name := nameOf(k)
	ctx, cancel := s.reqCtx(ctx)
	defer cancel()
	st, err := s.currentState(ctx, k, false)
	if err != nil {
		return s.toAPIError(err, "delete")
	}
	for attempt := 1; ; attempt++ {
		if err := s.checkPreconditions(pre, k, st.obj, false); err != nil {
			return err
		}
		if validate != nil {
			if err := validate(ctx, st.obj); err != nil {
				return err
			}
		}
		start := time.Now()
		resp, err := s.client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(k), "=", st.rev)).
			Then(clientv3.OpDelete(k)).
			Else(clientv3.OpGet(k)).
			Commit()
		s.metrics.observe("delete", s.gr, start, err)
		if err != nil {
			return s.toAPIError(err, "delete")
		}
		if resp.Succeeded {
			if out == nil {
				return nil
			}
			return s.decode(st.data, out, resp.Header.Revision)
		}
		if attempt >= s.maxUpdateRetries {
			return apierrors.NewConflict(s.gr, name, errors.New(optimisticLockMsg))
		}
		if st, err = s.stateFromTxn(ctx, resp, k, false); err != nil {
			return err
		}
	}
}

// checkPreconditions checks pre against obj with kube's wording. A stale
// resourceVersion on update reads as kube's optimistic-lock conflict, the
// message clients get for a stale PUT.
func (s *Store) checkPreconditions(pre *Preconditions, key string, obj runtime.Object, update bool) error {
	if pre == nil {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("can't enforce preconditions on un-introspectable object: %w", err))
	}
	name := nameOf(key)
	if pre.UID != nil && *pre.UID != m.GetUID() {
		return apierrors.NewConflict(s.gr, name, invalidObjError(key,
			fmt.Sprintf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *pre.UID, m.GetUID())))
	}
	if pre.ResourceVersion != nil && *pre.ResourceVersion != m.GetResourceVersion() {
		if update {
			return apierrors.NewConflict(s.gr, name, errors.New(optimisticLockMsg))
		}
		return apierrors.NewConflict(s.gr, name, invalidObjError(key,
			fmt.Sprintf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *pre.ResourceVersion, m.GetResourceVersion())))
	}
	return nil
}

// CurrentRevision implements Interface with a count-only read of one key,
// which is linearizable and carries the revision in its header.
func (s *Store) CurrentRevision(ctx context.Context) (int64, error) {
	ctx, cancel := s.reqCtx(ctx)
	defer cancel()
	start := time.Now()
	resp, err := s.client.Get(ctx, s.prefix, clientv3.WithCountOnly())
	s.metrics.observe("getCurrentResourceVersion", s.gr, start, err)
	if err != nil {
		return 0, s.toAPIError(err, "get")
	}
	return resp.Header.Revision, nil
}

// Count implements Interface.
func (s *Store) Count(ctx context.Context, key string) (int64, error) {
	k, err := s.checkKey(key, true)
	if err != nil {
		return 0, err
	}
	ctx, cancel := s.reqCtx(ctx)
	defer cancel()
	start := time.Now()
	resp, err := s.client.Get(ctx, k, clientv3.WithPrefix(), clientv3.WithCountOnly())
	s.metrics.observe("listWithCount", s.gr, start, err)
	if err != nil {
		return 0, s.toAPIError(err, "list")
	}
	return resp.Count, nil
}

// UpdateObjectCount counts the store's objects and sets
// apiserver_storage_objects (and apiserver_resource_objects), -1 on error
// as kube does. Call it periodically.
func (s *Store) UpdateObjectCount(ctx context.Context) (int64, error) {
	n, err := s.Count(ctx, s.prefix)
	if err != nil {
		s.metrics.setObjects(s.gr, -1)
		return 0, err
	}
	s.metrics.setObjects(s.gr, float64(n))
	return n, nil
}

// RequestWatchProgress asks etcd for a progress notification on every
// watch of this client; watches with ProgressNotify turn it into a
// bookmark. The ctx must carry the same metadata as the watches' (the
// require-leader flag), which this adds.
func (s *Store) RequestWatchProgress(ctx context.Context) error {
	if err := s.client.RequestProgress(clientv3.WithRequireLeader(ctx)); err != nil {
		return s.toAPIError(err, "watch")
	}
	return nil
}

// Prefix is the store's key prefix, ending in "/".
func (s *Store) Prefix() string { return s.prefix }

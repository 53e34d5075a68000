package etcdwriter

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/internal/storage/store"
)

// deletion is what one delete did to one object.
type deletion struct {
	// obj is the object to answer with.
	obj runtime.Object
	// deleted is set when the object left storage.
	deleted bool
	// final is set when the answer is kube's finalizeDelete form (the
	// object, or a Success Status for types that do not return it): the
	// object left, or a deletion already under way was left alone. An
	// object the delete marked and kept is always answered as the object.
	final bool
}

func (wr *Writer) delete(w http.ResponseWriter, r *http.Request, res *api.Resource) error {
	op, out, err := writeSetup(r)
	if err != nil {
		return err
	}
	key := res.Key(wr.prefix, op.Namespace, op.Name)
	d, err := deleteObject(r.Context(), res, key, op.Old, op.DeleteOptions, op.DryRun)
	if err != nil {
		return err
	}
	code := http.StatusOK
	// kube answers 202 only for an object kept after a delete that set
	// orphanDependents=false, for old clients' sake.
	if o := op.DeleteOptions; !d.deleted && o != nil && o.OrphanDependents != nil && !*o.OrphanDependents {
		code = http.StatusAccepted
	}
	if d.final {
		return respondDeleted(w, r, out, code, res, d.obj)
	}
	return respond(w, r, out, code, res, d.obj)
}

var (
	// errDeleteNow ends the marking update: nothing holds the object.
	errDeleteNow = errors.New("delete now")
	// errAlreadyDeleting ends it too: a deletion is pending and the
	// delete may not change it.
	errAlreadyDeleting = errors.New("already deleting")
)

// deleteObject is kube's generic registry Delete: it runs the graceful
// deletion rules, records the propagation policy as finalizers, marks
// objects that finalizers or a grace period keep, and removes the rest.
// live is the object as read before; opts is not changed.
func deleteObject(ctx context.Context, res *api.Resource, key string, live runtime.Object, in *metav1.DeleteOptions, dryRun bool) (deletion, error) {
	opts := &metav1.DeleteOptions{}
	if in != nil {
		opts = in.DeepCopy()
	}
	if ns, ok := live.(*corev1.Namespace); ok {
		if d, done, err := deleteNamespace(ctx, res, key, ns, opts, dryRun); done || err != nil {
			return d, err
		}
	}
	pre := preconditions(opts)
	graceful, pending, err := beforeDelete(res, live, opts)
	if err != nil {
		return deletion{}, err
	}
	if pending {
		// Finalizers cannot be changed by a delete once one is pending.
		return deletion{obj: live, final: true}, nil
	}
	m, err := meta.Accessor(live)
	if err != nil {
		return deletion{}, apierrors.NewInternalError(err)
	}
	deleteNow, ignoreNotFound := true, false
	var marked, lastExisting runtime.Object
	if gcChange, _ := gcFinalizers(res, m, opts); graceful || len(m.GetFinalizers()) > 0 || gcChange {
		var d deletion
		d, deleteNow, ignoreNotFound, lastExisting, err = markForDeletion(ctx, res, key, live, pre, opts, dryRun)
		if err != nil || !deleteNow {
			return d, err
		}
		marked = d.obj
		if marked != nil && pre != nil && pre.ResourceVersion != nil {
			// The mark bumped the revision the delete must match.
			rv := mustAccessor(marked).GetResourceVersion()
			pre.ResourceVersion = &rv
		}
	}
	if dryRun {
		if marked != nil {
			return deletion{obj: marked, deleted: true, final: true}, nil
		}
		return deletion{obj: live, deleted: true, final: true}, nil
	}
	gone := res.New()
	if err := res.Store.Delete(ctx, key, gone, pre, nil); err != nil {
		if apierrors.IsNotFound(err) && ignoreNotFound && lastExisting != nil {
			// Another graceless delete won the race: the last state seen
			// is the best answer, as in kube.
			return deletion{obj: lastExisting, deleted: true, final: true}, nil
		}
		return deletion{}, err
	}
	afterDelete(ctx, res, gone)
	return deletion{obj: gone, deleted: true, final: true}, nil
}

// afterDelete runs the resource's hooks for an object gone from storage
// (a Service's cluster IP and node ports are released).
func afterDelete(ctx context.Context, res *api.Resource, obj runtime.Object) {
	if res.Hooks != nil {
		res.Hooks.AfterDelete(ctx, obj)
	}
}

// markForDeletion is kube's updateForGracefulDeletionAndFinalizers: one
// guaranteed update that sets the finalizers the policy asks for and the
// deletion timestamp and grace period. It reports whether the object must
// now be removed (no finalizer and no grace period keeps it).
func markForDeletion(ctx context.Context, res *api.Resource, key string, live runtime.Object, pre *store.Preconditions, opts *metav1.DeleteOptions, dryRun bool) (d deletion, deleteNow, ignoreNotFound bool, lastExisting runtime.Object, err error) {
	var lastGraceful int64
	var pendingFinalizers bool
	tryUpdate := func(existing runtime.Object) (runtime.Object, error) {
		graceful, pending, err := beforeDelete(res, existing, opts)
		if err != nil {
			return nil, err
		}
		if pending {
			return nil, errAlreadyDeleting
		}
		em := mustAccessor(existing)
		if change, finalizers := gcFinalizers(res, em, opts); change {
			em.SetFinalizers(finalizers)
		}
		pendingFinalizers = len(em.GetFinalizers()) > 0
		if !graceful {
			if !pendingFinalizers {
				return nil, errDeleteNow
			}
			markDeleting(em, time.Now())
			return existing, nil
		}
		lastGraceful = *opts.GracePeriodSeconds
		lastExisting = existing
		return existing, nil
	}
	out, err := guaranteedUpdate(ctx, res, key, live, pre, dryRun, tryUpdate)
	switch {
	case errors.Is(err, errDeleteNow):
		return deletion{}, true, false, lastExisting, nil
	case errors.Is(err, errAlreadyDeleting):
		return deletion{obj: live, final: true}, false, false, nil, nil
	case err != nil:
		return deletion{}, false, false, nil, err
	}
	if pendingFinalizers || lastGraceful > 0 {
		return deletion{obj: out}, false, false, lastExisting, nil
	}
	// A graceful type deleted with a zero period: marked, then removed
	// at once; a racing graceless delete may remove it first.
	return deletion{obj: out}, true, true, lastExisting, nil
}

// guaranteedUpdate runs tryUpdate in a storage guaranteed update, or, for
// a dry run, once on a copy of live after checking the preconditions.
func guaranteedUpdate(ctx context.Context, res *api.Resource, key string, live runtime.Object, pre *store.Preconditions, dryRun bool, tryUpdate func(runtime.Object) (runtime.Object, error)) (runtime.Object, error) {
	if dryRun {
		if err := checkPreconditions(res, live, pre); err != nil {
			return nil, err
		}
		return tryUpdate(live.DeepCopyObject())
	}
	out := res.New()
	err := res.Store.GuaranteedUpdate(ctx, key, out, false, pre, func(current runtime.Object, _ store.ResponseMeta) (runtime.Object, *time.Duration, error) {
		obj, err := tryUpdate(current)
		return obj, nil, err
	})
	return out, err
}

// beforeDelete is kube's rest.BeforeDelete: it validates the options,
// checks the preconditions early, and works out the grace period. graceful
// means the object must be marked with a deletion timestamp and grace
// period (obj is changed so); pending means a deletion is under way that
// this delete may not shorten.
func beforeDelete(res *api.Resource, obj runtime.Object, opts *metav1.DeleteOptions) (graceful, pending bool, err error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return false, false, apierrors.NewInternalError(err)
	}
	if p := opts.Preconditions; p != nil {
		gr := schema.GroupResource{Group: res.GroupVersion.Group, Resource: res.Kind}
		if p.UID != nil && *p.UID != m.GetUID() {
			return false, false, apierrors.NewConflict(gr, m.GetName(), fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, m.GetUID()))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != m.GetResourceVersion() {
			return false, false, apierrors.NewConflict(gr, m.GetName(), fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, m.GetResourceVersion()))
		}
	}
	// Negative periods count as 1s on the delete path.
	if g := opts.GracePeriodSeconds; g != nil && *g < 0 {
		opts.GracePeriodSeconds = ptrInt64(1)
	}
	if g := m.GetDeletionGracePeriodSeconds(); g != nil && *g < 0 {
		m.SetDeletionGracePeriodSeconds(ptrInt64(1))
	}
	if !res.GracefulDelete() {
		return false, false, nil
	}
	if ts := m.GetDeletionTimestamp(); ts != nil {
		current := m.GetDeletionGracePeriodSeconds()
		if current == nil || *current == 0 {
			// Marked with no period: it may go now.
			return false, false, nil
		}
		if opts.GracePeriodSeconds == nil {
			opts.GracePeriodSeconds = current
			return false, true, nil
		}
		period := *opts.GracePeriodSeconds
		if period >= *current {
			// Only a shorter period may be given.
			return false, true, nil
		}
		// Move the timestamp back by the old period, then on by the new.
		at := ts.Add(-time.Duration(*current) * time.Second).Add(time.Duration(period) * time.Second)
		if now := time.Now(); at.Before(now) {
			at = now
			if period != 0 {
				// The whole period has passed: the shortest graceful
				// delete, which someone else finishes.
				period = 1
			}
		}
		t := metav1.NewTime(at)
		m.SetDeletionTimestamp(&t)
		m.SetDeletionGracePeriodSeconds(&period)
		return true, false, nil
	}
	api.CheckGracefulDelete(obj, opts)
	if opts.GracePeriodSeconds == nil {
		return false, false, apierrors.NewInternalError(fmt.Errorf("options.GracePeriodSeconds should not be nil"))
	}
	t := metav1.NewTime(time.Now().Add(time.Duration(*opts.GracePeriodSeconds) * time.Second))
	m.SetDeletionTimestamp(&t)
	m.SetDeletionGracePeriodSeconds(ptrInt64(*opts.GracePeriodSeconds))
	// Controllers must see the change of state the timestamp brings.
	if g := m.GetGeneration(); g > 0 {
		m.SetGeneration(g + 1)
	}
	return true, false, nil
}

// markDeleting is kube's markAsDeleting, for objects that finalizers keep
// and that have no grace period: deletionTimestamp now (never later than
// a present one), deletionGracePeriodSeconds 0, and a generation bump the
// first time.
func markDeleting(m metav1.Object, now time.Time) {
	if m.GetDeletionTimestamp() == nil && m.GetGeneration() > 0 {
		m.SetGeneration(m.GetGeneration() + 1)
	}
	if ts := m.GetDeletionTimestamp(); ts == nil || ts.After(now) {
		t := metav1.NewTime(now)
		m.SetDeletionTimestamp(&t)
	}
	m.SetDeletionGracePeriodSeconds(ptrInt64(0))
}

// gcFinalizers is kube's deletionFinalizersForGarbageCollection: the
// orphan and foregroundDeletion finalizers the delete's policy (or the
// object's present finalizers, or the resource's default) calls for. It
// reports whether they differ from the object's.
func gcFinalizers(res *api.Resource, m metav1.Object, opts *metav1.DeleteOptions) (bool, []string) {
	policy := res.DefaultGCPolicy()
	if policy == api.GCUnsupported {
		return false, m.GetFinalizers()
	}
	orphan, foreground := false, false
	//nolint:staticcheck // orphanDependents is deprecated but still honoured, as in kube
	switch {
	case opts.OrphanDependents != nil:
		orphan = *opts.OrphanDependents
	case opts.PropagationPolicy != nil:
		orphan = *opts.PropagationPolicy == metav1.DeletePropagationOrphan
		foreground = *opts.PropagationPolicy == metav1.DeletePropagationForeground
	default:
		// The object's own finalizer, else the resource's default.
		orphan = policy == api.GCOrphanDependents
		for _, f := range m.GetFinalizers() {
			if f == metav1.FinalizerOrphanDependents {
				orphan, foreground = true, false
				break
			}
			if f == metav1.FinalizerDeleteDependents {
				orphan, foreground = false, true
				break
			}
		}
	}
	var finalizers []string
	for _, f := range m.GetFinalizers() {
		if f != metav1.FinalizerOrphanDependents && f != metav1.FinalizerDeleteDependents {
			finalizers = append(finalizers, f)
		}
	}
	if orphan {
		finalizers = append(finalizers, metav1.FinalizerOrphanDependents)
	}
	if foreground {
		finalizers = append(finalizers, metav1.FinalizerDeleteDependents)
	}
	if sameSet(finalizers, m.GetFinalizers()) {
		return false, m.GetFinalizers()
	}
	return true, finalizers
}

func sameSet(a, b []string) bool {
	in := func(s string, l []string) bool {
		for _, x := range l {
			if x == s {
				return true
			}
		}
		return false
	}
	for _, x := range a {
		if !in(x, b) {
			return false
		}
	}
	for _, x := range b {
		if !in(x, a) {
			return false
		}
	}
	return true
}

// deleteNamespace is kube's namespace Delete: the first delete marks the
// namespace Terminating (with a UID precondition, and the orphan and
// foregroundDeletion finalizers its options call for) and keeps it; later
// ones keep it while spec.finalizers remain. done is false when the
// generic delete should remove it.
func deleteNamespace(ctx context.Context, res *api.Resource, key string, ns *corev1.Namespace, opts *metav1.DeleteOptions, dryRun bool) (d deletion, done bool, err error) {
	if opts.Preconditions == nil {
		opts.Preconditions = &metav1.Preconditions{}
	}
	gr := res.GroupResource()
	if opts.Preconditions.UID == nil {
		uid := ns.UID
		opts.Preconditions.UID = &uid
	} else if *opts.Preconditions.UID != ns.UID {
		return d, true, apierrors.NewConflict(gr, ns.Name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *opts.Preconditions.UID, ns.UID))
	}
	if rv := opts.Preconditions.ResourceVersion; rv != nil && *rv != ns.ResourceVersion {
		return d, true, apierrors.NewConflict(gr, ns.Name, fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *rv, ns.ResourceVersion))
	}
	if ns.DeletionTimestamp.IsZero() {
		out, err := guaranteedUpdate(ctx, res, key, ns, preconditions(opts), dryRun, func(existing runtime.Object) (runtime.Object, error) {
			e := existing.(*corev1.Namespace)
			if e.DeletionTimestamp.IsZero() {
				now := metav1.NewTime(time.Now())
				e.DeletionTimestamp = &now
			}
			e.Status.Phase = corev1.NamespaceTerminating
			e.Finalizers = namespaceGCFinalizers(e.Finalizers, opts)
			return e, nil
		})
		if err != nil {
			return d, true, err
		}
		return deletion{obj: out}, true, nil
	}
	if len(ns.Spec.Finalizers) > 0 {
		return deletion{obj: ns}, true, nil
	}
	return d, false, nil
}

// namespaceGCFinalizers is kube's shouldHaveOrphanFinalizer and
// shouldHaveDeleteDependentsFinalizer applied to a namespace's finalizers.
func namespaceGCFinalizers(current []string, opts *metav1.DeleteOptions) []string {
	has := map[string]bool{}
	for _, f := range current {
		has[f] = true
	}
	orphan, foreground := has[metav1.FinalizerOrphanDependents], has[metav1.FinalizerDeleteDependents]
	//nolint:staticcheck // orphanDependents is deprecated but still honoured, as in kube
	switch {
	case opts.OrphanDependents != nil:
		orphan, foreground = *opts.OrphanDependents, false
	case opts.PropagationPolicy != nil:
		orphan = *opts.PropagationPolicy == metav1.DeletePropagationOrphan
		foreground = *opts.PropagationPolicy == metav1.DeletePropagationForeground
	}
	var out []string
	for _, f := range current {
		if f != metav1.FinalizerOrphanDependents && f != metav1.FinalizerDeleteDependents {
			out = append(out, f)
		}
	}
	if orphan {
		out = append(out, metav1.FinalizerOrphanDependents)
	}
	if foreground {
		out = append(out, metav1.FinalizerDeleteDependents)
	}
	if sameSet(out, current) {
		return current
	}
	return out
}

// deleteDuringUpdate is kube's shouldDeleteDuringUpdate: an update that
// leaves no finalizer on an object being deleted with no grace period
// (or a zero one) removes it.
func deleteDuringUpdate(obj, old runtime.Object) bool {
	m, err1 := meta.Accessor(obj)
	om, err2 := meta.Accessor(old)
	if err1 != nil || err2 != nil || len(m.GetFinalizers()) > 0 || hasSpecFinalizers(obj) {
		return false
	}
	if om.GetDeletionTimestamp() == nil {
		return false
	}
	g := om.GetDeletionGracePeriodSeconds()
	return g == nil || *g == 0
}

// checkPreconditions checks a dry run's preconditions as storage would.
func checkPreconditions(res *api.Resource, obj runtime.Object, pre *store.Preconditions) error {
	if pre == nil {
		return nil
	}
	m := mustAccessor(obj)
	if (pre.UID != nil && *pre.UID != m.GetUID()) || (pre.ResourceVersion != nil && *pre.ResourceVersion != m.GetResourceVersion()) {
		return conflict(res, m.GetName())
	}
	return nil
}

func (wr *Writer) deleteCollection(w http.ResponseWriter, r *http.Request, res *api.Resource, info *request.RequestInfo) error {
	op, out, err := writeSetup(r)
	if err != nil {
		return err
	}
	pred, opts, err := listOptions(r, res)
	if err != nil {
		return err
	}
	pred.Limit, pred.Continue = 0, ""
	list := res.NewList()
	if err := res.Store.GetList(r.Context(), res.CollectionKey(wr.prefix, info.Namespace), store.ListOptions{
		ResourceVersion: opts.ResourceVersion, ResourceVersionMatch: opts.ResourceVersionMatch,
		Predicate: pred, Recursive: true,
	}, list); err != nil {
		return err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	// Each item goes through the delete of one object, as kube's
	// DeleteCollection does; one already gone is skipped.
	var deleted []runtime.Object
	for _, item := range items {
		m := mustAccessor(item)
		key := res.Key(wr.prefix, m.GetNamespace(), m.GetName())
		d, err := deleteObject(r.Context(), res, key, item, op.DeleteOptions, op.DryRun)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		deleted = append(deleted, d.obj)
	}
	if err := meta.SetList(list, deleted); err != nil {
		return err
	}
	return respond(w, r, out, http.StatusOK, res, list)
}

// respondDeleted answers a finished delete with the object, or with kube's
// Success Status for types that do not return it.
func respondDeleted(w http.ResponseWriter, r *http.Request, out api.Output, code int, res *api.Resource, obj runtime.Object) error {
	if res.ReturnDeletedObject {
		return respond(w, r, out, code, res, obj)
	}
	m := mustAccessor(obj)
	st := &metav1.Status{
		Status: metav1.StatusSuccess,
		Details: &metav1.StatusDetails{
			Name:  m.GetName(),
			Group: res.GroupVersion.Group,
			Kind:  res.Name, // kube puts the resource here
			UID:   m.GetUID(),
		},
	}
	return out.Encode(w, code, st, schema.GroupVersion{Version: "v1"})
}

// mustAccessor is meta.Accessor for the typed objects the registry makes,
// which always have metadata.
func mustAccessor(obj runtime.Object) metav1.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(fmt.Sprintf("etcdwriter: %T has no metadata: %v", obj, err))
	}
	return m
}

func ptrInt64(v int64) *int64 { return &v }

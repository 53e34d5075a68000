package etcdwriter

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/internal/storage/store"
)

// Kube's eviction REST (pkg/registry/core/pod/storage/eviction.go): a pod
// that no PodDisruptionBudget covers, or that may ignore budgets, is
// deleted; a covered pod is deleted only when its budget allows a
// disruption, which the eviction takes from the budget's status first.

const (
	// maxDisruptedPods bounds the evictions a budget records before the
	// disruption controller confirms them.
	maxDisruptedPods = 2000
	// evictionRetries and evictionRetryDelay are kube's EvictionsRetry.
	evictionRetries    = 20
	evictionRetryDelay = 500 * time.Millisecond
	// pdbViolationMessage is the 429's message.
	pdbViolationMessage = "Cannot evict pod as it would violate the pod's disruption budget."
)

var (
	evictionGK   = schema.GroupKind{Group: "policy", Kind: "Eviction"}
	pdbGR        = schema.GroupResource{Group: "policy", Resource: "poddisruptionbudget"}
	podConflicts = schema.GroupResource{Resource: "Pod"} // kube's spelling in these conflicts
)

// evict answers a create of pods/<name>/eviction.
func (wr *Writer) evict(w http.ResponseWriter, r *http.Request, pods *api.Resource, info *request.RequestInfo) error {
	op, out, err := writeSetup(r)
	if err != nil {
		return err
	}
	ev, ok := op.Object.(*policyv1.Eviction)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("not a Eviction object: %T", op.Object))
	}
	if info.Name != ev.Name {
		return apierrors.NewBadRequest("name in URL does not match name in Eviction object")
	}
	if o := ev.DeleteOptions; o != nil && o.IgnoreStoreReadErrorWithClusterBreakingPotential != nil && *o.IgnoreStoreReadErrorWithClusterBreakingPotential {
		return apierrors.NewInvalid(evictionGK, info.Name, field.ErrorList{field.Invalid(
			field.NewPath("deleteOptions", "ignoreStoreReadErrorWithClusterBreakingPotential"), true, "can not be set for pod eviction, try after removing the option")})
	}
	var dryRun []string
	if op.DryRun {
		dryRun = r.URL.Query()["dryRun"]
	}
	opts, err := evictionDeleteOptions(ev, dryRun)
	if err != nil {
		return err
	}
	// Kube's eviction reads the pod by the name first.
	if err := api.CheckPathName(info.Name); err != nil {
		return err
	}
	pdbs, _ := wr.resources.Lookup("policy", "v1", "poddisruptionbudgets")
	e := &eviction{wr: wr, pods: pods, pdbs: pdbs, namespace: info.Namespace, name: info.Name, dryRun: len(opts.DryRun) > 0}
	st, err := e.run(r.Context(), opts)
	if err != nil {
		return err
	}
	addWarnings(w, op.Warnings)
	if st.Code == 0 {
		st.Code = http.StatusCreated
	}
	// kube answers 201 whatever the Status says, its 500 included.
	return out.Encode(w, http.StatusCreated, st, schema.GroupVersion{Version: "v1"})
}

// evictionDeleteOptions is kube's propagateDryRun: the eviction's delete
// options with the request's dryRun.
func evictionDeleteOptions(ev *policyv1.Eviction, dryRun []string) (*metav1.DeleteOptions, error) {
	if ev.DeleteOptions == nil {
		return &metav1.DeleteOptions{DryRun: dryRun}, nil
	}
	if len(ev.DeleteOptions.DryRun) == 0 {
		ev.DeleteOptions.DryRun = dryRun
		return ev.DeleteOptions, nil
	}
	if len(dryRun) == 0 {
		return ev.DeleteOptions, nil
	}
	if !reflect.DeepEqual(dryRun, ev.DeleteOptions.DryRun) {
		return nil, fmt.Errorf("Non-matching dry-run options in request and content: %v and %v", dryRun, ev.DeleteOptions.DryRun)
	}
	return ev.DeleteOptions, nil
}

type eviction struct {
	wr              *Writer
	pods, pdbs      *api.Resource
	namespace, name string
	dryRun          bool
}

func (e *eviction) podKey() string { return e.pods.Key(e.wr.prefix, e.namespace, e.name) }

func rvUnset(o *metav1.DeleteOptions) bool {
	return o.Preconditions == nil || o.Preconditions.ResourceVersion == nil
}

func withRV(o *metav1.DeleteOptions, rv string) *metav1.DeleteOptions {
	o = o.DeepCopy()
	if o.Preconditions == nil {
		o.Preconditions = &metav1.Preconditions{}
	}
	o.Preconditions.ResourceVersion = &rv
	return o
}

// retry runs fn until it succeeds, fails with an error retriable does not
// accept, or the tries run out (the last error then), as client-go's
// retry.OnError with kube's EvictionsRetry.
func retry(ctx context.Context, retriable func(error) bool, fn func() error) error {
	var err error
	for i := 0; i < evictionRetries; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return err
			case <-time.After(evictionRetryDelay):
			}
		}
		if err = fn(); err == nil || !retriable(err) {
			return err
		}
	}
	return err
}

func (e *eviction) run(ctx context.Context, opts *metav1.DeleteOptions) (*metav1.Status, error) {
	success := &metav1.Status{Status: metav1.StatusSuccess}
	var pod *corev1.Pod
	deleted := false
	retriable := apierrors.IsConflict
	if !rvUnset(opts) {
		retriable = func(error) bool { return false }
	}
	err := retry(ctx, retriable, func() error {
		pod = &corev1.Pod{}
		if err := e.pods.Store.Get(ctx, e.podKey(), store.GetOptions{}, pod); err != nil {
			return err
		}
		if !canIgnorePDB(pod) {
			return nil
		}
		o := opts
		if shouldEnforceResourceVersion(pod) && rvUnset(opts) {
			o = withRV(opts, pod.ResourceVersion)
		}
		if err := e.deletePod(ctx, o); err != nil {
			return err
		}
		deleted = true
		return nil
	})
	switch {
	case err != nil:
		return nil, err
	case deleted:
		return success, nil
	}

	var pdbName string
	updateDeleteOptions := false
	var multiple *metav1.Status
	err = func() error {
		pdbs, err := e.podBudgets(ctx, pod)
		if err != nil {
			return err
		}
		if len(pdbs) > 1 {
			multiple = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
				Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."}
			return nil
		}
		if len(pdbs) == 0 {
			return nil
		}
		pdb := &pdbs[0]
		pdbName = pdb.Name
		// An unready pod may go without taking from the budget when the
		// budget says so, or when the application is healthy anyway.
		if !podReady(pod) {
			if p := pdb.Spec.UnhealthyPodEvictionPolicy; p != nil && *p == policyv1.AlwaysAllow {
				updateDeleteOptions = true
				return nil
			}
			if pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0 {
				updateDeleteOptions = true
				return nil
			}
		}
		refresh := false
		return retry(ctx, apierrors.IsConflict, func() error {
			if refresh {
				pdb = &policyv1.PodDisruptionBudget{}
				if err := e.pdbs.Store.Get(ctx, e.pdbs.Key(e.wr.prefix, e.namespace, pdbName), store.GetOptions{}, pdb); err != nil {
					return err
				}
			}
			if err := e.checkAndDecrement(ctx, pod.Name, *pdb); err != nil {
				refresh = true
				return err
			}
			return nil
		})
	}()
	if err != nil {
		return nil, err
	}
	if multiple != nil {
		return multiple, nil
	}
	o := opts
	if updateDeleteOptions {
		o = withRV(opts, pod.ResourceVersion)
	}
	if err := e.deletePod(ctx, o); err != nil {
		if apierrors.IsConflict(err) && updateDeleteOptions && rvUnset(opts) {
			return nil, budgetInProgress(pdbName)
		}
		return nil, err
	}
	return success, nil
}

// canIgnorePDB: pods that are done, not started or already going do not
// count against a budget.
func canIgnorePDB(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed, corev1.PodPending:
		return true
	}
	return pod.DeletionTimestamp != nil
}

func shouldEnforceResourceVersion(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed:
		return false
	}
	return pod.DeletionTimestamp == nil
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// budgetInProgress is kube's createTooManyRequestsError.
func budgetInProgress(name string) error {
	err := apierrors.NewTooManyRequests(pdbViolationMessage, 10)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type: policyv1.DisruptionBudgetCause, Message: fmt.Sprintf("The disruption budget %s is still being processed by the server.", name)})
	return err
}

func budgetForbidden(name, reason, cause string) error {
	err := apierrors.NewForbidden(pdbGR, name, errors.New(reason))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type: policyv1.DisruptionBudgetCause, Message: fmt.Sprintf("The disruption budget %s does not allow evicting pods currently: %s", name, cause)})
	return err
}

// checkAndDecrement is kube's: the budget must be current and allow a
// disruption; the eviction takes one, and records the pod, with a write
// on the budget's resourceVersion.
func (e *eviction) checkAndDecrement(ctx context.Context, podName string, pdb policyv1.PodDisruptionBudget) error {
	if pdb.Status.ObservedGeneration < pdb.Generation {
		return budgetInProgress(pdb.Name)
	}
	if pdb.Status.DisruptionsAllowed < 0 {
		return budgetForbidden(pdb.Name, "pdb disruptions allowed is negative", "pdb disruptions allowed is negative")
	}
	if len(pdb.Status.DisruptedPods) > maxDisruptedPods {
		return budgetForbidden(pdb.Name, "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
			"too many pending evictions not confirmed by PDB controller")
	}
	if pdb.Status.DisruptionsAllowed == 0 {
		err := apierrors.NewTooManyRequests(pdbViolationMessage, 0)
		cond := meta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
		var msg string
		switch {
		case cond != nil && cond.Status == metav1.ConditionFalse && cond.Message != "" && cond.Reason == policyv1.SyncFailedReason:
			msg = fmt.Sprintf("The disruption budget %s does not allow evicting pods currently because it failed sync: %s", pdb.Name, cond.Message)
		case pdb.Status.CurrentHealthy <= pdb.Status.DesiredHealthy:
			msg = fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy)
		case cond != nil && cond.Status == metav1.ConditionFalse && cond.Message != "":
			msg = fmt.Sprintf("The disruption budget %s does not allow evicting pods currently (%s): %s", pdb.Name, cond.Reason, cond.Message)
		default:
			msg = fmt.Sprintf("The disruption budget %s does not allow evicting pods currently", pdb.Name)
		}
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause, Message: msg})
		return err
	}
	pdb.Status.DisruptionsAllowed--
	if pdb.Status.DisruptionsAllowed == 0 {
		if pdb.Status.Conditions == nil {
			pdb.Status.Conditions = []metav1.Condition{}
		}
		meta.SetStatusCondition(&pdb.Status.Conditions, metav1.Condition{
			Type: policyv1.DisruptionAllowedCondition, Reason: policyv1.InsufficientPodsReason,
			Status: metav1.ConditionFalse, ObservedGeneration: pdb.Status.ObservedGeneration,
		})
	}
	if e.dryRun {
		return nil
	}
	if pdb.Status.DisruptedPods == nil {
		pdb.Status.DisruptedPods = map[string]metav1.Time{}
	}
	pdb.Status.DisruptedPods[podName] = metav1.Time{Time: time.Now()}
	status := pdb.Status
	rv := pdb.ResourceVersion
	out := &policyv1.PodDisruptionBudget{}
	return e.pdbs.Store.GuaranteedUpdate(ctx, e.pdbs.Key(e.wr.prefix, e.namespace, pdb.Name), out, false,
		&store.Preconditions{ResourceVersion: &rv},
		func(in runtime.Object, _ store.ResponseMeta) (runtime.Object, *time.Duration, error) {
			cur := in.(*policyv1.PodDisruptionBudget).DeepCopy()
			if cur.ResourceVersion != rv {
				return nil, nil, apierrors.NewConflict(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudgets"}, cur.Name,
					errors.New("the object has been modified; please apply your changes to the latest version and try again"))
			}
			cur.Status = status
			return cur, nil, nil
		})
}

// podBudgets are the budgets of the pod's namespace whose selector
// matches it; a selector that does not parse matches nothing.
func (e *eviction) podBudgets(ctx context.Context, pod *corev1.Pod) ([]policyv1.PodDisruptionBudget, error) {
	if e.pdbs == nil || e.pdbs.Store == nil {
		return nil, nil
	}
	list := &policyv1.PodDisruptionBudgetList{}
	if err := e.pdbs.Store.GetList(ctx, e.pdbs.CollectionKey(e.wr.prefix, pod.Namespace), store.ListOptions{Recursive: true}, list); err != nil {
		return nil, err
	}
	var out []policyv1.PodDisruptionBudget
	for _, pdb := range list.Items {
		if pdb.Namespace != pod.Namespace {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		out = append(out, pdb)
	}
	return out, nil
}

// deletePod is kube's addConditionAndDeletePod: the pod gets the
// DisruptionTarget condition (checking the delete's preconditions with
// kube's messages), then the pod's delete runs with opts.
func (e *eviction) deletePod(ctx context.Context, opts *metav1.DeleteOptions) error {
	key := e.podKey()
	live := &corev1.Pod{}
	if e.dryRun {
		if err := e.pods.Store.Get(ctx, key, store.GetOptions{}, live); err != nil {
			return err
		}
	} else {
		err := e.pods.Store.GuaranteedUpdate(ctx, key, live, false, nil, func(in runtime.Object, _ store.ResponseMeta) (runtime.Object, *time.Duration, error) {
			pod := in.(*corev1.Pod).DeepCopy()
			if p := opts.Preconditions; p != nil {
				if uid := p.UID; uid != nil && *uid != "" && *uid != pod.UID {
					return nil, nil, apierrors.NewConflict(podConflicts, pod.Name, fmt.Errorf(
						"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *uid, pod.UID))
				}
				if rv := p.ResourceVersion; rv != nil && *rv != "" && *rv != pod.ResourceVersion {
					return nil, nil, apierrors.NewConflict(podConflicts, pod.Name, fmt.Errorf(
						"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *rv, pod.ResourceVersion))
				}
			}
			setPodCondition(&pod.Status, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
				Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting"})
			return pod, nil, nil
		})
		if err != nil {
			return err
		}
		if !rvUnset(opts) {
			opts = withRV(opts, live.ResourceVersion)
		}
	}
	_, err := deleteObject(ctx, e.pods, key, live, opts, e.dryRun)
	return err
}

// setPodCondition is kube's UpdatePodCondition.
func setPodCondition(st *corev1.PodStatus, c corev1.PodCondition) {
	c.LastTransitionTime = metav1.Now()
	for i := range st.Conditions {
		old := &st.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		if c.Status == old.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		*old = c
		return
	}
	st.Conditions = append(st.Conditions, c)
}

// Package resourcequota is kube's ResourceQuota admission plugin: a
// create that would take a namespace's usage past a ResourceQuota's hard
// limits is refused, and an admitted one is charged to status.used with a
// compare-and-swap on the quota before the object is stored, so that
// concurrent creates never exceed a quota and no charge is lost.
// Releases (deletes) are the quota controller's: it recalculates.
package resourcequota

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kpipe/kpipe/internal/admission"
	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/quota"
	"github.com/kpipe/kpipe/internal/storage/store"
)

// Name is the plugin's name in the validating-admission list.
const Name = "ResourceQuota"

// Register adds the plugin to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindValidatingAdmission,
		Description: "refuses creates that exceed a ResourceQuota and charges admitted ones to its status.used.",
		New:         func(any) (any, error) { return &Plugin{}, nil },
	})
}

// Plugin is the admission plugin.
type Plugin struct {
	objects *admission.Objects
	quotas  *api.Resource
}

var _ admission.Validator = (*Plugin)(nil)

// Provision implements pipeline.Provisioner.
func (p *Plugin) Provision(env *pipeline.Env) error {
	o, err := admission.NewObjects(env)
	if err != nil {
		return err
	}
	p.objects = o
	p.quotas, err = o.Resource("", "v1", "resourcequotas")
	return err
}

// Handles implements admission.Handles: as kube's evaluators, only
// creates are charged.
func (*Plugin) Handles(op string) bool { return op == admission.Create }

// Validate implements admission.Validator.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	res := a.Op.Resource
	if a.Op.Subresource != "" || !res.Namespaced || a.Info.Namespace == "" || a.Op.Object == nil {
		return nil
	}
	// Which quotas apply comes from the watch cache, as kube's evaluator
	// reads its informer; each one is checked and charged on its live
	// copy (charge).
	list := &corev1.ResourceQuotaList{}
	if err := p.objects.ListCached(ctx, p.quotas, a.Info.Namespace, list); err != nil {
		return err
	}
	if len(list.Items) == 0 {
		return nil
	}
	usage := quota.Usage(res, a.Op.Object)
	for i := range list.Items {
		q := &list.Items[i]
		if !quota.Matches(q, res, a.Op.Object) {
			continue
		}
		if err := p.charge(ctx, a, q, usage); err != nil {
			return err
		}
	}
	return nil
}

// errNothing ends a compare-and-swap that found nothing to charge.
var errNothing = errors.New("nothing to charge")

// charge checks usage against quota q and adds it to status.used, on the
// quota as stored: a concurrent charge makes the swap fail and the check
// run again on the fresh quota.
func (p *Plugin) charge(ctx context.Context, a *admission.Attributes, q *corev1.ResourceQuota, usage corev1.ResourceList) error {
	var denied error
	check := func(cur *corev1.ResourceQuota) (corev1.ResourceList, error) {
		restricted := quota.NamesOf(quota.Mask(cur.Status.Hard, quota.Names(a.Op.Resource)))
		if len(restricted) == 0 {
			return nil, errNothing
		}
		if err := quota.Constraints(restricted, a.Op.Object); err != nil {
			return nil, admission.NewForbidden(a, fmt.Errorf("failed quota: %s: %v", cur.Name, err))
		}
		for _, n := range restricted {
			if _, ok := cur.Status.Used[n]; !ok {
				return nil, admission.NewForbidden(a, fmt.Errorf("status unknown for quota: %s, resources: %s", cur.Name, quota.NamesString(restricted)))
			}
		}
		requested := quota.RemoveZeros(quota.Mask(usage, restricted))
		if len(requested) == 0 {
			return nil, errNothing
		}
		used := quota.Add(cur.Status.Used, requested)
		if exceeded := quota.Exceeded(quota.Mask(used, quota.NamesOf(requested)), cur.Status.Hard); len(exceeded) > 0 {
			return nil, admission.NewForbidden(a, fmt.Errorf("exceeded quota: %s, requested: %s, used: %s, limited: %s",
				cur.Name, quota.String(quota.Mask(requested, exceeded)), quota.String(quota.Mask(cur.Status.Used, exceeded)), quota.String(quota.Mask(cur.Status.Hard, exceeded))))
		}
		return used, nil
	}
	if a.DryRun() {
		// A dry run is checked and never charged.
		_, err := check(q)
		if errors.Is(err, errNothing) {
			return nil
		}
		return err
	}
	out := &corev1.ResourceQuota{}
	var err error
	for attempt := 0; attempt < maxSwaps; attempt++ {
		err = p.swap(ctx, q, out, check, &denied)
		if !apierrors.IsConflict(err) || denied != nil {
			break
		}
	}
	switch {
	case denied != nil && errors.Is(denied, errNothing):
		return nil
	case denied != nil:
		return denied
	case apierrors.IsNotFound(err):
		return nil // the quota went away meanwhile
	}
	return err
}

// maxSwaps bounds the rounds of compare-and-swap retries under heavy
// contention (each round already retries inside the store).
const maxSwaps = 20

func (p *Plugin) swap(ctx context.Context, q, out *corev1.ResourceQuota, check func(*corev1.ResourceQuota) (corev1.ResourceList, error), denied *error) error {
	return p.quotas.Store.GuaranteedUpdate(ctx, p.objects.Key(p.quotas, q.Namespace, q.Name), out, false, nil,
		func(current runtime.Object, _ store.ResponseMeta) (runtime.Object, *time.Duration, error) {
			cur := current.(*corev1.ResourceQuota)
			used, err := check(cur)
			if err != nil {
				*denied = err
				return nil, nil, err
			}
			for n, v := range used {
				if cur.Status.Used == nil {
					cur.Status.Used = corev1.ResourceList{}
				}
				cur.Status.Used[n] = v
			}
			return cur, nil, nil
		})
}

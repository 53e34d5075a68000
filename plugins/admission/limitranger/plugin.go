// Package limitranger is kube's LimitRanger admission plugin: containers
// of new pods get default requests and limits from their namespace's
// LimitRanges, and pods, containers and persistent volume claims must
// keep within the ranges' min, max and maxLimitRequestRatio.
package limitranger

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kpipe/kpipe/internal/admission"
	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the plugin's name in both admission lists.
const Name = "LimitRanger"

// Register adds the plugin to both admission lists: defaults are set in
// mutating-admission and limits enforced in validating-admission, as kube
// runs its Admit and Validate phases.
func Register(r *pipeline.Registry) {
	for _, k := range []pipeline.Kind{pipeline.KindMutatingAdmission, pipeline.KindValidatingAdmission} {
		r.MustRegister(pipeline.Plugin{
			Name:        Name,
			Kind:        k,
			Description: "defaults container resources from LimitRanges and enforces their min, max and ratio.",
			New:         func(any) (any, error) { return &Plugin{}, nil },
		})
	}
}

// Plugin is the admission plugin.
type Plugin struct {
	objects *admission.Objects
	ranges  *api.Resource
}

var (
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
)

// Provision implements pipeline.Provisioner.
func (p *Plugin) Provision(env *pipeline.Env) error {
	o, err := admission.NewObjects(env)
	if err != nil {
		return err
	}
	p.objects = o
	p.ranges, err = o.Resource("", "v1", "limitranges")
	return err
}

// Handles implements admission.Handles.
func (*Plugin) Handles(op string) bool { return op == admission.Create || op == admission.Update }

// Admit implements admission.Mutator.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	return p.run(ctx, a, func(lr *corev1.LimitRange, obj runtime.Object) error {
		if pod, ok := obj.(*corev1.Pod); ok {
			mergePodDefaults(pod, containerDefaults(lr))
		}
		return nil
	})
}

// Validate implements admission.Validator.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	return p.run(ctx, a, func(lr *corev1.LimitRange, obj runtime.Object) error {
		switch o := obj.(type) {
		case *corev1.Pod:
			return validatePod(lr, o)
		case *corev1.PersistentVolumeClaim:
			return validateClaim(lr, o)
		}
		return nil
	})
}

// run applies fn with each of the namespace's LimitRanges to the pods
// being created and the claims being created or updated.
func (p *Plugin) run(ctx context.Context, a *admission.Attributes, fn func(*corev1.LimitRange, runtime.Object) error) error {
	if a.Op.Subresource != "" || a.Op.Resource.GroupVersion.Group != "" || a.Op.Object == nil {
		return nil
	}
	switch a.Op.Resource.Name {
	case "pods":
		if a.Operation != admission.Create {
			return nil
		}
	case "persistentvolumeclaims":
	default:
		return nil
	}
	if a.Op.Old != nil {
		// An object being deleted is left alone, as kube does.
		if m, err := meta.Accessor(a.Op.Old); err == nil && m.GetDeletionTimestamp() != nil {
			return nil
		}
	}
	// From the cache, as kube's lister; none there is checked live, since
	// a LimitRange created a moment ago may not have reached it.
	list := &corev1.LimitRangeList{}
	err := p.objects.ListCached(ctx, p.ranges, a.Info.Namespace, list)
	if err == nil && len(list.Items) == 0 {
		err = p.objects.List(ctx, p.ranges, a.Info.Namespace, list)
	}
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("unable to %s %v at this time because there was an error enforcing limit ranges", a.Operation, a.Op.Resource.GroupVersion.WithResource(a.Op.Resource.Name)))
	}
	for i := range list.Items {
		if err := fn(&list.Items[i], a.Op.Object); err != nil {
			return admission.NewForbidden(a, err)
		}
	}
	return nil
}

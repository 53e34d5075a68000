// Package priority is kube's Priority admission plugin: a new pod's
// priorityClassName resolves to its integer priority and preemption
// policy (the globalDefault class, or 0, when it names none), and only
// one PriorityClass may be the global default.
package priority

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kpipe/kpipe/internal/admission"
	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the plugin's name in both admission lists.
const Name = "Priority"

// Register adds the plugin to both admission lists: pods are resolved in
// mutating-admission, PriorityClasses checked in validating-admission.
func Register(r *pipeline.Registry) {
	for _, k := range []pipeline.Kind{pipeline.KindMutatingAdmission, pipeline.KindValidatingAdmission} {
		r.MustRegister(pipeline.Plugin{
			Name:        Name,
			Kind:        k,
			Description: "resolves a pod's priorityClassName to its priority; allows one default PriorityClass.",
			New:         func(any) (any, error) { return &Plugin{}, nil },
		})
	}
}

// Plugin is the admission plugin.
type Plugin struct {
	objects *admission.Objects
	classes *api.Resource
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
	p.classes, err = o.Resource("scheduling.k8s.io", "v1", "priorityclasses")
	return err
}

// Handles implements admission.Handles.
func (*Plugin) Handles(op string) bool { return op != admission.Connect }

// Admit implements admission.Mutator.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if !a.Is("", "pods") {
		return nil
	}
	pod, ok := a.Op.Object.(*corev1.Pod)
	if !ok && a.Operation != admission.Delete {
		return apierrors.NewBadRequest("resource was marked with kind Pod but was unable to be converted")
	}
	switch a.Operation {
	case admission.Update:
		// The priority is kept from the live pod.
		if old, ok := a.Op.Old.(*corev1.Pod); ok {
			if pod.Spec.Priority == nil && old.Spec.Priority != nil {
				pod.Spec.Priority = old.Spec.Priority
			}
			if pod.Spec.PreemptionPolicy == nil && old.Spec.PreemptionPolicy != nil {
				pod.Spec.PreemptionPolicy = old.Spec.PreemptionPolicy
			}
		}
	case admission.Create:
		return p.admitPod(ctx, a, pod)
	}
	return nil
}

func (p *Plugin) admitPod(ctx context.Context, a *admission.Attributes, pod *corev1.Pod) error {
	name, value, policy, err := p.establish(ctx, a, pod.Spec.PriorityClassName)
	if err != nil {
		return err
	}
	pod.Spec.PriorityClassName = name
	if pod.Spec.Priority != nil && *pod.Spec.Priority != value {
		return admission.NewForbidden(a, fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *pod.Spec.Priority, value))
	}
	pod.Spec.Priority = &value
	if policy != nil {
		if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy != *policy {
			return admission.NewForbidden(a, fmt.Errorf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *pod.Spec.PreemptionPolicy, *policy))
		}
		pp := *policy
		pod.Spec.PreemptionPolicy = &pp
	}
	return nil
}

// establish resolves a class name, or the default class when name is "".
func (p *Plugin) establish(ctx context.Context, a *admission.Attributes, name string) (string, int32, *corev1.PreemptionPolicy, error) {
	if name == "" {
		def, err := p.defaultClass(ctx, false)
		if err != nil {
			return "", 0, nil, fmt.Errorf("error occurred while retrieving default priority class: %w", err)
		}
		if def == nil {
			lower := corev1.PreemptLowerPriority
			return "", 0, &lower, nil
		}
		return def.Name, def.Value, def.PreemptionPolicy, nil
	}
	pc := &schedulingv1.PriorityClass{}
	// From the cache, as kube's lister; a miss is checked live.
	err := p.objects.GetCached(ctx, p.classes, "", name, pc)
	if apierrors.IsNotFound(err) {
		err = p.objects.Get(ctx, p.classes, "", name, pc)
	}
	if err != nil {
		if apierrors.IsNotFound(err) {
			return "", 0, nil, admission.NewForbidden(a, fmt.Errorf("no PriorityClass with name %v was found", name))
		}
		return "", 0, nil, fmt.Errorf("failed to resolve PriorityClass with name %s: %w", name, err)
	}
	return name, pc.Value, pc.PreemptionPolicy, nil
}

// defaultClass is the global default with the lowest value, as kube picks.
// A pod's default comes from the cache, as kube's lister gives it; a
// class claiming to be the default is checked against a consistent list,
// so one created just before it is seen (kube's lister may miss it).
func (p *Plugin) defaultClass(ctx context.Context, consistent bool) (*schedulingv1.PriorityClass, error) {
	list := &schedulingv1.PriorityClassList{}
	read := p.objects.ListCached
	if consistent {
		read = p.objects.List
	}
	if err := read(ctx, p.classes, "", list); err != nil {
		return nil, err
	}
	var def *schedulingv1.PriorityClass
	for i := range list.Items {
		pc := &list.Items[i]
		if pc.GlobalDefault && (def == nil || def.Value > pc.Value) {
			def = pc
		}
	}
	return def, nil
}

// systemClasses may not be deleted, as kube's PriorityClass storage says.
var systemClasses = map[string]bool{"system-node-critical": true, "system-cluster-critical": true}

// Validate implements admission.Validator.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if !a.Is("scheduling.k8s.io", "priorityclasses") {
		return nil
	}
	if a.Operation == admission.Delete {
		if systemClasses[a.Info.Name] {
			return apierrors.NewForbidden(a.Op.Resource.GroupResource(), a.Info.Name, errors.New("this is a system priority class and cannot be deleted"))
		}
		return nil
	}
	pc, ok := a.Op.Object.(*schedulingv1.PriorityClass)
	if !ok {
		return apierrors.NewBadRequest("resource was marked with kind PriorityClass but was unable to be converted")
	}
	if !pc.GlobalDefault {
		return nil
	}
	def, err := p.defaultClass(ctx, true)
	if err != nil {
		return fmt.Errorf("failed to get default priority class: %v", err)
	}
	if def != nil && (a.Operation == admission.Create || def.Name != pc.Name) {
		return admission.NewForbidden(a, fmt.Errorf("PriorityClass %v is already marked as default. Only one default can exist", def.Name))
	}
	return nil
}

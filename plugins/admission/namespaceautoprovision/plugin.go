// Package namespaceautoprovision is kube's NamespaceAutoProvision
// admission plugin: a create in a namespace that does not exist creates
// the namespace first. Off by default.
package namespaceautoprovision

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpipe/kpipe/internal/admission"
	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the plugin's name in the mutating-admission list.
const Name = "NamespaceAutoProvision"

// Register adds the plugin to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindMutatingAdmission,
		Description: "creates the namespace of a create when it does not exist.",
		New:         func(any) (any, error) { return &Plugin{}, nil },
	})
}

// Plugin is the admission plugin.
type Plugin struct {
	objects    *admission.Objects
	namespaces *api.Resource
	client     admission.Client
}

var (
	_ admission.Mutator     = (*Plugin)(nil)
	_ pipeline.HookProvider = (*Plugin)(nil)
)

// Provision implements pipeline.Provisioner.
func (p *Plugin) Provision(env *pipeline.Env) error {
	o, err := admission.NewObjects(env)
	if err != nil {
		return err
	}
	p.objects = o
	p.namespaces, err = o.Resource("", "v1", "namespaces")
	return err
}

// PostStartHooks implements pipeline.HookProvider: the namespace is
// created through the loopback client, so it gets the whole create path.
func (p *Plugin) PostStartHooks() []pipeline.NamedHook {
	return []pipeline.NamedHook{p.client.Hook("admission/" + Name)}
}

// Handles implements admission.Handles.
func (*Plugin) Handles(op string) bool { return op == admission.Create }

// Admit implements admission.Mutator.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	// A dry run has no side effects.
	if a.DryRun() || a.Info.Namespace == "" || !a.Op.Resource.Namespaced || a.Op.Resource.Kind == "Namespace" {
		return nil
	}
	err := p.objects.Get(ctx, p.namespaces, "", a.Info.Namespace, &corev1.Namespace{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return admission.NewForbidden(a, err)
	}
	cs := p.client.Get()
	if cs == nil {
		return admission.NewForbidden(a, errors.New("not yet ready to handle request"))
	}
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: a.Info.Namespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return admission.NewForbidden(a, err)
	}
	return nil
}

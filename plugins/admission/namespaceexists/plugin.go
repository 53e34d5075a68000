// Package namespaceexists is kube's NamespaceExists admission plugin:
// writes to namespaced objects in a namespace that does not exist are
// refused with the namespace's NotFound. Off by default (NamespaceLifecycle
// covers it).
package namespaceexists

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kpipe/kpipe/internal/admission"
	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the plugin's name in the validating-admission list.
const Name = "NamespaceExists"

// Register adds the plugin to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindValidatingAdmission,
		Description: "refuses writes to objects in namespaces that do not exist.",
		New:         func(any) (any, error) { return &Plugin{}, nil },
	})
}

// Plugin is the admission plugin.
type Plugin struct {
	objects    *admission.Objects
	namespaces *api.Resource
}

var _ admission.Validator = (*Plugin)(nil)

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

// Handles implements admission.Handles.
func (*Plugin) Handles(op string) bool { return op != admission.Connect }

// Validate implements admission.Validator.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Info.Namespace == "" || !a.Op.Resource.Namespaced || a.Op.Resource.Kind == "Namespace" {
		return nil
	}
	err := p.objects.GetCached(ctx, p.namespaces, "", a.Info.Namespace, &corev1.Namespace{})
	if apierrors.IsNotFound(err) { // too new for the cache, perhaps
		err = p.objects.Get(ctx, p.namespaces, "", a.Info.Namespace, &corev1.Namespace{})
	}
	if err == nil || apierrors.IsNotFound(err) {
		return err
	}
	return apierrors.NewInternalError(err)
}

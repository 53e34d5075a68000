// Package defaultingressclass is kube's DefaultIngressClass admission
// plugin: a new Ingress that names no class, neither in
// spec.ingressClassName nor in the deprecated kubernetes.io/ingress.class
// annotation, gets the IngressClass annotated
// ingressclass.kubernetes.io/is-default-class: "true" (the newest one,
// when several are).
package defaultingressclass

import (
	"context"
	"fmt"
	"sort"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kpipe/kpipe/internal/admission"
	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the plugin's name in the mutating-admission list.
const Name = "DefaultIngressClass"

// annotationIngressClass is the deprecated class annotation: an Ingress
// carrying it keeps it and gets no default.
const annotationIngressClass = "kubernetes.io/ingress.class"

// Register adds the plugin to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindMutatingAdmission,
		Description: "sets the default IngressClass on new Ingresses that name no class.",
		New:         func(any) (any, error) { return &Plugin{}, nil },
	})
}

// Plugin is the admission plugin.
type Plugin struct {
	objects *admission.Objects
	classes *api.Resource
}

var _ admission.Mutator = (*Plugin)(nil)

// Provision implements pipeline.Provisioner.
func (p *Plugin) Provision(env *pipeline.Env) error {
	o, err := admission.NewObjects(env)
	if err != nil {
		return err
	}
	p.objects = o
	p.classes, err = o.Resource("networking.k8s.io", "v1", "ingressclasses")
	return err
}

// Handles implements admission.Handles: creates only, as kube's.
func (*Plugin) Handles(op string) bool { return op == admission.Create }

// Admit implements admission.Mutator.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if !a.Is("networking.k8s.io", "ingresses") {
		return nil
	}
	ing, ok := a.Op.Object.(*networkingv1.Ingress)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("Expected Ingress resource, got: %v", a.Op.Resource.GroupVersionKind()))
	}
	if ing.Spec.IngressClassName != nil {
		return nil
	}
	if _, set := ing.Annotations[annotationIngressClass]; set {
		return nil
	}
	// From the cache, as kube's lister.
	list := &networkingv1.IngressClassList{}
	if err := p.objects.ListCached(ctx, p.classes, "", list); err != nil {
		return admission.NewForbidden(a, err)
	}
	if def := defaultClass(list.Items); def != nil {
		name := def.Name
		ing.Spec.IngressClassName = &name
	}
	return nil
}

// defaultClass is the newest class marked default, the first by name
// among those created in the same instant, or nil.
func defaultClass(classes []networkingv1.IngressClass) *networkingv1.IngressClass {
	var defs []*networkingv1.IngressClass
	for i := range classes {
		if classes[i].Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true" {
			defs = append(defs, &classes[i])
		}
	}
	if len(defs) == 0 {
		return nil
	}
	sort.Slice(defs, func(i, j int) bool {
		ti, tj := defs[i].CreationTimestamp.UnixNano(), defs[j].CreationTimestamp.UnixNano()
		if ti == tj {
			return defs[i].Name < defs[j].Name
		}
		return ti > tj
	})
	return defs[0]
}

// Package alwayspullimages is kube's AlwaysPullImages admission plugin:
// every container of a new pod, or of an update bringing a new image, pulls
// its image always, so a node's cached image is not used without the
// credentials to pull it.
package alwayspullimages

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kpipe/kpipe/internal/admission"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the plugin's name in both admission lists.
const Name = "AlwaysPullImages"

// Register adds the plugin to both admission lists: it sets the policy
// in mutating-admission and checks nothing changed it in validating.
func Register(r *pipeline.Registry) {
	for _, k := range []pipeline.Kind{pipeline.KindMutatingAdmission, pipeline.KindValidatingAdmission} {
		r.MustRegister(pipeline.Plugin{
			Name:        Name,
			Kind:        k,
			Description: "sets imagePullPolicy Always on every container of new pods.",
			New:         func(any) (any, error) { return &Plugin{}, nil },
		})
	}
}

// Plugin is the admission plugin.
type Plugin struct{}

var (
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
	_ admission.Handles   = (*Plugin)(nil)
)

// Handles implements admission.Handles.
func (*Plugin) Handles(op string) bool { return op == admission.Create || op == admission.Update }

// Admit implements admission.Mutator.
func (*Plugin) Admit(_ context.Context, a *admission.Attributes) error {
	pod, err := podOf(a)
	if pod == nil {
		return err
	}
	visit(&pod.Spec, func(c *corev1.Container, _ *field.Path) { c.ImagePullPolicy = corev1.PullAlways })
	for i := range pod.Spec.Volumes {
		if img := pod.Spec.Volumes[i].Image; img != nil {
			img.PullPolicy = corev1.PullAlways
		}
	}
	return nil
}

// Validate implements admission.Validator.
func (*Plugin) Validate(_ context.Context, a *admission.Attributes) error {
	pod, err := podOf(a)
	if pod == nil {
		return err
	}
	var errs []error
	visit(&pod.Spec, func(c *corev1.Container, p *field.Path) {
		if c.ImagePullPolicy != corev1.PullAlways {
			errs = append(errs, field.NotSupported(p.Child("imagePullPolicy"), c.ImagePullPolicy, []string{string(corev1.PullAlways)}))
		}
	})
	for i, v := range pod.Spec.Volumes {
		if v.Image != nil && v.Image.PullPolicy != corev1.PullAlways {
			errs = append(errs, field.NotSupported(field.NewPath("spec", "volumes").Index(i).Child("image", "pullPolicy"), v.Image.PullPolicy, []string{string(corev1.PullAlways)}))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return admission.NewForbidden(a, errors.Join(errs...))
}

// podOf returns the pod to act on, nil for anything else and for updates
// bringing no new image.
func podOf(a *admission.Attributes) (*corev1.Pod, error) {
	if !a.Is("", "pods") {
		return nil, nil
	}
	pod, ok := a.Op.Object.(*corev1.Pod)
	if !ok {
		return nil, apierrors.NewBadRequest("Resource was marked with kind Pod but was unable to be converted")
	}
	if a.Operation == admission.Update {
		if old, ok := a.Op.Old.(*corev1.Pod); ok && !newImage(pod, old) {
			return nil, nil
		}
	}
	return pod, nil
}

func newImage(pod, old *corev1.Pod) bool {
	had := map[string]bool{}
	visit(&old.Spec, func(c *corev1.Container, _ *field.Path) { had[c.Image] = true })
	found := false
	visit(&pod.Spec, func(c *corev1.Container, _ *field.Path) { found = found || !had[c.Image] })
	return found
}

// visit calls fn on every init, regular and ephemeral container.
func visit(spec *corev1.PodSpec, fn func(c *corev1.Container, p *field.Path)) {
	p := field.NewPath("spec")
	for i := range spec.InitContainers {
		fn(&spec.InitContainers[i], p.Child("initContainers").Index(i))
	}
	for i := range spec.Containers {
		fn(&spec.Containers[i], p.Child("containers").Index(i))
	}
	for i := range spec.EphemeralContainers {
		fn((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon), p.Child("ephemeralContainers").Index(i))
	}
}

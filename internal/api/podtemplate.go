package api

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// podTemplateStrategy is kube's PodTemplate strategy: generation 1 on
// create and bumped when the template changes (a PodTemplate has no spec),
// and the pod template's warnings on create and on an update that moved
// the generation.
type podTemplateStrategy struct{ Generic }

var _ Warner = podTemplateStrategy{}

var podTemplatePath = field.NewPath("template")

func newPodTemplateStrategy() podTemplateStrategy {
	return podTemplateStrategy{Generic{
		Create: func(obj runtime.Object) { obj.(*corev1.PodTemplate).Generation = 1 },
		Update: func(obj, old runtime.Object) {
			t, o := obj.(*corev1.PodTemplate), old.(*corev1.PodTemplate)
			t.Generation = o.Generation
			if !equality.Semantic.DeepEqual(t.Template, o.Template) {
				t.Generation = o.Generation + 1
			}
		},
	}}
}

// WarningsOnCreate implements Warner.
func (podTemplateStrategy) WarningsOnCreate(obj runtime.Object) []string {
	return podTemplateWarnings(podTemplatePath, &obj.(*corev1.PodTemplate).Template)
}

// WarningsOnUpdate implements Warner.
func (podTemplateStrategy) WarningsOnUpdate(obj, old runtime.Object) []string {
	t := obj.(*corev1.PodTemplate)
	if t.Generation == old.(*corev1.PodTemplate).Generation {
		return nil
	}
	return podTemplateWarnings(podTemplatePath, &t.Template)
}

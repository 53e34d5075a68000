package api

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// workloadStrategy is the apps/v1 strategies (Generic with a status and
// generation) with kube's warnings: the pod template's, on create and on
// an update that changes the spec.
type workloadStrategy struct {
	Generic
	// warnings are the type's own, on create (old nil) and update.
	warnings func(obj, old runtime.Object) []string
}

var _ Warner = workloadStrategy{}

// WarningsOnCreate implements Warner.
func (s workloadStrategy) WarningsOnCreate(obj runtime.Object) []string { return s.warnings(obj, nil) }

// WarningsOnUpdate implements Warner.
func (s workloadStrategy) WarningsOnUpdate(obj, old runtime.Object) []string {
	return s.warnings(obj, old)
}

func newWorkloadStrategy(warnings func(obj, old runtime.Object) []string) workloadStrategy {
	return workloadStrategy{Generic: Generic{HasStatus: true, Generation: true}, warnings: warnings}
}

var templatePath = field.NewPath("spec", "template")

// templateWarnings is kube's Deployment, ReplicaSet and DaemonSet rule:
// the template's warnings on create, and on an update only when the
// generation moved (the spec changed); withName adds the name warning on
// create (not for DaemonSets).
func templateWarnings(withName bool, template func(runtime.Object) (string, int64, *corev1.PodTemplateSpec)) func(obj, old runtime.Object) []string {
	return func(obj, old runtime.Object) []string {
		name, gen, t := template(obj)
		var ws []string
		if old == nil {
			if withName {
				ws = nameWarnings(name)
			}
		} else if _, oldGen, _ := template(old); gen == oldGen {
			return nil
		}
		return append(ws, podTemplateWarnings(templatePath, t)...)
	}
}

var (
	deploymentStrategy = newWorkloadStrategy(templateWarnings(true, func(obj runtime.Object) (string, int64, *corev1.PodTemplateSpec) {
		d := obj.(*appsv1.Deployment)
		return d.Name, d.Generation, &d.Spec.Template
	}))
	replicaSetStrategy = newWorkloadStrategy(templateWarnings(true, func(obj runtime.Object) (string, int64, *corev1.PodTemplateSpec) {
		r := obj.(*appsv1.ReplicaSet)
		return r.Name, r.Generation, &r.Spec.Template
	}))
	daemonSetStrategy = newWorkloadStrategy(templateWarnings(false, func(obj runtime.Object) (string, int64, *corev1.PodTemplateSpec) {
		d := obj.(*appsv1.DaemonSet)
		return d.Name, d.Generation, &d.Spec.Template
	}))
	statefulSetStrategy = newWorkloadStrategy(statefulSetWarnings)
)

// statefulSetWarnings is kube's StatefulSet rule: the template's warnings
// (on update only when the spec changed), and always the claim templates'
// fractional storage sizes and a negative revisionHistoryLimit. On update
// kube names the claim spec "Spec", and so does this.
func statefulSetWarnings(obj, old runtime.Object) []string {
	s := obj.(*appsv1.StatefulSet)
	var ws []string
	if old == nil || s.Generation != old.(*appsv1.StatefulSet).Generation {
		ws = podTemplateWarnings(templatePath, &s.Spec.Template)
	}
	for i, pvc := range s.Spec.VolumeClaimTemplates {
		p := field.NewPath("spec", "volumeClaimTemplates").Index(i)
		if old != nil {
			p = p.Child("Spec")
		}
		ws = append(ws, claimSpecWarnings(p, &pvc.Spec)...)
	}
	if s.Spec.RevisionHistoryLimit != nil && *s.Spec.RevisionHistoryLimit < 0 {
		ws = append(ws, "spec.revisionHistoryLimit: a negative value retains all historical revisions; a value >= 0 is recommended")
	}
	return ws
}

// claimSpecWarnings is kube's GetWarningsForPersistentVolumeClaimSpec: a
// storage request or limit that is not a whole number of bytes.
func claimSpecWarnings(p *field.Path, spec *corev1.PersistentVolumeClaimSpec) []string {
	var ws []string
	for _, l := range []struct {
		name string
		list corev1.ResourceList
	}{{"requests", spec.Resources.Requests}, {"limits", spec.Resources.Limits}} {
		q := l.list[corev1.ResourceStorage]
		if q.MilliValue()%1000 != 0 {
			ws = append(ws, fmt.Sprintf("%s: fractional byte value %q is invalid, must be an integer",
				p.Child("resources", l.name).Key(string(corev1.ResourceStorage)), q.String()))
		}
	}
	return ws
}

// podStrategy is kube's pod strategy's warnings: the name and the pod's
// spec and metadata on create; none on update (kube skips them there, as
// pods are updated often and rarely by people).
type podStrategy struct{ Generic }

var _ Warner = podStrategy{}

// WarningsOnCreate implements Warner.
func (podStrategy) WarningsOnCreate(obj runtime.Object) []string {
	p := obj.(*corev1.Pod)
	var ws []string
	if msgs := validation.IsDNS1123Label(p.Name); len(msgs) != 0 {
		ws = append(ws, fmt.Sprintf("metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: %v", msgs))
	}
	// A nil path: kube's pod warnings name "spec..." and "metadata...".
	return append(ws, podTemplateWarnings(nil, &corev1.PodTemplateSpec{ObjectMeta: p.ObjectMeta, Spec: p.Spec})...)
}

// WarningsOnUpdate implements Warner.
func (podStrategy) WarningsOnUpdate(obj, old runtime.Object) []string { return nil }

package api

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

const archWarning = `spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use "kubernetes.io/arch" instead`

var nameWarning = `metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]`

func archTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{NodeSelector: map[string]string{"beta.kubernetes.io/arch": "amd64"},
		Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
}

// The apps/v1 strategies warn as kube's: the template on create and on a
// spec change, the name where pods take it, a StatefulSet's claims.
func TestWorkloadWarnings(t *testing.T) {
	meta := func(gen int64) metav1.ObjectMeta { return metav1.ObjectMeta{Name: "web.v1", Generation: gen} }
	deploy := func(gen int64) runtime.Object {
		return &appsv1.Deployment{ObjectMeta: meta(gen), Spec: appsv1.DeploymentSpec{Template: archTemplate()}}
	}
	rs := func(gen int64) runtime.Object {
		return &appsv1.ReplicaSet{ObjectMeta: meta(gen), Spec: appsv1.ReplicaSetSpec{Template: archTemplate()}}
	}
	ds := func(gen int64) runtime.Object {
		return &appsv1.DaemonSet{ObjectMeta: meta(gen), Spec: appsv1.DaemonSetSpec{Template: archTemplate()}}
	}
	sts := func(gen int64) runtime.Object {
		return &appsv1.StatefulSet{ObjectMeta: meta(gen), Spec: appsv1.StatefulSetSpec{Template: archTemplate(),
			RevisionHistoryLimit: ptr.To[int32](-1),
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1500m")}}}}}}}
	}
	const tmpl = "spec.template." + archWarning
	const history = "spec.revisionHistoryLimit: a negative value retains all historical revisions; a value >= 0 is recommended"
	for _, tc := range []struct {
		name            string
		s               Warner
		obj             func(int64) runtime.Object
		create          []string
		sameGen, newGen []string
	}{
		{"deployment", deploymentStrategy, deploy, []string{nameWarning, tmpl}, nil, []string{tmpl}},
		{"replicaset", replicaSetStrategy, rs, []string{nameWarning, tmpl}, nil, []string{tmpl}},
		{"daemonset: no name warning", daemonSetStrategy, ds, []string{tmpl}, nil, []string{tmpl}},
		{"statefulset: claims and history always, kube's \"Spec\" on update", statefulSetStrategy, sts,
			[]string{tmpl, `spec.volumeClaimTemplates[0].resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer`, history},
			[]string{`spec.volumeClaimTemplates[0].Spec.resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer`, history},
			[]string{tmpl, `spec.volumeClaimTemplates[0].Spec.resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer`, history}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.s.WarningsOnCreate(tc.obj(1)); !slices.Equal(got, tc.create) {
				t.Errorf("create:\n got %q\nwant %q", got, tc.create)
			}
			if got := tc.s.WarningsOnUpdate(tc.obj(1), tc.obj(1)); !slices.Equal(got, tc.sameGen) {
				t.Errorf("update, spec unchanged:\n got %q\nwant %q", got, tc.sameGen)
			}
			if got := tc.s.WarningsOnUpdate(tc.obj(2), tc.obj(1)); !slices.Equal(got, tc.newGen) {
				t.Errorf("update, spec changed:\n got %q\nwant %q", got, tc.newGen)
			}
		})
	}
}

func TestPodWarnings(t *testing.T) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web.v1"}, Spec: archTemplate().Spec}
	want := []string{
		`metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]`,
		archWarning,
	}
	s := podStrategy{}
	if got := s.WarningsOnCreate(p); !slices.Equal(got, want) {
		t.Errorf("create:\n got %q\nwant %q", got, want)
	}
	if got := s.WarningsOnUpdate(p, p); got != nil {
		t.Errorf("update: %q, want none (kube skips pod updates)", got)
	}
}

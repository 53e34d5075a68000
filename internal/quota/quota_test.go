package quota

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kpipe/kpipe/internal/api"
)

func TestUsage(t *testing.T) {
	pods := &api.Resource{GroupVersion: schema.GroupVersion{Version: "v1"}, Name: "pods"}
	deploys := &api.Resource{GroupVersion: schema.GroupVersion{Group: "apps", Version: "v1"}, Name: "deployments"}
	q := resource.MustParse
	res := func(cpu, mem string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q(cpu)}, Limits: corev1.ResourceList{corev1.ResourceMemory: q(mem)}}
	}
	always := corev1.ContainerRestartPolicyAlways
	for _, tc := range []struct {
		name string
		res  *api.Resource
		obj  any
		want string
	}{
		{"deployment counts", deploys, nil, "count/deployments.apps=1"},
		{"pod sums containers and takes the larger init", pods, &corev1.Pod{Spec: corev1.PodSpec{
			Containers:     []corev1.Container{{Resources: res("100m", "64Mi")}, {Resources: res("200m", "64Mi")}},
			InitContainers: []corev1.Container{{Resources: res("500m", "32Mi")}},
		}}, "count/pods=1,cpu=500m,limits.memory=128Mi,pods=1,requests.cpu=500m"},
		{"sidecars add to both", pods, &corev1.Pod{Spec: corev1.PodSpec{
			Containers:     []corev1.Container{{Resources: res("100m", "64Mi")}},
			InitContainers: []corev1.Container{{Resources: res("50m", "16Mi"), RestartPolicy: &always}},
		}}, "count/pods=1,cpu=150m,limits.memory=80Mi,pods=1,requests.cpu=150m"},
		{"finished pods hold no pod count", pods, &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodSucceeded}}, "count/pods=1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, _ := tc.obj.(*corev1.Pod)
			var got corev1.ResourceList
			if obj != nil {
				got = Usage(tc.res, obj)
			} else {
				got = Usage(tc.res, &metav1.PartialObjectMetadata{})
			}
			if s := String(got); s != tc.want {
				t.Errorf("got %s, want %s", s, tc.want)
			}
		})
	}
}

func TestConstraintsMessage(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "b"}, {Name: "a"}}}}
	err := Constraints([]corev1.ResourceName{corev1.ResourceRequestsCPU, corev1.ResourceLimitsMemory, corev1.ResourcePods}, pod)
	if err == nil || err.Error() != "must specify limits.memory for: a,b; requests.cpu for: a,b" {
		t.Fatalf("got %v", err)
	}
}

package etcdwriter

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kpipe/kpipe/internal/api"
)

func res(group, name string) *api.Resource {
	return &api.Resource{GroupVersion: schema.GroupVersion{Group: group, Version: "v1"}, Name: name}
}

func TestGCFinalizers(t *testing.T) {
	orphan, bg, fg := metav1.DeletePropagationOrphan, metav1.DeletePropagationBackground, metav1.DeletePropagationForeground
	yes, no := true, false
	tests := []struct {
		name       string
		res        *api.Resource
		finalizers []string
		opts       metav1.DeleteOptions
		change     bool
		want       string
	}{
		{"no policy, no default", res("", "configmaps"), nil, metav1.DeleteOptions{}, false, ""},
		{"Orphan", res("", "configmaps"), []string{"x"}, metav1.DeleteOptions{PropagationPolicy: &orphan}, true, "x,orphan"},
		{"Foreground replaces orphan", res("", "configmaps"), []string{"orphan"}, metav1.DeleteOptions{PropagationPolicy: &fg}, true, "foregroundDeletion"},
		{"Background drops both", res("", "configmaps"), []string{"foregroundDeletion", "x"}, metav1.DeleteOptions{PropagationPolicy: &bg}, true, "x"},
		{"orphanDependents true", res("", "configmaps"), nil, metav1.DeleteOptions{OrphanDependents: &yes}, true, "orphan"},
		{"orphanDependents false drops orphan", res("", "configmaps"), []string{"orphan"}, metav1.DeleteOptions{OrphanDependents: &no}, true, ""},
		{"the object's own finalizer is its default", res("", "configmaps"), []string{"foregroundDeletion"}, metav1.DeleteOptions{}, false, "foregroundDeletion"},
		{"apps default adds nothing", res("apps", "deployments"), nil, metav1.DeleteOptions{}, false, ""},
		{"batch/v1 jobs orphan by default", res("batch", "jobs"), nil, metav1.DeleteOptions{}, true, "orphan"},
		{"events ignore the policy", res("", "events"), nil, metav1.DeleteOptions{PropagationPolicy: &orphan}, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := &metav1.ObjectMeta{Finalizers: tc.finalizers}
			change, got := gcFinalizers(tc.res, m, &tc.opts)
			if change != tc.change || strings.Join(got, ",") != tc.want {
				t.Errorf("got %v %v, want %v %q", change, got, tc.change, tc.want)
			}
		})
	}
}

func TestBeforeDeletePods(t *testing.T) {
	pods := res("", "pods")
	thirty := int64(30)
	pod := func(node string, phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{NodeName: node, TerminationGracePeriodSeconds: &thirty}, Status: corev1.PodStatus{Phase: phase}}
	}
	p := func(v int64) *int64 { return &v }
	tests := []struct {
		name    string
		pod     *corev1.Pod
		grace   *int64
		want    int64
		pending bool
	}{
		{"spec default", pod("n", corev1.PodRunning), nil, 30, false},
		{"option wins", pod("n", corev1.PodRunning), p(5), 5, false},
		{"negative is 1", pod("n", corev1.PodRunning), p(-3), 1, false},
		{"unscheduled is 0", pod("", corev1.PodPending), p(5), 0, false},
		{"succeeded is 0", pod("n", corev1.PodSucceeded), nil, 0, false},
		{"failed is 0", pod("n", corev1.PodFailed), nil, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := &metav1.DeleteOptions{GracePeriodSeconds: tc.grace}
			graceful, pending, err := beforeDelete(pods, tc.pod, opts)
			if err != nil || !graceful || pending != tc.pending {
				t.Fatalf("graceful %v pending %v err %v", graceful, pending, err)
			}
			if got := tc.pod.DeletionGracePeriodSeconds; got == nil || *got != tc.want {
				t.Errorf("deletionGracePeriodSeconds %v, want %d", got, tc.want)
			}
		})
	}

	t.Run("a pending deletion may only shorten", func(t *testing.T) {
		at := metav1.NewTime(time.Now().Add(30 * time.Second).Truncate(time.Second))
		marked := func() *corev1.Pod {
			x := pod("n", corev1.PodRunning)
			x.DeletionTimestamp, x.DeletionGracePeriodSeconds = at.DeepCopy(), p(30)
			return x
		}
		for _, g := range []*int64{nil, p(30), p(60)} {
			if graceful, pending, _ := beforeDelete(pods, marked(), &metav1.DeleteOptions{GracePeriodSeconds: g}); graceful || !pending {
				t.Errorf("grace %v: graceful %v pending %v, want pending", g, graceful, pending)
			}
		}
		x := marked()
		graceful, pending, _ := beforeDelete(pods, x, &metav1.DeleteOptions{GracePeriodSeconds: p(10)})
		if !graceful || pending || *x.DeletionGracePeriodSeconds != 10 || !x.DeletionTimestamp.Equal(&metav1.Time{Time: at.Add(-20 * time.Second)}) {
			t.Errorf("shortened to %v at %v (graceful %v pending %v)", *x.DeletionGracePeriodSeconds, x.DeletionTimestamp, graceful, pending)
		}
	})

	t.Run("other types are not graceful", func(t *testing.T) {
		graceful, pending, err := beforeDelete(res("", "configmaps"), &corev1.ConfigMap{}, &metav1.DeleteOptions{GracePeriodSeconds: p(30)})
		if graceful || pending || err != nil {
			t.Errorf("graceful %v pending %v err %v", graceful, pending, err)
		}
	})
}

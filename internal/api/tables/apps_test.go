package tables

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func webTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "nginx", Image: "nginx:1.27"},
			{Name: "exporter", Image: "nginx/exporter:1.4"},
		}},
	}
}

var webSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}

func TestDeploymentRows(t *testing.T) {
	d := &appsv1.Deployment{
		ObjectMeta: om("default", "web"),
		Spec:       appsv1.DeploymentSpec{Replicas: ptr(int32(3)), Selector: webSelector, Template: webTemplate()},
		Status:     appsv1.DeploymentStatus{Replicas: 3, ReadyReplicas: 2, UpdatedReplicas: 3, AvailableReplicas: 2},
	}
	expr := &appsv1.Deployment{
		ObjectMeta: om("default", "api"),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(0)),
			Selector: &metav1.LabelSelector{
				MatchLabels:      map[string]string{"app": "api"},
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"be", "fe"}}},
			},
		},
	}
	invalid := &appsv1.Deployment{
		ObjectMeta: om("default", "bad"),
		Spec:       appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Bogus"}}}},
	}
	runRows(t, schema.GroupResource{Group: "apps", Resource: "deployments"}, []rowCase{
		{name: "2/3 ready", obj: d, want: []any{"web", "2/3", int64(3), int64(2), "10m", "nginx,exporter", "nginx:1.27,nginx/exporter:1.4", "app=web"}},
		{name: "scaled to zero with set-based selector", obj: expr, want: []any{"api", "0/0", int64(0), int64(0), "10m", "", "", "app=api,tier in (be,fe)"}},
		{name: "unset replicas default to 1, invalid selector", obj: invalid, want: []any{"bad", "0/1", int64(0), int64(0), "10m", "", "", "<invalid>"}},
	})
}

func TestReplicaSetRows(t *testing.T) {
	rs := &appsv1.ReplicaSet{
		ObjectMeta: om("default", "web-7d4b9c"),
		Spec:       appsv1.ReplicaSetSpec{Replicas: ptr(int32(3)), Selector: webSelector, Template: webTemplate()},
		Status:     appsv1.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 1},
	}
	runRows(t, schema.GroupResource{Group: "apps", Resource: "replicasets"}, []rowCase{
		{name: "desired current ready", obj: rs, want: []any{"web-7d4b9c", int64(3), int64(3), int64(1), "10m", "nginx,exporter", "nginx:1.27,nginx/exporter:1.4", "app=web"}},
		{name: "empty selector", obj: &appsv1.ReplicaSet{ObjectMeta: om("default", "bare"), Spec: appsv1.ReplicaSetSpec{Replicas: ptr(int32(0))}}, want: []any{"bare", int64(0), int64(0), int64(0), "10m", "", "", "<none>"}},
	})
}

func TestStatefulSetRows(t *testing.T) {
	ss := &appsv1.StatefulSet{
		ObjectMeta: om("default", "db"),
		Spec:       appsv1.StatefulSetSpec{Replicas: ptr(int32(3)), Selector: webSelector, Template: webTemplate()},
		Status:     appsv1.StatefulSetStatus{Replicas: 2, ReadyReplicas: 1},
	}
	runRows(t, schema.GroupResource{Group: "apps", Resource: "statefulsets"}, []rowCase{
		{name: "1/3 ready", obj: ss, want: []any{"db", "1/3", "10m", "nginx,exporter", "nginx:1.27,nginx/exporter:1.4"}},
	})
}

func TestDaemonSetRows(t *testing.T) {
	tmpl := webTemplate()
	tmpl.Spec.NodeSelector = map[string]string{"kubernetes.io/os": "linux"}
	ds := &appsv1.DaemonSet{
		ObjectMeta: om("kube-system", "kube-proxy"),
		Spec:       appsv1.DaemonSetSpec{Selector: webSelector, Template: tmpl},
		Status: appsv1.DaemonSetStatus{
			DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, NumberReady: 2, UpdatedNumberScheduled: 3, NumberAvailable: 2,
		},
	}
	runRows(t, schema.GroupResource{Group: "apps", Resource: "daemonsets"}, []rowCase{
		{name: "with node selector", obj: ds, want: []any{"kube-proxy", int64(3), int64(3), int64(2), int64(3), int64(2), "kubernetes.io/os=linux", "10m", "nginx,exporter", "nginx:1.27,nginx/exporter:1.4", "app=web"}},
		{name: "no node selector", obj: &appsv1.DaemonSet{ObjectMeta: om("kube-system", "agent")}, want: []any{"agent", int64(0), int64(0), int64(0), int64(0), int64(0), "<none>", "10m", "", "", "<none>"}},
	})
}

func TestControllerRevisionRows(t *testing.T) {
	owned := func(refs ...metav1.OwnerReference) metav1.ObjectMeta {
		m := om("default", "web-5d8f")
		m.OwnerReferences = refs
		return m
	}
	yes := ptr(true)
	runRows(t, schema.GroupResource{Group: "apps", Resource: "controllerrevisions"}, []rowCase{
		{name: "no owner", obj: &appsv1.ControllerRevision{ObjectMeta: om("default", "web-5d8f"), Revision: 2},
			want: []any{"web-5d8f", "<none>", int64(2), "10m"}},
		{name: "statefulset controller", obj: &appsv1.ControllerRevision{Revision: 1, ObjectMeta: owned(
			metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "other"},
			metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "web", Controller: yes})},
			want: []any{"web-5d8f", "statefulset.apps/web", int64(1), "10m"}},
		{name: "core controller", obj: &appsv1.ControllerRevision{ObjectMeta: owned(
			metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: "p", Controller: yes})},
			want: []any{"web-5d8f", "pod/p", int64(0), "10m"}},
		{name: "owner that is no controller", obj: &appsv1.ControllerRevision{Revision: 3, ObjectMeta: owned(
			metav1.OwnerReference{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds"})},
			want: []any{"web-5d8f", "<none>", int64(3), "10m"}},
	})
}

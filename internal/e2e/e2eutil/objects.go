package e2eutil

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Namespace creates the namespace name or fails the test.
func Namespace(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// WantStatus checks that err is an API Status with code and reason, and
// with message msg unless msg is empty.
func WantStatus(t *testing.T, err error, code int32, reason metav1.StatusReason, msg string) {
	t.Helper()
	se, ok := err.(apierrors.APIStatus)
	if !ok {
		t.Fatalf("want a %d %s Status, got %v", code, reason, err)
	}
	st := se.Status()
	if st.Code != code || st.Reason != reason || (msg != "" && st.Message != msg) {
		t.Errorf("got %d %s %q\nwant %d %s %q", st.Code, st.Reason, st.Message, code, reason, msg)
	}
}

// ConfigMap is a ConfigMap named name with labels and one data key.
func ConfigMap(name string, labels map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Data: map[string]string{"k": "v"}}
}

// Pod is a one-container pod ("app", nginx) named name, changed by mutate.
func Pod(name string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

// WebDeployment is the Deployment "web" (app=web) with two containers,
// nginx on port 80 and a busybox sidecar.
func WebDeployment() *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web"}},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{
					{Name: "nginx", Image: "nginx:1.27", Ports: []corev1.ContainerPort{{ContainerPort: 80}}},
					{Name: "sidecar", Image: "busybox:1"},
				}},
			},
		},
	}
}

// WaitDefaultSA waits for the serviceaccount-controller to make the
// namespace's default account.
func WaitDefaultSA(t *testing.T, cs kubernetes.Interface, ns string) {
	t.Helper()
	Eventually(t, 10*time.Second, "the default ServiceAccount in "+ns, func() bool {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(context.Background(), "default", metav1.GetOptions{})
		return err == nil
	})
}

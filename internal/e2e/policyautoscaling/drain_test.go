package policyautoscaling

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

// kubectl drain evicts through pods/eviction: a budget allowing one
// disruption lets one of two pods go and holds the other until the
// timeout.
func TestKubectlDrain(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	cs := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := context.Background()
	const ns = "drain"
	e2eutil.Namespace(t, cs, ns)
	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := cs.CoreV1().Pods(ns)
	for _, name := range []string{"web-0", "web-1"} {
		p, err := pods.Create(ctx, e2eutil.Pod(name, func(p *corev1.Pod) {
			p.Labels = map[string]string{"app": "web"}
			p.Spec.NodeName = "n1"
		}), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	p, err := cs.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb("web", map[string]string{"app": "web"}, intstr.FromInt32(1)), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: p.Generation, DisruptionsAllowed: 1, CurrentHealthy: 2, DesiredHealthy: 1, ExpectedPods: 2}
	if _, err := cs.PolicyV1().PodDisruptionBudgets(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	out, err := e2eutil.Kubectl(t, ts, "drain", "n1", "--force", "--grace-period=0", "--timeout=4s")
	if err == nil {
		t.Fatalf("drain ended without error while the budget holds a pod:\n%s", out)
	}
	e2eutil.MustContain(t, "kubectl drain", out, "node/n1 cordoned", "evicting pod drain/web-0", "evicting pod drain/web-1",
		"Cannot evict pod as it would violate the pod's disruption budget.")
	var left []string
	for _, name := range []string{"web-0", "web-1"} {
		if _, err := pods.Get(ctx, name, metav1.GetOptions{}); err == nil {
			left = append(left, name)
		} else if !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	if len(left) != 1 {
		t.Errorf("pods left after the drain: %v, want one of the two", left)
	}
	if !strings.Contains(out, "evicted") {
		t.Errorf("no pod reported evicted:\n%s", out)
	}
}

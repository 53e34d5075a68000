package policyautoscaling

import (
	"context"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

// pods/eviction as kube's eviction REST: no budget, a budget at 0, a
// budget allowing one, an unobserved budget, two budgets, a pending pod.
func TestEviction(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	cs := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := context.Background()
	const ns = "evict"
	e2eutil.Namespace(t, cs, ns)
	pods, pdbs := cs.CoreV1().Pods(ns), cs.PolicyV1().PodDisruptionBudgets(ns)

	// running creates a pod with labels and, through /status, makes it
	// Running and Ready, as the kubelet would.
	running := func(name string, labels map[string]string) *corev1.Pod {
		t.Helper()
		p, err := pods.Create(ctx, e2eutil.Pod(name, func(p *corev1.Pod) { p.Labels = labels }), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		if p, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// budget creates a PDB and writes its status as the disruption
	// controller would, observing its generation unless stale.
	budget := func(name string, selector map[string]string, st policyv1.PodDisruptionBudgetStatus, stale bool) {
		t.Helper()
		p, err := pdbs.Create(ctx, pdb(name, selector, intstr.FromInt32(1)), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !stale {
			st.ObservedGeneration = p.Generation
		}
		p.Status = st
		if _, err := pdbs.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// evict posts an Eviction without client-go's retries: it would
	// retry a 429 that carries Retry-After, against kube as here.
	evict := func(name string) error {
		return cs.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name(name).SubResource("eviction").
			Body(&policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}).MaxRetries(0).Do(ctx).Error()
	}
	gone := func(name string) {
		t.Helper()
		if _, err := pods.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("pod %s after its eviction: %v, want NotFound", name, err)
		}
	}
	wantCause := func(err error, msg string) {
		t.Helper()
		se, ok := err.(apierrors.APIStatus)
		if !ok || se.Status().Details == nil || len(se.Status().Details.Causes) != 1 ||
			se.Status().Details.Causes[0].Type != policyv1.DisruptionBudgetCause || se.Status().Details.Causes[0].Message != msg {
			t.Errorf("causes of %v: want one DisruptionBudget cause %q", err, msg)
		}
	}

	t.Run("no budget", func(t *testing.T) {
		running("free", map[string]string{"app": "free"})
		if err := evict("free"); err != nil {
			t.Fatal(err)
		}
		gone("free")
	})

	t.Run("budget allows none", func(t *testing.T) {
		running("web-0", map[string]string{"app": "web"})
		budget("web", map[string]string{"app": "web"}, policyv1.PodDisruptionBudgetStatus{CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1}, false)
		err := evict("web-0")
		e2eutil.WantStatus(t, err, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests, "Cannot evict pod as it would violate the pod's disruption budget.")
		wantCause(err, "The disruption budget web needs 1 healthy pods and has 1 currently")
		if _, err := pods.Get(ctx, "web-0", metav1.GetOptions{}); err != nil {
			t.Errorf("refused eviction: the pod is gone: %v", err)
		}
	})

	t.Run("budget allows one", func(t *testing.T) {
		running("db-0", map[string]string{"app": "db"})
		running("db-1", map[string]string{"app": "db"})
		budget("db", map[string]string{"app": "db"}, policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1, CurrentHealthy: 2, DesiredHealthy: 1, ExpectedPods: 2}, false)
		if err := evict("db-0"); err != nil {
			t.Fatal(err)
		}
		gone("db-0")
		p, err := pdbs.Get(ctx, "db", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Status.DisruptionsAllowed != 0 {
			t.Errorf("disruptionsAllowed = %d after the eviction, want 0", p.Status.DisruptionsAllowed)
		}
		if _, ok := p.Status.DisruptedPods["db-0"]; !ok || len(p.Status.DisruptedPods) != 1 {
			t.Errorf("disruptedPods = %v, want db-0", p.Status.DisruptedPods)
		}
		if c := meta.FindStatusCondition(p.Status.Conditions, policyv1.DisruptionAllowedCondition); c == nil ||
			c.Status != metav1.ConditionFalse || c.Reason != policyv1.InsufficientPodsReason {
			t.Errorf("conditions = %+v, want DisruptionAllowed False InsufficientPods", p.Status.Conditions)
		}
		// The budget is spent: the next eviction is refused.
		err = evict("db-1")
		e2eutil.WantStatus(t, err, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests, "Cannot evict pod as it would violate the pod's disruption budget.")
		wantCause(err, "The disruption budget db does not allow evicting pods currently")
	})

	t.Run("dry run", func(t *testing.T) {
		running("dry-0", map[string]string{"app": "dry"})
		budget("dry", map[string]string{"app": "dry"}, policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1, CurrentHealthy: 1, ExpectedPods: 1}, false)
		err := cs.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name("dry-0").SubResource("eviction").Param("dryRun", "All").
			Body(&policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "dry-0", Namespace: ns}}).MaxRetries(0).Do(ctx).Error()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pods.Get(ctx, "dry-0", metav1.GetOptions{}); err != nil {
			t.Errorf("dry-run eviction: the pod is gone: %v", err)
		}
		if p, err := pdbs.Get(ctx, "dry", metav1.GetOptions{}); err != nil || p.Status.DisruptionsAllowed != 1 || len(p.Status.DisruptedPods) != 0 {
			t.Errorf("dry-run eviction changed the budget: %+v (%v)", p.Status, err)
		}
	})

	t.Run("name mismatch", func(t *testing.T) {
		err := cs.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name("web-0").SubResource("eviction").
			Body(&policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: ns}}).MaxRetries(0).Do(ctx).Error()
		e2eutil.WantStatus(t, err, http.StatusBadRequest, metav1.StatusReasonBadRequest, "name in URL does not match name in Eviction object")
	})

	t.Run("budget not observed yet", func(t *testing.T) {
		running("api-0", map[string]string{"app": "api"})
		budget("api", map[string]string{"app": "api"}, policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 3}, true)
		err := evict("api-0")
		e2eutil.WantStatus(t, err, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests, "Cannot evict pod as it would violate the pod's disruption budget.")
		wantCause(err, "The disruption budget api is still being processed by the server.")
	})

	t.Run("two budgets", func(t *testing.T) {
		running("q-0", map[string]string{"app": "q", "tier": "back"})
		budget("q-app", map[string]string{"app": "q"}, policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1}, false)
		budget("q-tier", map[string]string{"tier": "back"}, policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1}, false)
		// kube answers 201 with a Failure Status of code 500, which
		// client-go does not turn into an error: the wire is the check.
		res := cs.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name("q-0").SubResource("eviction").
			Body(&policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "q-0", Namespace: ns}}).MaxRetries(0).Do(ctx)
		var code int
		res.StatusCode(&code)
		raw, _ := res.Raw()
		want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.","code":500}`
		if code != http.StatusCreated || strings.TrimSpace(string(raw)) != want {
			t.Errorf("two budgets: got %d %s\nwant 201 %s", code, raw, want)
		}
		if _, err := pods.Get(ctx, "q-0", metav1.GetOptions{}); err != nil {
			t.Errorf("refused eviction: the pod is gone: %v", err)
		}
	})

	t.Run("pending pod ignores its budget", func(t *testing.T) {
		if _, err := pods.Create(ctx, e2eutil.Pod("web-pending", func(p *corev1.Pod) { p.Labels = map[string]string{"app": "web"} }), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := evict("web-pending"); err != nil {
			t.Fatal(err)
		}
		gone("web-pending")
	})

	t.Run("missing pod", func(t *testing.T) {
		e2eutil.WantStatus(t, evict("nope"), http.StatusNotFound, metav1.StatusReasonNotFound, `pods "nope" not found`)
	})
}

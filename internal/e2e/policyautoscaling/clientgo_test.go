package policyautoscaling

import (
	"context"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

func ptr[T any](v T) *T { return &v }

func pdb(name string, selector map[string]string, minAvailable intstr.IntOrString) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: &minAvailable,
			Selector:     &metav1.LabelSelector{MatchLabels: selector},
		},
	}
}

// PDBs through client-go: status reset on create and written only through
// /status, generation on spec changes, kube's 422s.
func TestPDBClientGo(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	cs := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "pdb-go")
	pdbs := cs.PolicyV1().PodDisruptionBudgets("pdb-go")

	in := pdb("web", map[string]string{"app": "web"}, intstr.FromInt32(1))
	in.Status = policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 5, ExpectedPods: 3}
	p, err := pdbs.Create(ctx, in, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Generation != 1 || p.Status.DisruptionsAllowed != 0 || p.Status.ExpectedPods != 0 || p.Spec.UnhealthyPodEvictionPolicy != nil {
		t.Errorf("created: generation %d, status %+v, unhealthyPodEvictionPolicy %v", p.Generation, p.Status, p.Spec.UnhealthyPodEvictionPolicy)
	}

	// The main resource keeps the status; a spec change bumps generation.
	p.Status.DisruptionsAllowed = 4
	p.Spec.MinAvailable = ptr(intstr.FromString("50%"))
	p, err = pdbs.Update(ctx, p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Generation != 2 || p.Status.DisruptionsAllowed != 0 {
		t.Errorf("after update: generation %d, disruptionsAllowed %d; want 2, 0", p.Generation, p.Status.DisruptionsAllowed)
	}

	// /status writes the status and nothing else.
	p.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 2, DisruptionsAllowed: 1, CurrentHealthy: 2, DesiredHealthy: 1, ExpectedPods: 2}
	p.Spec.MinAvailable = ptr(intstr.FromInt32(9))
	p, err = pdbs.UpdateStatus(ctx, p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Status.DisruptionsAllowed != 1 || p.Spec.MinAvailable.String() != "50%" || p.Generation != 2 {
		t.Errorf("after /status: disruptionsAllowed %d, minAvailable %s, generation %d", p.Status.DisruptionsAllowed, p.Spec.MinAvailable, p.Generation)
	}
	p.Status.DisruptionsAllowed = -1
	_, err = pdbs.UpdateStatus(ctx, p, metav1.UpdateOptions{})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid,
		`PodDisruptionBudget.policy "web" is invalid: status.disruptionsAllowed: Invalid value: -1: must be greater than or equal to 0`)

	// A budget's PUT must carry a resourceVersion (kube's strategy allows
	// no unconditional update), on the main resource and on /status.
	noRV := p.DeepCopy()
	noRV.ResourceVersion = ""
	noRV.Status.DisruptionsAllowed = 1
	const needRV = `poddisruptionbudgets.policy "web" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`
	_, err = pdbs.Update(ctx, noRV, metav1.UpdateOptions{})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, needRV)
	_, err = pdbs.UpdateStatus(ctx, noRV, metav1.UpdateOptions{})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, needRV)

	both := pdb("both", map[string]string{"app": "web"}, intstr.FromInt32(1))
	both.Spec.MaxUnavailable = ptr(intstr.FromString("10%"))
	_, err = pdbs.Create(ctx, both, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid,
		`PodDisruptionBudget.policy "both" is invalid: spec: Invalid value: {"MinAvailable":1,"Selector":{"matchLabels":{"app":"web"}},"MaxUnavailable":"10%","UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set`)

	bad := pdb("bad", map[string]string{"app": "web"}, intstr.FromInt32(-1))
	bad.Spec.UnhealthyPodEvictionPolicy = ptr(policyv1.UnhealthyPodEvictionPolicyType("Sometimes"))
	_, err = pdbs.Create(ctx, bad, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid,
		`PodDisruptionBudget.policy "bad" is invalid: [spec.minAvailable: Invalid value: -1: must be greater than or equal to 0, spec.unhealthyPodEvictionPolicy: Unsupported value: "Sometimes": supported values: "AlwaysAllow", "IfHealthyBudget"]`)
}

func hpa(name string) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MaxReplicas:    3,
		},
	}
}

// HPAs through client-go: kube's defaults, status only through /status,
// generation, kube's 422s (the declarative ones last).
func TestHPAClientGo(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	cs := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "hpa-go")
	hpas := cs.AutoscalingV2().HorizontalPodAutoscalers("hpa-go")

	in := hpa("web")
	in.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{SelectPolicy: ptr(autoscalingv2.MinChangePolicySelect)}}
	in.Status = autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 7}
	h, err := hpas.Create(ctx, in, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h.Generation != 1 || h.Status.CurrentReplicas != 0 || h.Spec.MinReplicas == nil || *h.Spec.MinReplicas != 1 {
		t.Errorf("created: generation %d, status %+v, minReplicas %v", h.Generation, h.Status, h.Spec.MinReplicas)
	}
	if m := h.Spec.Metrics; len(m) != 1 || m[0].Resource == nil || m[0].Resource.Name != "cpu" || *m[0].Resource.Target.AverageUtilization != 80 {
		t.Errorf("default metrics = %+v", m)
	}
	b := h.Spec.Behavior
	if b == nil || b.ScaleUp == nil || *b.ScaleUp.SelectPolicy != autoscalingv2.MinChangePolicySelect || len(b.ScaleUp.Policies) != 2 ||
		*b.ScaleUp.StabilizationWindowSeconds != 0 || b.ScaleDown == nil || b.ScaleDown.StabilizationWindowSeconds != nil ||
		len(b.ScaleDown.Policies) != 1 || b.ScaleDown.Policies[0].Value != 100 {
		t.Errorf("default behavior = %+v", b)
	}

	h.Spec.MaxReplicas = 5
	h.Status.DesiredReplicas = 4
	h, err = hpas.Update(ctx, h, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h.Generation != 2 || h.Status.DesiredReplicas != 0 {
		t.Errorf("after update: generation %d, desiredReplicas %d; want 2, 0", h.Generation, h.Status.DesiredReplicas)
	}
	h.Status = autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 2, DesiredReplicas: 3, ObservedGeneration: ptr(int64(2))}
	h.Spec.MaxReplicas = 50
	h, err = hpas.UpdateStatus(ctx, h, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h.Status.DesiredReplicas != 3 || h.Spec.MaxReplicas != 5 || h.Generation != 2 {
		t.Errorf("after /status: desiredReplicas %d, maxReplicas %d, generation %d", h.Status.DesiredReplicas, h.Spec.MaxReplicas, h.Generation)
	}
	h.Status.CurrentReplicas = -1
	_, err = hpas.UpdateStatus(ctx, h, metav1.UpdateOptions{})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid,
		`HorizontalPodAutoscaler.autoscaling "web" is invalid: status.currentReplicas: Invalid value: -1: must be greater than or equal to 0`)

	bad := hpa("bad")
	bad.Spec.MaxReplicas = 0
	bad.Spec.ScaleTargetRef.APIVersion = "v1"
	_, err = hpas.Create(ctx, bad, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid,
		"HorizontalPodAutoscaler.autoscaling \"bad\" is invalid: [spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`, "+
			`spec.scaleTargetRef.apiVersion: Invalid value: "v1": apiVersion must specify API group, spec.maxReplicas: Required value]`)

	zero := hpa("zero")
	zero.Spec.MinReplicas = ptr(int32(0))
	_, err = hpas.Create(ctx, zero, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid,
		`HorizontalPodAutoscaler.autoscaling "zero" is invalid: spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas`)
}

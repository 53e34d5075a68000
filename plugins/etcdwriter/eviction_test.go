package etcdwriter

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// checkAndDecrement's refusals, with kube's codes, messages and causes. A
// dry run stops before the budget is written, so no store is needed.
func TestCheckAndDecrement(t *testing.T) {
	budget := func(mut func(*policyv1.PodDisruptionBudget)) policyv1.PodDisruptionBudget {
		p := policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 2},
			Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 2, CurrentHealthy: 3, DesiredHealthy: 2}}
		mut(&p)
		return p
	}
	cond := func(reason, msg string) []metav1.Condition {
		return []metav1.Condition{{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionFalse, Reason: reason, Message: msg}}
	}
	const violation = "Cannot evict pod as it would violate the pod's disruption budget."
	cases := []struct {
		name       string
		pdb        policyv1.PodDisruptionBudget
		code       int32
		msg, cause string
		retryAfter int32
	}{
		{"not observed", budget(func(p *policyv1.PodDisruptionBudget) {
			p.Status.ObservedGeneration = 1
			p.Status.DisruptionsAllowed = 1
		}),
			http.StatusTooManyRequests, violation, "The disruption budget web is still being processed by the server.", 10},
		{"negative", budget(func(p *policyv1.PodDisruptionBudget) { p.Status.DisruptionsAllowed = -1 }),
			http.StatusForbidden, `poddisruptionbudget.policy "web" is forbidden: pdb disruptions allowed is negative`,
			"The disruption budget web does not allow evicting pods currently: pdb disruptions allowed is negative", 0},
		{"too many disrupted pods", budget(func(p *policyv1.PodDisruptionBudget) {
			p.Status.DisruptionsAllowed = 1
			p.Status.DisruptedPods = map[string]metav1.Time{}
			for i := 0; i <= maxDisruptedPods; i++ {
				p.Status.DisruptedPods[fmt.Sprintf("web-%d", i)] = metav1.Now()
			}
		}), http.StatusForbidden, `poddisruptionbudget.policy "web" is forbidden: DisruptedPods map too big - too many evictions not confirmed by PDB controller`,
			"The disruption budget web does not allow evicting pods currently: too many pending evictions not confirmed by PDB controller", 0},
		{"sync failed", budget(func(p *policyv1.PodDisruptionBudget) {
			p.Status.Conditions = cond(policyv1.SyncFailedReason, "found no controllers for pod \"web-0\"")
		}), http.StatusTooManyRequests, violation,
			`The disruption budget web does not allow evicting pods currently because it failed sync: found no controllers for pod "web-0"`, 0},
		{"not enough healthy", budget(func(p *policyv1.PodDisruptionBudget) { p.Status.CurrentHealthy = 2 }),
			http.StatusTooManyRequests, violation, "The disruption budget web needs 2 healthy pods and has 2 currently", 0},
		{"condition message", budget(func(p *policyv1.PodDisruptionBudget) { p.Status.Conditions = cond("InsufficientPods", "waiting") }),
			http.StatusTooManyRequests, violation, "The disruption budget web does not allow evicting pods currently (InsufficientPods): waiting", 0},
		{"none allowed", budget(func(*policyv1.PodDisruptionBudget) {}),
			http.StatusTooManyRequests, violation, "The disruption budget web does not allow evicting pods currently", 0},
	}
	e := &eviction{dryRun: true}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := e.checkAndDecrement(context.Background(), "web-0", tc.pdb)
			se, ok := err.(*apierrors.StatusError)
			if !ok {
				t.Fatalf("got %v, want a Status error", err)
			}
			st := se.ErrStatus
			if st.Code != tc.code || st.Message != tc.msg || st.Details == nil || st.Details.RetryAfterSeconds != tc.retryAfter ||
				len(st.Details.Causes) != 1 || st.Details.Causes[0].Type != policyv1.DisruptionBudgetCause || st.Details.Causes[0].Message != tc.cause {
				t.Errorf("got %d %q %+v\nwant %d %q cause %q retryAfter %d", st.Code, st.Message, st.Details, tc.code, tc.msg, tc.cause, tc.retryAfter)
			}
		})
	}
	t.Run("allowed", func(t *testing.T) {
		if err := e.checkAndDecrement(context.Background(), "web-0", budget(func(p *policyv1.PodDisruptionBudget) { p.Status.DisruptionsAllowed = 1 })); err != nil {
			t.Errorf("got %v, want the eviction allowed", err)
		}
	})
}

func TestEvictionDeleteOptions(t *testing.T) {
	all := []string{metav1.DryRunAll}
	ev := func(o *metav1.DeleteOptions) *policyv1.Eviction { return &policyv1.Eviction{DeleteOptions: o} }
	if o, err := evictionDeleteOptions(ev(nil), all); err != nil || len(o.DryRun) != 1 {
		t.Errorf("no options: %+v, %v", o, err)
	}
	grace := int64(5)
	if o, err := evictionDeleteOptions(ev(&metav1.DeleteOptions{GracePeriodSeconds: &grace}), all); err != nil || len(o.DryRun) != 1 || *o.GracePeriodSeconds != 5 {
		t.Errorf("options without dryRun: %+v, %v", o, err)
	}
	if o, err := evictionDeleteOptions(ev(&metav1.DeleteOptions{DryRun: all}), nil); err != nil || len(o.DryRun) != 1 {
		t.Errorf("dryRun in the body only: %+v, %v", o, err)
	}
	_, err := evictionDeleteOptions(ev(&metav1.DeleteOptions{DryRun: []string{"Some"}}), all)
	if err == nil || err.Error() != "Non-matching dry-run options in request and content: [All] and [Some]" {
		t.Errorf("mismatched dryRun: %v", err)
	}
}

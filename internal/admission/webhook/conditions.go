package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kpipe/kpipe/internal/admission"
	policycel "github.com/kpipe/kpipe/internal/admission/cel"
)

// conditionCostBudget is kube's runtime cost budget of a webhook's
// matchConditions (a variable for tests).
var conditionCostBudget int64 = policycel.MatchConditionsBudget

// conditions are a webhook's matchConditions, compiled by the compiler
// validation uses (internal/admission/cel), in kube's environment of
// webhook match conditions: object, oldObject, request (kube's
// AdmissionRequest type), namespaceObject (null for webhooks),
// authorizer and authorizer.requestResource.
type conditions struct {
	compiled *policycel.Compiled
}

// compileConditions compiles a webhook's matchConditions once per
// configuration generation, as stored expressions; nil without any.
func compileConditions(mcs []admissionregistrationv1.MatchCondition) *conditions {
	if len(mcs) == 0 {
		return nil
	}
	srcs := make([]string, len(mcs))
	for i, mc := range mcs {
		srcs[i] = mc.Expression
	}
	return &conditions{compiled: policycel.CompileMatchConditions(srcs)}
}

// match evaluates the conditions as kube: any false one skips the
// webhook; errors (with none false) fail the request under failurePolicy
// Fail with 403, and skip the webhook under Ignore. m's Authorizer answers
// the `authorizer` checks, for the request's user; its Metrics record the
// evaluation, and the webhook skipped, as kube's.
func (c *conditions) match(ctx context.Context, h *Hook, a *admission.Attributes, req *Request, m *RuleMatcher) (bool, error) {
	start := time.Now()
	in, err := req.celInput()
	matched, evalErrors := false, 0
	if err == nil {
		r := req.Resource()
		op := a.Op
		in.Authorizer, in.RequestResource = admission.UserAuthorizers(ctx, m.Authorizer, r.Group, r.Resource, op.Subresource, op.Namespace, a.Name())
		matched, evalErrors, err = c.compiled.MatchCounting(ctx, in, conditionCostBudget)
		m.Metrics.ObserveEvaluation(h.Name, admission.MatchKindWebhook, m.Type, a.Operation, time.Since(start), matched && err == nil, evalErrors)
	}
	if err != nil && !h.Ignore() {
		return false, apierrors.NewForbidden(a.Op.Resource.GroupResource(), a.Name(), err)
	}
	if err != nil || !matched {
		m.Metrics.ObserveExclusion(h.Name, admission.MatchKindWebhook, m.Type, a.Operation)
		return false, nil
	}
	return true, nil
}

// celInput are object, oldObject and request as CEL sees them: request
// is kube's AdmissionRequest for CEL (CreateAdmissionRequest), the
// review's request without uid, object and oldObject.
func (r *Request) celInput() (policycel.Input, error) {
	review, err := r.Review("")
	if err != nil {
		return policycel.Input{}, err
	}
	toMap := func(raw []byte) (map[string]any, error) {
		if len(raw) == 0 {
			return nil, nil
		}
		var v map[string]any
		return v, json.Unmarshal(raw, &v)
	}
	object, err := toMap(review.Request.Object.Raw)
	if err != nil {
		return policycel.Input{}, err
	}
	old, err := toMap(review.Request.OldObject.Raw)
	if err != nil {
		return policycel.Input{}, err
	}
	rq := *review.Request
	rq.Object.Raw, rq.OldObject.Raw = nil, nil
	b, err := json.Marshal(&rq)
	if err != nil {
		return policycel.Input{}, err
	}
	var request map[string]any
	if err := json.Unmarshal(b, &request); err != nil {
		return policycel.Input{}, err
	}
	if request == nil {
		return policycel.Input{}, errors.New("no request")
	}
	delete(request, "uid")
	delete(request, "object")
	delete(request, "oldObject")
	return policycel.Input{Object: object, OldObject: old, Request: request}, nil
}

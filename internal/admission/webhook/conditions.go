package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/kpipe/kpipe/internal/admission"
)

// conditionCostBudget is kube's runtime cost budget of a webhook's
// matchConditions (a variable for tests).
var conditionCostBudget uint64 = 2500000

// conditions are a webhook's compiled matchConditions. The variables are
// kube's object, oldObject and request, untyped (kube types them from
// the schema); `authorizer` is not offered.
type conditions struct {
	items []condition
}

type condition struct {
	name       string
	expression string
	program    cel.Program
	err        error // compile error: fails the evaluation
}

var conditionEnv = func() *cel.Env {
	env, err := cel.NewEnv(
		cel.Variable("object", cel.DynType),
		cel.Variable("oldObject", cel.DynType),
		cel.Variable("request", cel.DynType),
		ext.Strings(), ext.Sets(), ext.Lists(), ext.Encoders(),
	)
	if err != nil {
		panic(err)
	}
	return env
}()

// compileConditions compiles a webhook's matchConditions once per
// configuration generation; nil without any.
func compileConditions(mcs []admissionregistrationv1.MatchCondition) *conditions {
	if len(mcs) == 0 {
		return nil
	}
	c := &conditions{}
	for _, mc := range mcs {
		item := condition{name: mc.Name, expression: mc.Expression}
		ast, iss := conditionEnv.Compile(mc.Expression)
		switch {
		case iss.Err() != nil:
			item.err = fmt.Errorf("compilation failed: %v", iss.Err())
		case ast.OutputType() != cel.BoolType && ast.OutputType() != cel.DynType:
			item.err = fmt.Errorf("compilation failed: must evaluate to bool, got %v", ast.OutputType())
		default:
			item.program, item.err = conditionEnv.Program(ast, cel.CostLimit(conditionCostBudget), cel.InterruptCheckFrequency(100),
				cel.EvalOptions(cel.OptTrackCost))
		}
		c.items = append(c.items, item)
	}
	return c
}

// match evaluates the conditions as kube: any false one skips the
// webhook; errors (with none false) fail the request under failurePolicy
// Fail with 403, and skip the webhook under Ignore.
func (c *conditions) match(ctx context.Context, h *Hook, a *admission.Attributes, req *Request) (bool, error) {
	vars, err := req.celVariables()
	var errs []error
	budget := conditionCostBudget // shared by all the conditions, as kube's
	if err != nil {
		errs = append(errs, err)
	} else {
		for _, it := range c.items {
			if it.err != nil {
				errs = append(errs, it.err)
				continue
			}
			out, det, err := it.program.ContextEval(ctx, vars)
			if det == nil || det.ActualCost() == nil || *det.ActualCost() > budget {
				errs = []error{errors.New("validation failed due to running out of cost budget, no further validation rules will be run")}
				break
			}
			budget -= *det.ActualCost()
			if err != nil {
				errs = append(errs, fmt.Errorf("expression '%v' resulted in error: %v", it.expression, err))
				continue
			}
			b, ok := out.(types.Bool)
			if !ok {
				errs = append(errs, fmt.Errorf("matchCondition %q: must evaluate to bool", it.name))
				continue
			}
			if !bool(b) {
				return false, nil
			}
		}
	}
	if len(errs) == 0 {
		return true, nil
	}
	if h.Ignore() {
		return false, nil
	}
	return false, apierrors.NewForbidden(a.Op.Resource.GroupResource(), a.Name(), utilerrors.NewAggregate(errs))
}

// celVariables are object, oldObject and request as CEL sees them.
func (r *Request) celVariables() (map[string]any, error) {
	review, err := r.Review("")
	if err != nil {
		return nil, err
	}
	toMap := func(raw []byte) (any, error) {
		if len(raw) == 0 {
			return nil, nil
		}
		var v any
		return v, json.Unmarshal(raw, &v)
	}
	object, err := toMap(review.Request.Object.Raw)
	if err != nil {
		return nil, err
	}
	old, err := toMap(review.Request.OldObject.Raw)
	if err != nil {
		return nil, err
	}
	rq := *review.Request
	rq.Object.Raw, rq.OldObject.Raw = nil, nil
	b, err := json.Marshal(&rq)
	if err != nil {
		return nil, err
	}
	var request map[string]any
	if err := json.Unmarshal(b, &request); err != nil {
		return nil, err
	}
	delete(request, "object")
	delete(request, "oldObject")
	if request == nil {
		return nil, errors.New("no request")
	}
	return map[string]any{"object": object, "oldObject": old, "request": request}, nil
}

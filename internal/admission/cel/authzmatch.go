package cel

import (
	"context"
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
)

// Type names of an authorization webhook's `request`, kube's
// (k8s.io/apiserver/pkg/authorization/cel).
const sarSpecTypeName = "kubernetes.SubjectAccessReviewSpec"

func init() {
	selectorReq := types.NewObjectType("kubernetes.SelectorRequirement")
	selector := func() *structType {
		return &structType{fields: map[string]*types.Type{"rawSelector": types.StringType, "requirements": types.NewListType(selectorReq)}}
	}
	for name, t := range map[string]*structType{
		"kubernetes.SelectorRequirement": {fields: map[string]*types.Type{
			"key": types.StringType, "operator": types.StringType, "values": stringList,
		}},
		"kubernetes.FieldSelectorAttributes": selector(),
		"kubernetes.LabelSelectorAttributes": selector(),
		"kubernetes.ResourceAttributes": {fields: map[string]*types.Type{
			"namespace": types.StringType, "verb": types.StringType, "group": types.StringType,
			"version": types.StringType, "resource": types.StringType, "subresource": types.StringType,
			"name":          types.StringType,
			"fieldSelector": types.NewObjectType("kubernetes.FieldSelectorAttributes"),
			"labelSelector": types.NewObjectType("kubernetes.LabelSelectorAttributes"),
		}},
		"kubernetes.NonResourceAttributes": {fields: map[string]*types.Type{"path": types.StringType, "verb": types.StringType}},
		sarSpecTypeName: {fields: map[string]*types.Type{
			"resourceAttributes":    types.NewObjectType("kubernetes.ResourceAttributes"),
			"nonResourceAttributes": types.NewObjectType("kubernetes.NonResourceAttributes"),
			"user":                  types.StringType, "uid": types.StringType, "groups": stringList,
			"extra": types.NewMapType(types.StringType, stringList),
		}},
	} {
		staticTypes[name] = t
	}
}

var (
	authzEnvOnce sync.Once
	authzEnv     *cel.Env
	authzEnvErr  error
)

// authorizationEnv is kube's environment of authorization webhook match
// conditions: the base libraries (StoredExpressions, as kube compiles
// its config file) and `request`, a SubjectAccessReviewSpec.
func authorizationEnv() (*cel.Env, error) {
	authzEnvOnce.Do(func() {
		b, err := base(StoredExpressions)
		if err != nil {
			authzEnvErr = err
			return
		}
		p := &provider{Provider: b.CELTypeProvider(), local: map[string]*structType{}}
		authzEnv, authzEnvErr = b.Extend(cel.CustomTypeProvider(p), cel.Variable(RequestVar, cel.ObjectType(sarSpecTypeName)))
	})
	return authzEnv, authzEnvErr
}

// CompileAuthorizationMatchCondition compiles one of an authorization
// webhook's matchConditions: a bool over `request`.
func CompileAuthorizationMatchCondition(src string) Expression {
	env, err := authorizationEnv()
	if err != nil {
		return Expression{Source: src, Err: internal("unexpected error loading CEL environment: %v", err)}
	}
	return compileExpr(env, src, []*cel.Type{cel.BoolType})
}

// EvalBool evaluates a compiled bool expression with vars, with kube's
// authorization matcher's error messages.
func (x *Expression) EvalBool(ctx context.Context, vars map[string]any) (bool, error) {
	if x.Err != nil {
		return false, fmt.Errorf("compilation error: %v", x.Err)
	}
	if x.prog == nil {
		return false, fmt.Errorf("unexpected internal error compiling expression")
	}
	v, _, err := x.prog.ContextEval(ctx, vars)
	if err != nil {
		return false, fmt.Errorf("cel evaluation error: expression '%v' resulted in error: %w", x.Source, err)
	}
	b, ok := v.Value().(bool)
	if !ok || v.Type() != types.BoolType {
		return false, fmt.Errorf("cel evaluation error: expression '%v' eval result type should be bool but got %v", x.Source, v.Type())
	}
	return b, nil
}

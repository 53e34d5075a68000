package cel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// variablesTypeName is the object type of `variables`, kube's name.
const variablesTypeName = "kubernetes.variables"

// Expression is one compiled expression: a program, or the error that
// kept it from compiling.
type Expression struct {
	Source string
	Err    *Error
	prog   cel.Program
	out    *cel.Type
}

// Variable is a compiled composited variable.
type Variable struct {
	Name string
	Expression
}

// Compiled is a policy's compiled expressions, in the spec's order.
// Messages[i] is validation i's messageExpression, nil without one.
type Compiled struct {
	Variables        []Variable
	MatchConditions  []Expression
	Validations      []Expression
	Messages         []*Expression
	AuditAnnotations []Expression
	varIndex         map[string]int
}

// Options choose the declared types of the variables. Without a model
// `object`, `oldObject` and `params` are dyn, as at admission; the type
// checker names the OpenAPI models of the matched kind and the param kind.
type Options struct {
	// HasParams declares `params` (the policy has a paramKind).
	HasParams bool
	// ObjectModel and ParamsModel are generated OpenAPI model names
	// ("io.k8s.api.apps.v1.Deployment"); "" is dyn.
	ObjectModel, ParamsModel string
	// Env is NewExpressions (validation of what is written) or
	// StoredExpressions (admission).
	Env EnvType
}

var (
	boolTypes       = []*cel.Type{cel.BoolType}
	stringTypes     = []*cel.Type{cel.StringType}
	annotationTypes = []*cel.Type{cel.StringType, cel.NullType}
	anyTypes        = []*cel.Type{cel.AnyType}
)

// Compile compiles every expression of a policy spec. Errors are kept
// per expression: a policy with one bad expression still evaluates the
// others, and the bad one fails at admission under the failure policy.
func Compile(spec *admissionregistrationv1.ValidatingAdmissionPolicySpec, opts Options) *Compiled {
	c := &Compiled{varIndex: map[string]int{}}
	env, vt, err := newPolicyEnv(opts)
	if err != nil {
		e := internal("unexpected error loading CEL environment: %v", err)
		fail := func(src string) Expression { return Expression{Source: src, Err: e} }
		for _, v := range spec.Variables {
			c.Variables = append(c.Variables, Variable{Name: v.Name, Expression: fail(v.Expression)})
		}
		for _, m := range spec.MatchConditions {
			c.MatchConditions = append(c.MatchConditions, fail(m.Expression))
		}
		for _, v := range spec.Validations {
			c.Validations = append(c.Validations, fail(v.Expression))
			var msg *Expression
			if v.MessageExpression != "" {
				x := fail(v.MessageExpression)
				msg = &x
			}
			c.Messages = append(c.Messages, msg)
		}
		for _, a := range spec.AuditAnnotations {
			c.AuditAnnotations = append(c.AuditAnnotations, fail(a.ValueExpression))
		}
		return c
	}
	for i, v := range spec.Variables {
		x := compileExpr(env, v.Expression, anyTypes)
		t := x.out
		if x.Err != nil || t == nil {
			t = cel.DynType
		}
		if _, dup := vt.fields[v.Name]; !dup {
			vt.fields[v.Name] = t
			c.varIndex[v.Name] = i
		}
		c.Variables = append(c.Variables, Variable{Name: v.Name, Expression: x})
	}
	for _, m := range spec.MatchConditions {
		c.MatchConditions = append(c.MatchConditions, compileExpr(env, m.Expression, boolTypes))
	}
	for _, v := range spec.Validations {
		c.Validations = append(c.Validations, compileExpr(env, v.Expression, boolTypes))
		var msg *Expression
		if v.MessageExpression != "" {
			x := compileExpr(env, v.MessageExpression, stringTypes)
			msg = &x
		}
		c.Messages = append(c.Messages, msg)
	}
	for _, a := range spec.AuditAnnotations {
		c.AuditAnnotations = append(c.AuditAnnotations, compileExpr(env, a.ValueExpression, annotationTypes))
	}
	return c
}

// CompileMatchCondition compiles one match condition, of a webhook or a
// policy, as kube's condition compiler does, at admission and in
// validation alike: a bool, with `authorizer` and without composited
// variables; `params` only with hasParams.
func CompileMatchCondition(src string, hasParams bool, t EnvType) Expression {
	env, err := matchConditionEnv(hasParams, t)
	if err != nil {
		return Expression{Source: src, Err: internal("unexpected error loading CEL environment: %v", err)}
	}
	return compileExpr(env, src, boolTypes)
}

type matchEnvKey struct {
	hasParams bool
	t         EnvType
}

// matchEnvs are the environments of match conditions, which declare no
// composited variables and so are the same for every expression.
var matchEnvs sync.Map // matchEnvKey -> *cel.Env

func matchConditionEnv(hasParams bool, t EnvType) (*cel.Env, error) {
	k := matchEnvKey{hasParams, t}
	if e, ok := matchEnvs.Load(k); ok {
		return e.(*cel.Env), nil
	}
	env, _, err := newEnv(Options{HasParams: hasParams, Env: t}, false)
	if err != nil {
		return nil, err
	}
	e, _ := matchEnvs.LoadOrStore(k, env)
	return e.(*cel.Env), nil
}

// CheckMatchCondition is CompileMatchCondition's error, nil when src
// compiles: what validation reports.
func CheckMatchCondition(src string, hasParams bool, t EnvType) *Error {
	x := CompileMatchCondition(src, hasParams, t)
	return x.Err
}

// CompileMatchConditions compiles a webhook's matchConditions for
// admission (StoredExpressions, no params).
func CompileMatchConditions(srcs []string) *Compiled {
	c := &Compiled{}
	for _, src := range srcs {
		c.MatchConditions = append(c.MatchConditions, CompileMatchCondition(src, false, StoredExpressions))
	}
	return c
}

// MatchConditionsBudget is kube's RuntimeCELCostBudgetMatchConditions:
// the cost all of one webhook's or binding's match conditions may spend.
const MatchConditionsBudget = 2500000

// Match evaluates c's match conditions as kube's matcher, on budget: no
// match if any is false, else the aggregate of the errors (nil if all
// are true), which the caller answers under its failure policy. An
// exhausted budget is the only error.
func (c *Compiled) Match(ctx context.Context, in Input, budget int64) (bool, error) {
	matched, _, err := c.MatchCounting(ctx, in, budget)
	return matched, err
}

// MatchCounting is Match, also counting the conditions that failed to
// evaluate before the first false one, as kube's evaluation error metric
// does.
func (c *Compiled) MatchCounting(ctx context.Context, in Input, budget int64) (matched bool, evalErrors int, err error) {
	ev := c.NewEvaluation(ctx, in)
	ev.Budget = budget
	var errs []error
	matched = true
	for i := range c.MatchConditions {
		v, err := ev.Eval(&c.MatchConditions[i])
		switch {
		case errors.Is(err, ErrOutOfBudget):
			return false, evalErrors, err
		case err != nil:
			errs = append(errs, err)
			if matched {
				evalErrors++
			}
		case v == types.False:
			matched = false
		}
	}
	if !matched {
		return false, evalErrors, nil
	}
	return true, evalErrors, utilerrors.NewAggregate(errs)
}

func newPolicyEnv(opts Options) (*cel.Env, *structType, error) {
	return newEnv(opts, true)
}

// newEnv is the environment of a policy's expressions; withVariables
// declares `variables`, whose fields the returned type collects.
func newEnv(opts Options, withVariables bool) (*cel.Env, *structType, error) {
	b, err := base(opts.Env)
	if err != nil {
		return nil, nil, err
	}
	vt := &structType{fields: map[string]*cel.Type{}}
	vt.getter = func(field string) ref.FieldGetter {
		return func(target any) (any, error) {
			lv, ok := target.(*lazyVars)
			if !ok {
				return nil, fmt.Errorf("variables are not available")
			}
			return lv.get(field)
		}
	}
	p := &provider{Provider: b.CELTypeProvider(), local: map[string]*structType{variablesTypeName: vt}}
	objType, paramsType := cel.DynType, cel.DynType
	if opts.ObjectModel != "" {
		objType = cel.ObjectType(opts.ObjectModel)
	}
	if opts.ParamsModel != "" {
		paramsType = cel.ObjectType(opts.ParamsModel)
	}
	envOpts := []cel.EnvOption{
		cel.CustomTypeProvider(p),
		cel.Variable(ObjectVar, objType),
		cel.Variable(OldObjectVar, objType),
		cel.Variable(RequestVar, cel.ObjectType(requestTypeName)),
		cel.Variable(NamespaceVar, cel.ObjectType(namespaceTypeName)),
		cel.Variable(AuthorizerVar, authorizerType),
		cel.Variable(RequestResourceAuthorizerVar, resourceCheckType),
		authzLib(),
		quantityLib(),
		netLib(),
		formatLib(),
		semverLib(),
	}
	if opts.HasParams {
		envOpts = append(envOpts, cel.Variable(ParamsVar, paramsType))
	}
	if withVariables {
		envOpts = append(envOpts, cel.Variable(VariablesVar, cel.ObjectType(variablesTypeName)))
	}
	env, err := b.Extend(envOpts...)
	return env, vt, err
}

// compileExpr is kube's CompileCELExpression: compile, check the result
// type, plan the program with the cost limit.
func compileExpr(env *cel.Env, src string, returnTypes []*cel.Type) Expression {
	x := Expression{Source: src}
	ast, iss := env.Compile(src)
	if iss != nil && iss.Err() != nil {
		x.Err = invalid("compilation failed: %s", iss.String())
		return x
	}
	found := false
	for _, rt := range returnTypes {
		if ast.OutputType().IsExactType(rt) || cel.AnyType.IsExactType(rt) {
			found = true
			break
		}
	}
	if !found {
		if len(returnTypes) == 1 {
			x.Err = invalid("must evaluate to %v but got %v", returnTypes[0].String(), ast.OutputType().String())
		} else {
			x.Err = invalid("must evaluate to one of %v but got %v", returnTypes, ast.OutputType().String())
		}
		return x
	}
	prog, err := env.Program(ast, programOptions()...)
	if err != nil {
		x.Err = internal("program instantiation failed: %v", err)
		return x
	}
	x.prog, x.out = prog, ast.OutputType()
	return x
}

// CheckExpression compiles src against a policy's variables with any
// result type: what kube's type checker does for each matched kind. It
// returns the compile error, nil when src checks.
func CheckExpression(spec *admissionregistrationv1.ValidatingAdmissionPolicySpec, opts Options, src string) *Error {
	env, vt, err := newPolicyEnv(opts)
	if err != nil {
		return internal("unexpected error loading CEL environment: %v", err)
	}
	for _, v := range spec.Variables {
		x := compileExpr(env, v.Expression, anyTypes)
		t := x.out
		if x.Err != nil || t == nil {
			t = cel.DynType
		}
		if _, dup := vt.fields[v.Name]; !dup {
			vt.fields[v.Name] = t
		}
	}
	return compileExpr(env, src, anyTypes).Err
}

// ErrOutOfBudget ends a policy's evaluation: the request's CEL cost
// budget is spent.
var ErrOutOfBudget = errors.New("validation failed due to running out of cost budget, no further validation rules will be run")

// Input are the values of a request's variables: unstructured objects
// (map[string]any), nil for null.
type Input struct {
	Object, OldObject, Params, Namespace map[string]any
	Request                              map[string]any
	// Authorizer and RequestResource are `authorizer` and
	// `authorizer.requestResource` (NewAuthorizer,
	// NewRequestResourceAuthorizer); nil leaves them unset.
	Authorizer, RequestResource ref.Val
}

// Evaluation evaluates a compiled policy's expressions on one input,
// charging their cost to one budget. Composited variables are evaluated
// at most once, when first used. Not safe for concurrent use.
type Evaluation struct {
	ctx    context.Context
	c      *Compiled
	act    *activation
	Budget int64
	// varCost is the cost of variables evaluated during the current
	// expression, charged with it.
	varCost int64
}

// NewEvaluation starts an evaluation with kube's per-request budget.
func (c *Compiled) NewEvaluation(ctx context.Context, in Input) *Evaluation {
	e := &Evaluation{ctx: ctx, c: c, Budget: RuntimeCostBudget}
	e.act = &activation{in: in, vars: &lazyVars{e: e, done: map[string]varResult{}}}
	return e
}

type varResult struct {
	val any
	err error
}

type lazyVars struct {
	e    *Evaluation
	done map[string]varResult
}

func (l *lazyVars) get(name string) (any, error) {
	if r, ok := l.done[name]; ok {
		return r.val, r.err
	}
	i, ok := l.e.c.varIndex[name]
	if !ok {
		return nil, fmt.Errorf("no such variable: %s", name)
	}
	v := &l.e.c.Variables[i]
	var r varResult
	if v.Err != nil {
		r.err = fmt.Errorf("composited variable %q fails to compile: %v", name, v.Err)
	} else {
		val, det, err := v.prog.ContextEval(l.e.ctx, l.e.act)
		if det != nil && det.ActualCost() != nil {
			l.e.varCost += int64(*det.ActualCost())
		}
		if err != nil {
			r.err = err
		} else {
			r.val = val
		}
	}
	l.done[name] = r
	return r.val, r.err
}

type activation struct {
	in   Input
	vars *lazyVars
}

func orNull(m map[string]any) any {
	if m == nil {
		return types.NullValue
	}
	return m
}

// ResolveName implements interpreter.Activation.
func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case ObjectVar:
		return orNull(a.in.Object), true
	case OldObjectVar:
		return orNull(a.in.OldObject), true
	case ParamsVar:
		return orNull(a.in.Params), true
	case NamespaceVar:
		return orNull(a.in.Namespace), true
	case RequestVar:
		return a.in.Request, true
	case VariablesVar:
		return a.vars, true
	case AuthorizerVar:
		if a.in.Authorizer != nil {
			return a.in.Authorizer, true
		}
	case RequestResourceAuthorizerVar:
		if a.in.RequestResource != nil {
			return a.in.RequestResource, true
		}
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (a *activation) Parent() interpreter.Activation { return nil }

// Eval evaluates x. Its error is kube's message; errors.Is(err,
// ErrOutOfBudget) means no further expression may run.
func (e *Evaluation) Eval(x *Expression) (ref.Val, error) {
	if x.Err != nil {
		return nil, fmt.Errorf("compilation error: %v", x.Err)
	}
	if x.prog == nil {
		return nil, errors.New("unexpected internal error compiling expression")
	}
	e.varCost = 0
	val, det, err := x.prog.ContextEval(e.ctx, e.act)
	if e.varCost > e.Budget {
		e.Budget = -1
		return nil, ErrOutOfBudget
	}
	e.Budget -= e.varCost
	if det == nil || det.ActualCost() == nil {
		return nil, fmt.Errorf("runtime cost could not be calculated for expression: %v, no further expression will be run: %w", x.Source, ErrOutOfBudget)
	}
	if c := *det.ActualCost(); c > math.MaxInt64 || int64(c) > e.Budget {
		e.Budget = -1
		return nil, ErrOutOfBudget
	} else {
		e.Budget -= int64(c)
	}
	if err != nil {
		return nil, fmt.Errorf("expression '%v' resulted in error: %v", x.Source, err)
	}
	return val, nil
}

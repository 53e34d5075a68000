package jwt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	admissioncel "github.com/kpipe/kpipe/internal/admission/cel"
	"github.com/kpipe/kpipe/internal/request"
)

// kube's CEL variables of the JWT authenticator.
const (
	claimsVar = "claims"
	userVar   = "user"
)

var (
	envOnce   sync.Once
	claimsEnv *cel.Env
	userEnv   *cel.Env
	envErr    error
)

// envs are kube's: its base environment (stored expressions) with
// `claims`, a map of the token's claims, or `user`, the mapped user
// (username, uid, groups, extra; a map here, an object type in kube).
func envs() (*cel.Env, *cel.Env, error) {
	envOnce.Do(func() {
		base, err := admissioncel.BaseEnv(admissioncel.StoredExpressions)
		if err != nil {
			envErr = err
			return
		}
		if claimsEnv, envErr = base.Extend(cel.Variable(claimsVar, cel.MapType(cel.StringType, cel.DynType))); envErr != nil {
			return
		}
		userEnv, envErr = base.Extend(cel.Variable(userVar, cel.MapType(cel.StringType, cel.DynType)))
	})
	return claimsEnv, userEnv, envErr
}

// celExpr is a compiled expression.
type celExpr struct {
	src     string
	message string // validation rules'
	key     string // extra mappings'
	ast     *cel.Ast
	prog    cel.Program
}

// compile compiles src in env for a result of type want (nil: any), with
// kube's error details, under p.
func compile(env *cel.Env, src string, want *cel.Type, p *field.Path) (*celExpr, *field.Error) {
	ast, issues := env.Compile(src)
	if issues != nil && issues.Err() != nil {
		return nil, field.Invalid(p, src, "compilation failed: "+issues.String())
	}
	if want != nil && !ast.OutputType().IsExactType(want) {
		return nil, field.Invalid(p, src, fmt.Sprintf("must evaluate to %v", want.String()))
	}
	prog, err := env.Program(ast, admissioncel.ProgramOptions()...)
	if err != nil {
		return nil, field.InternalError(p, fmt.Errorf("program instantiation failed: %v", err))
	}
	return &celExpr{src: src, ast: ast, prog: prog}, nil
}

// compiled are an issuer's expressions, built by Validate.
type compiled struct {
	username, groups, uid *celExpr
	extra                 []*celExpr
	claimRules            []*celExpr
	userRules             []*celExpr
}

func (c *compiled) usesClaims() bool {
	return c.username != nil || c.groups != nil || c.uid != nil || len(c.extra) > 0 || len(c.claimRules) > 0
}

// usesClaim is kube's check that an expression selects claims.<name>
// (claims.name, has(claims.name) or claims.?name).
func usesClaim(e *celExpr, name string) bool {
	if e == nil {
		return false
	}
	isClaims := func(x celast.Expr) bool { return x.Kind() == celast.IdentKind && x.AsIdent() == claimsVar }
	found := celast.MatchDescendants(celast.NavigateAST(e.ast.NativeRep()), func(x celast.NavigableExpr) bool {
		switch x.Kind() {
		case celast.SelectKind:
			s := x.AsSelect()
			return isClaims(s.Operand()) && s.FieldName() == name
		case celast.CallKind:
			c := x.AsCall()
			if c.FunctionName() != operators.OptSelect || len(c.Args()) != 2 || !isClaims(c.Args()[0]) {
				return false
			}
			l := c.Args()[1]
			return l.Kind() == celast.LiteralKind && l.AsLiteral() == types.String(name)
		}
		return false
	})
	return len(found) > 0
}

// claimsValue is the claims as CEL sees them: JSON decoded.
func claimsValue(c claims) (ref.Val, error) {
	m := make(map[string]any, len(c))
	for k, raw := range c {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("claim %q failed to unmarshal: %w", k, err)
		}
		m[k] = v
	}
	return wrapUnescape(types.DefaultTypeAdapter.NativeToValue(m)), nil
}

// eval runs e with name bound to v, with kube's error.
func (e *celExpr) eval(ctx context.Context, name string, v ref.Val) (ref.Val, error) {
	out, _, err := e.prog.ContextEval(ctx, map[string]any{name: v})
	if err != nil {
		return nil, fmt.Errorf("expression '%s' resulted in error: %w", e.src, err)
	}
	return out, nil
}

var anySliceType = reflect.TypeOf([]any{})

// stringList is kube's convertCELValueToStringList: a string or a list of
// strings; "" and [] are none, empty strings in a list are dropped.
func stringList(v ref.Val) ([]string, error) {
	const msg = "expression must return a string or a list of strings"
	switch v.Type() {
	case types.StringType:
		if s := v.Value().(string); s != "" {
			return []string{s}, nil
		}
		return nil, nil
	case types.NullType:
		return nil, nil
	case types.ListType:
		l, err := v.ConvertToNative(anySliceType)
		if err != nil {
			return nil, errors.New(msg)
		}
		var out []string
		for _, x := range l.([]any) {
			s, ok := x.(string)
			if !ok {
				return nil, errors.New(msg)
			}
			if s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	}
	return nil, errors.New(msg)
}

// checkRules is kube's: every rule is evaluated, then the first that is
// not true fails (checkValidationRulesEvaluation).
func checkRules(ctx context.Context, rules []*celExpr, name string, v ref.Val) error {
	outs := make([]ref.Val, len(rules))
	for i, r := range rules {
		out, err := r.eval(ctx, name, v)
		if err != nil {
			return err
		}
		outs[i] = out
	}
	for i, out := range outs {
		if out.Type() != types.BoolType {
			return errors.New("validation expression must return a boolean")
		}
		if !out.Value().(bool) {
			return fmt.Errorf("validation expression '%s' failed: %s", rules[i].src, rules[i].message)
		}
	}
	return nil
}

// userValue is the user as the `user` variable: kube's UserInfo fields.
func userValue(u *request.User) ref.Val {
	groups := u.Groups
	if groups == nil {
		groups = []string{}
	}
	extra := u.Extra
	if extra == nil {
		extra = map[string][]string{}
	}
	return types.DefaultTypeAdapter.NativeToValue(map[string]any{
		"username": u.Name, "uid": u.UID, "groups": groups, "extra": extra,
	})
}

// validateCEL compiles an issuer's expressions and checks kube's rules
// about them; the result is kept on the issuer for newIssuer.
func (is *Issuer) validateCEL(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	cenv, uenv, err := envs()
	if err != nil {
		return field.ErrorList{field.InternalError(p, err)}
	}
	c := &compiled{}
	add := func(dst **celExpr, src string, want *cel.Type, p *field.Path) {
		e, ferr := compile(cenv, src, want, p)
		if ferr != nil {
			errs = append(errs, ferr)
			return
		}
		*dst = e
	}
	seen := map[string]bool{}
	for i, r := range is.ClaimValidationRules {
		if r.Claim != "" || r.Expression == "" {
			continue
		}
		rp := p.Child("claimValidationRules").Index(i)
		if seen[r.Expression] {
			errs = append(errs, field.Duplicate(rp.Child("expression"), r.Expression))
			continue
		}
		seen[r.Expression] = true
		var e *celExpr
		add(&e, r.Expression, cel.BoolType, rp.Child("expression"))
		if e != nil {
			e.message = r.Message
			c.claimRules = append(c.claimRules, e)
		}
	}
	m := is.ClaimMappings
	mp := p.Child("claimMappings")
	if m.Username.Expression != "" && m.Username.Claim == "" {
		add(&c.username, m.Username.Expression, nil, mp.Child("username", "expression"))
	}
	if m.Groups.Expression != "" && m.Groups.Claim == "" {
		add(&c.groups, m.Groups.Expression, nil, mp.Child("groups", "expression"))
	}
	if m.UID.Expression != "" && m.UID.Claim == "" {
		add(&c.uid, m.UID.Expression, nil, mp.Child("uid", "expression"))
	}
	seenKeys := map[string]bool{}
	for i, x := range m.Extra {
		xp := mp.Child("extra").Index(i)
		errs = append(errs, validateExtraKey(x.Key, xp.Child("key"))...)
		if seenKeys[x.Key] {
			errs = append(errs, field.Duplicate(xp.Child("key"), x.Key))
			continue
		}
		seenKeys[x.Key] = true
		if x.ValueExpression == "" {
			errs = append(errs, field.Required(xp.Child("valueExpression"), ""))
			continue
		}
		var e *celExpr
		add(&e, x.ValueExpression, nil, xp.Child("valueExpression"))
		if e != nil {
			e.key = x.Key
			c.extra = append(c.extra, e)
		}
	}
	if usesClaim(c.username, "email") {
		verified := usesClaim(c.username, "email_verified")
		for _, e := range append(append([]*celExpr{}, c.extra...), c.claimRules...) {
			verified = verified || usesClaim(e, "email_verified")
		}
		if !verified {
			errs = append(errs, field.Invalid(mp.Child("username", "expression"), m.Username.Expression,
				"claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression"))
		}
	}
	seen = map[string]bool{}
	for i, r := range is.UserValidationRules {
		rp := p.Child("userValidationRules").Index(i)
		if r.Expression == "" {
			errs = append(errs, field.Required(rp.Child("expression"), ""))
			continue
		}
		if seen[r.Expression] {
			errs = append(errs, field.Duplicate(rp.Child("expression"), r.Expression))
			continue
		}
		seen[r.Expression] = true
		e, ferr := compile(uenv, r.Expression, cel.BoolType, rp.Child("expression"))
		if ferr != nil {
			errs = append(errs, ferr)
			continue
		}
		e.message = r.Message
		c.userRules = append(c.userRules, e)
	}
	is.cel = c
	return errs
}

// validateExtraKey is kube's: a lowercase, domain-prefixed path outside
// k8s.io and kubernetes.io.
func validateExtraKey(key string, p *field.Path) field.ErrorList {
	errs := utilvalidation.IsDomainPrefixedPath(p, key)
	if key != strings.ToLower(key) {
		errs = append(errs, field.Invalid(p, key, "must be lowercase"))
	}
	domain, _, _ := strings.Cut(key, "/")
	for _, reserved := range []string{"kubernetes.io", "k8s.io"} {
		if domain == reserved || strings.HasSuffix(domain, "."+reserved) {
			errs = append(errs, field.Invalid(p, key, "k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use"))
			break
		}
	}
	return errs
}

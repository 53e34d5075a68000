package cel

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
)

// Variable names of kube's authorizer library.
const (
	AuthorizerVar                = "authorizer"
	RequestResourceAuthorizerVar = "authorizer.requestResource"
)

// AuthzCheck is one question to the authorizer, kube's attributes record
// as its authz library fills it: a resource check (APIVersion "*") or a
// non-resource path check.
type AuthzCheck struct {
	User                                          AuthzUser
	Verb                                          string
	ResourceRequest                               bool
	Group, Resource, Subresource, Namespace, Name string
	Path                                          string
}

// AuthzUser is who a check is for.
type AuthzUser struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

// Authorizer answers checks: allowed, with a reason, or an error.
type Authorizer interface {
	Authorize(ctx context.Context, c AuthzCheck) (allowed bool, reason string, err error)
}

// Object type names, kube's.
const (
	authorizerTypeName    = "kubernetes.authorization.Authorizer"
	pathCheckTypeName     = "kubernetes.authorization.PathCheck"
	groupCheckTypeName    = "kubernetes.authorization.GroupCheck"
	resourceCheckTypeName = "kubernetes.authorization.ResourceCheck"
	decisionTypeName      = "kubernetes.authorization.Decision"
)

var (
	authorizerType    = cel.ObjectType(authorizerTypeName)
	pathCheckType     = cel.ObjectType(pathCheckTypeName)
	groupCheckType    = cel.ObjectType(groupCheckTypeName)
	resourceCheckType = cel.ObjectType(resourceCheckTypeName)
	decisionType      = cel.ObjectType(decisionTypeName)
)

func init() {
	// The authz types expose no fields, only receiver functions.
	for _, n := range []string{authorizerTypeName, pathCheckTypeName, groupCheckTypeName, resourceCheckTypeName, decisionTypeName} {
		staticTypes[n] = &structType{fields: map[string]*types.Type{}}
	}
}

// opaque is the ref.Val part shared by the authz values.
type opaque struct{ t *types.Type }

func (o opaque) ConvertToNative(typeDesc reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion error from '%s' to '%v'", o.t, typeDesc)
}

func (o opaque) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case o.t:
		return types.NewErr("type conversion not supported for '%s'", o.t)
	case types.TypeType:
		return o.t
	}
	return types.NewErr("type conversion error from '%s' to '%s'", o.t, t)
}

func (o opaque) Type() ref.Type { return o.t }
func (o opaque) Value() any     { return nil }

type authorizerVal struct {
	opaque
	ctx  context.Context
	user AuthzUser
	a    Authorizer
}

func (v authorizerVal) Equal(ref.Val) ref.Val { return types.False }

// authorize asks the authorizer about c for the requesting user.
func (v authorizerVal) authorize(c AuthzCheck) ref.Val {
	if v.a == nil {
		return decide(false, "", fmt.Errorf("no authorizer"))
	}
	c.User = v.user
	return decide(v.a.Authorize(v.ctx, c))
}

type pathCheckVal struct {
	opaque
	az   authorizerVal
	path string
}

func (v pathCheckVal) Equal(ref.Val) ref.Val { return types.False }

type groupCheckVal struct {
	opaque
	az    authorizerVal
	group string
}

func (v groupCheckVal) Equal(ref.Val) ref.Val { return types.False }

type resourceCheckVal struct {
	opaque
	az                                    authorizerVal
	group, resource, sub, namespace, name string
}

func (v resourceCheckVal) Equal(ref.Val) ref.Val { return types.False }

type decisionVal struct {
	opaque
	allowed bool
	reason  string
	err     error
}

func (v decisionVal) Equal(ref.Val) ref.Val { return types.False }

// NewAuthorizer is the value of `authorizer` for a request's user.
func NewAuthorizer(ctx context.Context, a Authorizer, u AuthzUser) ref.Val {
	return authorizerVal{opaque: opaque{types.NewObjectType(authorizerTypeName)}, ctx: ctx, user: u, a: a}
}

// NewRequestResourceAuthorizer is `authorizer.requestResource`: a
// resource check of the request's own resource.
func NewRequestResourceAuthorizer(ctx context.Context, a Authorizer, u AuthzUser, group, resource, sub, namespace, name string) ref.Val {
	az := NewAuthorizer(ctx, a, u).(authorizerVal)
	return resourceCheckVal{opaque: opaque{types.NewObjectType(resourceCheckTypeName)}, az: az,
		group: group, resource: resource, sub: sub, namespace: namespace, name: name}
}

func str(v ref.Val) (string, bool) {
	s, ok := v.(types.String)
	return string(s), ok
}

func resourceSetter(set func(r *resourceCheckVal, s string)) cel.OverloadOpt {
	return cel.BinaryBinding(func(a, b ref.Val) ref.Val {
		r, ok := a.(resourceCheckVal)
		s, ok2 := str(b)
		if !ok || !ok2 {
			return types.MaybeNoSuchOverloadErr(a)
		}
		set(&r, s)
		return r
	})
}

func decide(allowed bool, reason string, err error) ref.Val {
	return decisionVal{opaque: opaque{types.NewObjectType(decisionTypeName)}, allowed: allowed, reason: reason, err: err}
}

// authzLib is kube's authz library (without the field and label selector
// functions).
func authzLib() cel.EnvOption {
	decision := func(f func(decisionVal) ref.Val) cel.OverloadOpt {
		return cel.UnaryBinding(func(v ref.Val) ref.Val {
			d, ok := v.(decisionVal)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			return f(d)
		})
	}
	return cel.Lib(simpleLib{opts: []cel.EnvOption{
		cel.Function("path", cel.MemberOverload("authorizer_path", []*cel.Type{authorizerType, cel.StringType}, pathCheckType,
			cel.BinaryBinding(func(a, b ref.Val) ref.Val {
				az, ok := a.(authorizerVal)
				p, ok2 := str(b)
				if !ok || !ok2 {
					return types.MaybeNoSuchOverloadErr(a)
				}
				return pathCheckVal{opaque: opaque{types.NewObjectType(pathCheckTypeName)}, az: az, path: p}
			}))),
		cel.Function("group", cel.MemberOverload("authorizer_group", []*cel.Type{authorizerType, cel.StringType}, groupCheckType,
			cel.BinaryBinding(func(a, b ref.Val) ref.Val {
				az, ok := a.(authorizerVal)
				g, ok2 := str(b)
				if !ok || !ok2 {
					return types.MaybeNoSuchOverloadErr(a)
				}
				return groupCheckVal{opaque: opaque{types.NewObjectType(groupCheckTypeName)}, az: az, group: g}
			}))),
		cel.Function("serviceAccount", cel.MemberOverload("authorizer_serviceaccount", []*cel.Type{authorizerType, cel.StringType, cel.StringType}, authorizerType,
			cel.FunctionBinding(func(args ...ref.Val) ref.Val {
				az, ok := args[0].(authorizerVal)
				ns, ok2 := str(args[1])
				name, ok3 := str(args[2])
				if !ok || !ok2 || !ok3 {
					return types.NoSuchOverloadErr()
				}
				if errs := apimachineryvalidation.ValidateServiceAccountName(name, false); len(errs) > 0 {
					return types.NewErr("Invalid service account name")
				}
				if errs := apimachineryvalidation.ValidateNamespaceName(ns, false); len(errs) > 0 {
					return types.NewErr("Invalid service account namespace")
				}
				az.user = AuthzUser{Name: "system:serviceaccount:" + ns + ":" + name,
					Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns}}
				return az
			}))),
		cel.Function("resource", cel.MemberOverload("groupcheck_resource", []*cel.Type{groupCheckType, cel.StringType}, resourceCheckType,
			cel.BinaryBinding(func(a, b ref.Val) ref.Val {
				g, ok := a.(groupCheckVal)
				r, ok2 := str(b)
				if !ok || !ok2 {
					return types.MaybeNoSuchOverloadErr(a)
				}
				if strings.TrimSpace(r) == "" {
					return types.NewErr("resource must not be empty")
				}
				return resourceCheckVal{opaque: opaque{types.NewObjectType(resourceCheckTypeName)}, az: g.az, group: g.group, resource: r}
			}))),
		cel.Function("subresource", cel.MemberOverload("resourcecheck_subresource", []*cel.Type{resourceCheckType, cel.StringType}, resourceCheckType,
			resourceSetter(func(r *resourceCheckVal, s string) { r.sub = s }))),
		cel.Function("namespace", cel.MemberOverload("resourcecheck_namespace", []*cel.Type{resourceCheckType, cel.StringType}, resourceCheckType,
			resourceSetter(func(r *resourceCheckVal, s string) { r.namespace = s }))),
		cel.Function("name", cel.MemberOverload("resourcecheck_name", []*cel.Type{resourceCheckType, cel.StringType}, resourceCheckType,
			resourceSetter(func(r *resourceCheckVal, s string) { r.name = s }))),
		cel.Function("check",
			cel.MemberOverload("pathcheck_check", []*cel.Type{pathCheckType, cel.StringType}, decisionType,
				cel.BinaryBinding(func(a, b ref.Val) ref.Val {
					p, ok := a.(pathCheckVal)
					verb, ok2 := str(b)
					if !ok || !ok2 {
						return types.MaybeNoSuchOverloadErr(a)
					}
					return p.az.authorize(AuthzCheck{Verb: verb, Path: p.path})
				})),
			cel.MemberOverload("resourcecheck_check", []*cel.Type{resourceCheckType, cel.StringType}, decisionType,
				cel.BinaryBinding(func(a, b ref.Val) ref.Val {
					r, ok := a.(resourceCheckVal)
					verb, ok2 := str(b)
					if !ok || !ok2 {
						return types.MaybeNoSuchOverloadErr(a)
					}
					return r.az.authorize(AuthzCheck{Verb: verb, ResourceRequest: true,
						Group: r.group, Resource: r.resource, Subresource: r.sub, Namespace: r.namespace, Name: r.name})
				}))),
		cel.Function("errored", cel.MemberOverload("decision_errored", []*cel.Type{decisionType}, cel.BoolType,
			decision(func(d decisionVal) ref.Val { return types.Bool(d.err != nil) }))),
		cel.Function("error", cel.MemberOverload("decision_error", []*cel.Type{decisionType}, cel.StringType,
			decision(func(d decisionVal) ref.Val {
				if d.err == nil {
					return types.String("")
				}
				return types.String(d.err.Error())
			}))),
		cel.Function("allowed", cel.MemberOverload("decision_allowed", []*cel.Type{decisionType}, cel.BoolType,
			decision(func(d decisionVal) ref.Val { return types.Bool(d.allowed) }))),
		cel.Function("reason", cel.MemberOverload("decision_reason", []*cel.Type{decisionType}, cel.StringType,
			decision(func(d decisionVal) ref.Val { return types.String(d.reason) }))),
	}})
}

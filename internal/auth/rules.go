package auth

import (
	"context"
	"errors"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kpipe/kpipe/internal/request"
)

// RuleResolver lists the rules a user holds in a namespace (cluster-wide
// rules included), as kube's authorizer.RuleResolver. SelfSubjectRulesReview
// and RBAC's escalation check read it. incomplete says some rules could not
// be listed (kube's evaluationError).
type RuleResolver interface {
	RulesFor(ctx context.Context, u *request.User, namespace string) (rules []rbacv1.PolicyRule, incomplete bool, err error)
}

// RoleRefResolver is RBAC's part of rule resolution: the rules a binding's
// roleRef grants, looked up in namespace for a Role.
type RoleRefResolver interface {
	RoleRefRules(ctx context.Context, ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error)
}

// ErrNoRuleResolver is returned when no configured authorizer can list
// rules: callers treat the answer as incomplete or refuse.
var ErrNoRuleResolver = errors.New("no authorizer that can list rules is configured")

// RulesFor asks the current authorizer for u's rules.
func (h *Holder) RulesFor(ctx context.Context, u *request.User, namespace string) ([]rbacv1.PolicyRule, bool, error) {
	r, ok := h.Current().(RuleResolver)
	if !ok {
		return nil, true, ErrNoRuleResolver
	}
	return r.RulesFor(ctx, u, namespace)
}

// RoleRefRules asks the current authorizer for the rules of a roleRef.
func (h *Holder) RoleRefRules(ctx context.Context, ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	r, ok := h.Current().(RoleRefResolver)
	if !ok {
		return nil, ErrNoRuleResolver
	}
	return r.RoleRefRules(ctx, ref, namespace)
}

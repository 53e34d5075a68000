package authorization

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/request"
)

var (
	_ auth.RuleResolver    = (*Stage)(nil)
	_ auth.RoleRefResolver = (*Stage)(nil)
)

// RulesFor implements auth.RuleResolver as kube's union does: the rules of
// every authorizer that can list them, in order. An authorizer that cannot
// makes the answer incomplete.
func (s *Stage) RulesFor(ctx context.Context, u *request.User, namespace string) ([]rbacv1.PolicyRule, bool, error) {
	var rules []rbacv1.PolicyRule
	var errs []error
	incomplete := false
	for _, z := range s.authorizers {
		r, ok := z.Authorizer.(auth.RuleResolver)
		if !ok {
			incomplete = true
			continue
		}
		rs, inc, err := r.RulesFor(ctx, u, namespace)
		rules = append(rules, rs...)
		incomplete = incomplete || inc
		if err != nil {
			errs = append(errs, err)
		}
	}
	return rules, incomplete, utilerrors.NewAggregate(errs)
}

// RoleRefRules implements auth.RoleRefResolver with the first authorizer
// that resolves role references (rbac).
func (s *Stage) RoleRefRules(ctx context.Context, ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	for _, z := range s.authorizers {
		if r, ok := z.Authorizer.(auth.RoleRefResolver); ok {
			return r.RoleRefRules(ctx, ref, namespace)
		}
	}
	return nil, auth.ErrNoRuleResolver
}

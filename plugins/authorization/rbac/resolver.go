package rbac

import (
	"context"
	"sort"

	rbacv1 "k8s.io/api/rbac/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/request"
)

var (
	_ auth.RuleResolver    = (*Authorizer)(nil)
	_ auth.RoleRefResolver = (*Authorizer)(nil)
)

// RulesFor implements auth.RuleResolver from the cache, as kube's RBAC
// RulesFor: the rules of every ClusterRoleBinding naming u, then of the
// RoleBindings of namespace naming u. A binding to a missing role makes the
// list incomplete, with the error.
func (z *Authorizer) RulesFor(_ context.Context, u *request.User, namespace string) ([]rbacv1.PolicyRule, bool, error) {
	select {
	case <-z.cache.synced():
	default:
		return nil, true, errNotSynced
	}
	rules, errs := z.cache.rulesFor(u, namespace)
	// As kube's RBAC, missing roles are an error, not incompleteness.
	return rules, false, utilerrors.NewAggregate(errs)
}

// RoleRefRules implements auth.RoleRefResolver: an aggregated ClusterRole
// gives the rules aggregation computed.
func (z *Authorizer) RoleRefRules(_ context.Context, ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	select {
	case <-z.cache.synced():
	default:
		return nil, errNotSynced
	}
	z.cache.refresh()
	z.cache.mu.RLock()
	defer z.cache.mu.RUnlock()
	rules, err := z.cache.rules(ref, namespace)
	return append([]rbacv1.PolicyRule(nil), rules...), err
}

func (c *cache) rulesFor(u *request.User, namespace string) ([]rbacv1.PolicyRule, []error) {
	c.refresh()
	c.mu.RLock()
	defer c.mu.RUnlock()
	var rules []rbacv1.PolicyRule
	var errs []error
	// Bindings in name order, so a review answers the same every time.
	crbs := make([]*rbacv1.ClusterRoleBinding, 0, len(c.clusterRoleBindings))
	for _, b := range c.clusterRoleBindings {
		crbs = append(crbs, b)
	}
	sort.Slice(crbs, func(i, j int) bool { return crbs[i].Name < crbs[j].Name })
	for _, b := range crbs {
		if !appliesTo(u, b.Subjects, "") {
			continue
		}
		rs, err := c.rules(b.RoleRef, "")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rules = append(rules, rs...)
	}
	if namespace == "" {
		return rules, errs
	}
	rbs := make([]*rbacv1.RoleBinding, 0, len(c.roleBindings[namespace]))
	for _, b := range c.roleBindings[namespace] {
		rbs = append(rbs, b)
	}
	sort.Slice(rbs, func(i, j int) bool { return rbs[i].Name < rbs[j].Name })
	for _, b := range rbs {
		if !appliesTo(u, b.Subjects, namespace) {
			continue
		}
		rs, err := c.rules(b.RoleRef, namespace)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rules = append(rules, rs...)
	}
	return rules, errs
}

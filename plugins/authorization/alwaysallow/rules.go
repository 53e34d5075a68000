package alwaysallow

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/request"
)

var _ auth.RuleResolver = Authorizer{}

// RulesFor implements auth.RuleResolver as kube's: everything.
func (Authorizer) RulesFor(context.Context, *request.User, string) ([]rbacv1.PolicyRule, bool, error) {
	return []rbacv1.PolicyRule{
		{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
		{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
	}, false, nil
}

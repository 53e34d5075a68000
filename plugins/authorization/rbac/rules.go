package rbac

import (
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/request"
)

// ruleAllows reports whether rule covers the request a, with kube's
// matching: "*" wildcards, "<resource>/<subresource>" and "*/<subresource>",
// resourceNames (an empty list means any), and nonResourceURLs ending in "*".
func ruleAllows(a *auth.Attributes, rule *rbacv1.PolicyRule) bool {
	if !has(rule.Verbs, a.Verb, rbacv1.VerbAll) {
		return false
	}
	if !a.ResourceRequest {
		return urlMatches(rule.NonResourceURLs, a.Path)
	}
	return has(rule.APIGroups, a.APIGroup, rbacv1.APIGroupAll) &&
		resourceMatches(rule.Resources, a.Resource, a.Subresource) &&
		(len(rule.ResourceNames) == 0 || has(rule.ResourceNames, a.Name, ""))
}

// has reports whether list holds want or the wildcard (when not "").
func has(list []string, want, wildcard string) bool {
	for _, s := range list {
		if s == want || (wildcard != "" && s == wildcard) {
			return true
		}
	}
	return false
}

func resourceMatches(rules []string, resource, sub string) bool {
	combined := resource
	if sub != "" {
		combined += "/" + sub
	}
	for _, r := range rules {
		switch {
		case r == rbacv1.ResourceAll, r == combined:
			return true
		case sub != "" && r == "*/"+sub:
			return true
		}
	}
	return false
}

func urlMatches(rules []string, path string) bool {
	for _, r := range rules {
		switch {
		case r == rbacv1.NonResourceAll, r == path:
			return true
		case strings.HasSuffix(r, "*") && strings.HasPrefix(path, strings.TrimRight(r, "*")):
			return true
		}
	}
	return false
}

// appliesTo reports whether one of subjects is u. A ServiceAccount subject
// without a namespace takes the binding's namespace.
func appliesTo(u *request.User, subjects []rbacv1.Subject, namespace string) bool {
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			if u.Name == s.Name {
				return true
			}
		case rbacv1.GroupKind:
			if has(u.Groups, s.Name, "") {
				return true
			}
		case rbacv1.ServiceAccountKind:
			ns := s.Namespace
			if ns == "" {
				ns = namespace
			}
			if ns != "" && u.Name == "system:serviceaccount:"+ns+":"+s.Name {
				return true
			}
		}
	}
	return false
}

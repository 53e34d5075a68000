// Package rbacguard is kube's RBAC escalation check, run on every create
// and update of Roles, ClusterRoles and their bindings by the validate
// stage before it validates (as kube's RBAC storage checks before its
// strategy does), or else by the terminal stage (kube does it in the
// registry, so no admission list can switch it off): a user may only
// grant permissions it holds, unless it may `escalate` the role or `bind`
// the referenced role. system:masters (the loopback user among them) is
// not checked, as in kube.
package rbacguard

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	rbacvalidation "k8s.io/component-helpers/auth/rbac/validation"

	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/request"
)

// Guard checks RBAC writes against the authorization stage's decision and
// rules.
type Guard struct {
	Authorizer *auth.Holder
}

// fullAuthority is cluster-admin's: needed to set an aggregationRule.
var fullAuthority = []rbacv1.PolicyRule{
	{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
	{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
}

// Check is an api.Resource WriteCheck: obj is about to be stored over old
// (nil on create).
func (g *Guard) Check(ctx context.Context, obj, old runtime.Object) error {
	u, _ := request.UserFrom(ctx)
	if u != nil && privileged(u) {
		return nil
	}
	info, _ := request.InfoFrom(ctx)
	if info == nil {
		info = &request.RequestInfo{}
	}
	if old != nil && onlyGCFields(obj, old) {
		return nil
	}
	switch o := obj.(type) {
	case *rbacv1.Role:
		if g.escalateAllowed(ctx, u, info) {
			return nil
		}
		return forbid("roles", o.Name, g.confirmNoEscalation(ctx, u, info.Namespace, o.Rules))
	case *rbacv1.ClusterRole:
		if g.escalateAllowed(ctx, u, info) {
			return nil
		}
		if err := g.confirmNoEscalation(ctx, u, "", o.Rules); err != nil {
			return forbid("clusterroles", o.Name, err)
		}
		oldRole, _ := old.(*rbacv1.ClusterRole)
		if aggregates(o) || (oldRole != nil && aggregates(oldRole)) {
			if g.confirmNoEscalation(ctx, u, "", fullAuthority) != nil {
				return forbid("clusterroles", o.Name, errors.New("must have cluster-admin privileges to use the aggregationRule"))
			}
		}
		return nil
	case *rbacv1.RoleBinding:
		return g.checkBinding(ctx, u, "rolebindings", o.Name, o.RoleRef, o.Namespace)
	case *rbacv1.ClusterRoleBinding:
		return g.checkBinding(ctx, u, "clusterrolebindings", o.Name, o.RoleRef, "")
	}
	return nil
}

func privileged(u *request.User) bool {
	for _, g := range u.Groups {
		if g == request.SystemPrivileged {
			return true
		}
	}
	return false
}

func aggregates(r *rbacv1.ClusterRole) bool {
	return r.AggregationRule != nil && len(r.AggregationRule.ClusterRoleSelectors) > 0
}

func forbid(resource, name string, err error) error {
	if err == nil {
		return nil
	}
	return apierrors.NewForbidden(schema.GroupResource{Group: rbacv1.GroupName, Resource: resource}, name, err)
}

// escalateAllowed asks for the escalate verb on the role being written.
func (g *Guard) escalateAllowed(ctx context.Context, u *request.User, info *request.RequestInfo) bool {
	if u == nil || !info.IsResourceRequest || info.APIGroup != rbacv1.GroupName ||
		(info.Resource != "roles" && info.Resource != "clusterroles") {
		return false
	}
	d, _, _ := g.Authorizer.Authorize(ctx, &auth.Attributes{
		User: u, Verb: "escalate", APIGroup: info.APIGroup, APIVersion: "*",
		Resource: info.Resource, Name: info.Name, Namespace: info.Namespace, ResourceRequest: true,
	})
	return d == auth.Allow
}

// checkBinding lets a binding through when the user may bind its role, or
// holds every permission the role grants.
func (g *Guard) checkBinding(ctx context.Context, u *request.User, resource, name string, ref rbacv1.RoleRef, namespace string) error {
	if u != nil {
		a := &auth.Attributes{User: u, Verb: "bind", Namespace: namespace, ResourceRequest: true,
			APIGroup: ref.APIGroup, APIVersion: "*", Name: ref.Name}
		switch ref.Kind {
		case "ClusterRole":
			a.Resource = "clusterroles"
		case "Role":
			a.Resource = "roles"
		}
		if a.Resource != "" {
			if d, _, _ := g.Authorizer.Authorize(ctx, a); d == auth.Allow {
				return nil
			}
		}
	}
	rules, err := g.Authorizer.RoleRefRules(ctx, ref, namespace)
	if err != nil {
		return err
	}
	return forbid(resource, name, g.confirmNoEscalation(ctx, u, namespace, rules))
}

// confirmNoEscalation is kube's: the user's rules in namespace must cover
// rules; the refusal lists what is missing, compacted, one rule a line.
func (g *Guard) confirmNoEscalation(ctx context.Context, u *request.User, namespace string, rules []rbacv1.PolicyRule) error {
	if u == nil {
		return errors.New("no user on context")
	}
	owner, _, resolveErr := g.Authorizer.RulesFor(ctx, u, namespace)
	ok, missing := rbacvalidation.Covers(owner, rules)
	if ok {
		return nil
	}
	seen := map[string]bool{}
	var lines []string
	for _, r := range compact(missing) {
		s := compactString(r)
		if !seen[s] {
			seen[s] = true
			lines = append(lines, s)
		}
	}
	sort.Strings(lines)
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s", u.Name, u.Groups, strings.Join(lines, "\n"))
	if resolveErr != nil {
		msg += fmt.Sprintf("; resolution errors: %v", []error{resolveErr})
	}
	return errors.New(msg)
}

// compact merges rules that differ only in verbs and name one group, one
// resource and at most one resourceName, as kube's CompactRules.
func compact(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	type key struct{ group, resource, name string }
	var out []rbacv1.PolicyRule
	merged := map[key]int{}
	for _, r := range rules {
		simple := len(r.APIGroups) == 1 && len(r.Resources) == 1 && len(r.ResourceNames) <= 1 && len(r.NonResourceURLs) == 0
		if !simple {
			out = append(out, r)
			continue
		}
		k := key{r.APIGroups[0], r.Resources[0], ""}
		if len(r.ResourceNames) == 1 {
			k.name = "\x00" + r.ResourceNames[0]
		}
		if i, ok := merged[k]; ok {
			out[i].Verbs = append(out[i].Verbs, r.Verbs...)
			continue
		}
		merged[k] = len(out)
		out = append(out, *r.DeepCopy())
	}
	return out
}

// compactString is kube's rule format in escalation messages:
// {APIGroups:[""], Resources:["pods"], Verbs:["get"]}.
func compactString(r rbacv1.PolicyRule) string {
	var parts []string
	var args []any
	for _, f := range []struct {
		name string
		v    []string
	}{{"APIGroups", r.APIGroups}, {"Resources", r.Resources}, {"NonResourceURLs", r.NonResourceURLs}, {"ResourceNames", r.ResourceNames}, {"Verbs", r.Verbs}} {
		if len(f.v) > 0 {
			parts = append(parts, f.name+":%q")
			args = append(args, f.v)
		}
	}
	return fmt.Sprintf("{"+strings.Join(parts, ", ")+"}", args...)
}

// onlyGCFields reports an update that changes nothing but owner
// references, finalizers and managed fields, which kube lets through so
// garbage collection can proceed.
func onlyGCFields(obj, old runtime.Object) bool {
	c := obj.DeepCopyObject()
	cm, err1 := meta.Accessor(c)
	om, err2 := meta.Accessor(old)
	if err1 != nil || err2 != nil {
		return false
	}
	cm.SetOwnerReferences(om.GetOwnerReferences())
	cm.SetFinalizers(om.GetFinalizers())
	cm.SetSelfLink(om.GetSelfLink())
	cm.SetManagedFields(om.GetManagedFields())
	return equality.Semantic.DeepEqual(c, old)
}

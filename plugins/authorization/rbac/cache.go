package rbac

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/internal/storage/informer"
)

// The four RBAC resources the cache mirrors.
var resources = []string{"roles", "rolebindings", "clusterroles", "clusterrolebindings"}

// cache mirrors the RBAC objects in memory, indexed for authorizing, from
// the informers (internal/storage/informer) that keep them current, so
// authorizing a request never reads etcd.
type cache struct {
	mu                  sync.RWMutex
	roles               map[string]*rbacv1.Role                   // namespace/name
	roleBindings        map[string]map[string]*rbacv1.RoleBinding // namespace -> name
	clusterRoles        map[string]*rbacv1.ClusterRole
	clusterRoleBindings map[string]*rbacv1.ClusterRoleBinding
	// effective are the ClusterRoles' rules, aggregated ones computed from
	// their selectors.
	effective map[string][]rbacv1.PolicyRule

	pending  int // resources not listed yet
	syncedCh chan struct{}

	// informers feed the maps (refresh), gens the generation of each the
	// maps were built from; nil in tests, which fill the maps directly.
	informers map[string]*informer.Informer
	gens      map[string]uint64
}

func newCache() *cache {
	return &cache{
		roles:               map[string]*rbacv1.Role{},
		roleBindings:        map[string]map[string]*rbacv1.RoleBinding{},
		clusterRoles:        map[string]*rbacv1.ClusterRole{},
		clusterRoleBindings: map[string]*rbacv1.ClusterRoleBinding{},
		effective:           map[string][]rbacv1.PolicyRule{},
		pending:             len(resources),
		syncedCh:            make(chan struct{}),
	}
}

// synced is closed once every resource has been listed.
func (c *cache) synced() <-chan struct{} { return c.syncedCh }

// run feeds the cache from one informer per RBAC resource (name ->
// informer) until ctx ends: the cache is synced once each has listed, and
// its maps follow the informers (refresh).
func (c *cache) run(ctx context.Context, informers map[string]*informer.Informer) {
	c.mu.Lock()
	c.informers = informers
	c.gens = make(map[string]uint64, len(informers))
	c.mu.Unlock()
	for _, inf := range informers {
		go inf.Run(ctx)
		go func() {
			select {
			case <-inf.Synced():
				c.markSynced()
			case <-ctx.Done():
			}
		}()
	}
}

// refresh rebuilds the maps of the resources whose informer changed since
// they were built (and the effective rules when ClusterRoles did). Tests
// without informers fill the maps directly.
func (c *cache) refresh() {
	c.mu.RLock()
	stale := false
	for name, inf := range c.informers {
		if inf.Generation() != c.gens[name] {
			stale = true
			break
		}
	}
	c.mu.RUnlock()
	if !stale {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, inf := range c.informers {
		// The generation before the list: a change in between is seen
		// again next time.
		g := inf.Generation()
		if g == c.gens[name] {
			continue
		}
		c.replaceLocked(name, inf.List())
		c.gens[name] = g
	}
}

func (c *cache) markSynced() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending--
	if c.pending == 0 {
		close(c.syncedCh)
	}
}

func (c *cache) replaceLocked(resource string, items []runtime.Object) {
	switch resource {
	case "roles":
		c.roles = map[string]*rbacv1.Role{}
	case "rolebindings":
		c.roleBindings = map[string]map[string]*rbacv1.RoleBinding{}
	case "clusterroles":
		c.clusterRoles = map[string]*rbacv1.ClusterRole{}
	case "clusterrolebindings":
		c.clusterRoleBindings = map[string]*rbacv1.ClusterRoleBinding{}
	}
	for _, obj := range items {
		c.put(obj)
	}
	if resource == "clusterroles" {
		c.aggregate()
	}
}

func (c *cache) upsert(obj runtime.Object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.put(obj) {
		c.aggregate()
	}
}

// put stores obj; it reports whether a ClusterRole changed.
func (c *cache) put(obj runtime.Object) bool {
	switch o := obj.(type) {
	case *rbacv1.Role:
		c.roles[o.Namespace+"/"+o.Name] = o
	case *rbacv1.RoleBinding:
		ns := c.roleBindings[o.Namespace]
		if ns == nil {
			ns = map[string]*rbacv1.RoleBinding{}
			c.roleBindings[o.Namespace] = ns
		}
		ns[o.Name] = o
	case *rbacv1.ClusterRole:
		c.clusterRoles[o.Name] = o
		return true
	case *rbacv1.ClusterRoleBinding:
		c.clusterRoleBindings[o.Name] = o
	}
	return false
}

func (c *cache) remove(obj runtime.Object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch o := obj.(type) {
	case *rbacv1.Role:
		delete(c.roles, o.Namespace+"/"+o.Name)
	case *rbacv1.RoleBinding:
		delete(c.roleBindings[o.Namespace], o.Name)
		if len(c.roleBindings[o.Namespace]) == 0 {
			delete(c.roleBindings, o.Namespace)
		}
	case *rbacv1.ClusterRole:
		delete(c.clusterRoles, o.Name)
		c.aggregate()
	case *rbacv1.ClusterRoleBinding:
		delete(c.clusterRoleBindings, o.Name)
	}
}

// aggregate recomputes every ClusterRole's effective rules. Call with mu
// held.
func (c *cache) aggregate() { c.effective = EffectiveRules(c.clusterRoles) }

// EffectiveRules are the rules each ClusterRole grants. An aggregated role
// gets the rules of the roles its selectors match (not itself), in name
// order, without duplicates, transitively: what kube's clusterrole-
// aggregation controller writes back, once it has settled. The cache
// evaluates with them, and the clusterrole-aggregation hook writes them
// into the objects.
func EffectiveRules(roles map[string]*rbacv1.ClusterRole) map[string][]rbacv1.PolicyRule {
	eff := make(map[string][]rbacv1.PolicyRule, len(roles))
	names := make([]string, 0, len(roles))
	for n := range roles {
		names = append(names, n)
	}
	sort.Strings(names)
	visiting := map[string]bool{}
	var resolve func(name string) []rbacv1.PolicyRule
	resolve = func(name string) []rbacv1.PolicyRule {
		if r, ok := eff[name]; ok {
			return r
		}
		cr := roles[name]
		if cr.AggregationRule == nil {
			eff[name] = cr.Rules
			return cr.Rules
		}
		if visiting[name] { // a cycle: its rules so far are its stored ones
			return cr.Rules
		}
		visiting[name] = true
		var rules []rbacv1.PolicyRule
		for _, ls := range cr.AggregationRule.ClusterRoleSelectors {
			sel, err := metav1.LabelSelectorAsSelector(&ls)
			if err != nil {
				continue
			}
			for _, other := range names {
				if other == name || !sel.Matches(labels.Set(roles[other].Labels)) {
					continue
				}
				for _, r := range resolve(other) {
					if !containsRule(rules, r) {
						rules = append(rules, r)
					}
				}
			}
		}
		delete(visiting, name)
		eff[name] = rules
		return rules
	}
	for _, n := range names {
		resolve(n)
	}
	return eff
}

func containsRule(rules []rbacv1.PolicyRule, r rbacv1.PolicyRule) bool {
	for i := range rules {
		if equality.Semantic.DeepEqual(rules[i], r) {
			return true
		}
	}
	return false
}

var (
	roleGR        = schema.GroupResource{Group: rbacv1.GroupName, Resource: "role"}
	clusterRoleGR = schema.GroupResource{Group: rbacv1.GroupName, Resource: "clusterrole"}
)

// rules returns the rules a binding's roleRef grants. A Role is looked up
// in the binding's namespace.
func (c *cache) rules(ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	switch ref.Kind {
	case "Role":
		r, ok := c.roles[namespace+"/"+ref.Name]
		if !ok {
			return nil, apierrors.NewNotFound(roleGR, ref.Name)
		}
		return r.Rules, nil
	case "ClusterRole":
		r, ok := c.effective[ref.Name]
		if !ok {
			if _, exists := c.clusterRoles[ref.Name]; !exists {
				return nil, apierrors.NewNotFound(clusterRoleGR, ref.Name)
			}
		}
		return r, nil
	}
	return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
}

// authorize walks the ClusterRoleBindings, then the request namespace's
// RoleBindings, and stops at the first rule that allows a. It returns why,
// or the errors met on the way (missing roles).
func (c *cache) authorize(a *auth.Attributes) (allowed bool, reason string, errs []error) {
	c.refresh()
	c.mu.RLock()
	defer c.mu.RUnlock()
	u := a.User
	for _, b := range c.clusterRoleBindings {
		if !appliesTo(u, b.Subjects, "") {
			continue
		}
		rules, err := c.rules(b.RoleRef, "")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if anyAllows(a, rules) {
			return true, allowedBy("ClusterRoleBinding", b.Name, b.RoleRef, u, b.Subjects, ""), nil
		}
	}
	if a.Namespace != "" {
		for _, b := range c.roleBindings[a.Namespace] {
			if !appliesTo(u, b.Subjects, a.Namespace) {
				continue
			}
			rules, err := c.rules(b.RoleRef, a.Namespace)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if anyAllows(a, rules) {
				return true, allowedBy("RoleBinding", b.Name, b.RoleRef, u, b.Subjects, a.Namespace), nil
			}
		}
	}
	// Map order is random; sort so the reason reads the same every time.
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return false, "", errs
}

func anyAllows(a *auth.Attributes, rules []rbacv1.PolicyRule) bool {
	for i := range rules {
		if ruleAllows(a, &rules[i]) {
			return true
		}
	}
	return false
}

// allowedBy is the reason of an Allow, worded like kube's (audit shows it).
func allowedBy(kind, name string, ref rbacv1.RoleRef, u *request.User, subjects []rbacv1.Subject, namespace string) string {
	subj := "subject"
	for _, s := range subjects {
		if appliesTo(u, []rbacv1.Subject{s}, namespace) {
			subj = fmt.Sprintf("%s %q", s.Kind, s.Name)
			break
		}
	}
	where := ""
	if namespace != "" {
		where = fmt.Sprintf(" in namespace %q", namespace)
	}
	binding := fmt.Sprintf("%s %q", kind, name)
	if kind == "RoleBinding" {
		binding = fmt.Sprintf("%s %q", kind, namespace+"/"+name)
	}
	return fmt.Sprintf("RBAC: allowed by %s of %s %q to %s%s", binding, ref.Kind, ref.Name, subj, where)
}

var errNotSynced = errors.New("the RBAC cache has not synced yet")

package rbac

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/internal/pipeline"
)

// kube's marks on its default policy objects.
const (
	AutoUpdateAnnotation = "rbac.authorization.kubernetes.io/autoupdate"
	BootstrappingLabel   = "kubernetes.io/bootstrapping"
)

var (
	read      = []string{"get", "list", "watch"}
	write     = []string{"create", "update", "patch", "delete", "deletecollection"}
	readWrite = append(append([]string{}, read...), write...)
)

func resRule(verbs []string, groups []string, res ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: groups, Resources: res}
}

func urlRule(verbs []string, urls ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, NonResourceURLs: urls}
}

func aggregated(label string) *rbacv1.AggregationRule {
	return &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
		{MatchLabels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-" + label: "true"}},
	}}
}

func aggregateTo(label string) map[string]string {
	return map[string]string{"rbac.authorization.k8s.io/aggregate-to-" + label: "true"}
}

var (
	core = []string{""}
	get  = []string{"get"}
)

// DefaultClusterRoles are the subset of kube's bootstrap ClusterRoles kpipe
// creates, with kube's rules for the resources it can serve.
func DefaultClusterRoles() []rbacv1.ClusterRole {
	roles := []rbacv1.ClusterRole{
		{ObjectMeta: metav1.ObjectMeta{Name: "cluster-admin"}, Rules: []rbacv1.PolicyRule{
			resRule([]string{"*"}, []string{"*"}, "*"),
			urlRule([]string{"*"}, "*"),
		}},
		{ObjectMeta: metav1.ObjectMeta{Name: "system:discovery"}, Rules: []rbacv1.PolicyRule{
			urlRule(get, "/livez", "/readyz", "/healthz", "/version", "/version/",
				"/openapi", "/openapi/*", "/api", "/api/*", "/apis", "/apis/*"),
		}},
		{ObjectMeta: metav1.ObjectMeta{Name: "system:basic-user"}, Rules: []rbacv1.PolicyRule{
			resRule([]string{"create"}, []string{"authorization.k8s.io"}, "selfsubjectaccessreviews", "selfsubjectrulesreviews"),
			resRule([]string{"create"}, []string{"authentication.k8s.io"}, "selfsubjectreviews"),
		}},
		{ObjectMeta: metav1.ObjectMeta{Name: "system:public-info-viewer"}, Rules: []rbacv1.PolicyRule{
			urlRule(get, "/livez", "/readyz", "/healthz", "/version", "/version/"),
		}},
		// kube's role for scrapers: metrics and health, nothing else.
		{ObjectMeta: metav1.ObjectMeta{Name: "system:monitoring"}, Rules: []rbacv1.PolicyRule{
			urlRule(get, "/metrics", "/metrics/slis", "/livez", "/readyz", "/healthz", "/livez/*", "/readyz/*", "/healthz/*"),
		}},
		{ObjectMeta: metav1.ObjectMeta{Name: "admin"}, AggregationRule: aggregated("admin")},
		{ObjectMeta: metav1.ObjectMeta{Name: "edit", Labels: aggregateTo("admin")}, AggregationRule: aggregated("edit")},
		{ObjectMeta: metav1.ObjectMeta{Name: "view", Labels: aggregateTo("edit")}, AggregationRule: aggregated("view")},
		{ObjectMeta: metav1.ObjectMeta{Name: "system:aggregate-to-admin", Labels: aggregateTo("admin")}, Rules: []rbacv1.PolicyRule{
			resRule([]string{"create"}, []string{"authorization.k8s.io"}, "localsubjectaccessreviews"),
			resRule(readWrite, []string{rbacv1.GroupName}, "roles", "rolebindings"),
		}},
		{ObjectMeta: metav1.ObjectMeta{Name: "system:aggregate-to-edit", Labels: aggregateTo("edit")}, Rules: editRules()},
		{ObjectMeta: metav1.ObjectMeta{Name: "system:aggregate-to-view", Labels: aggregateTo("view")}, Rules: viewRules()},
	}
	for i := range roles {
		defaultMeta(&roles[i].ObjectMeta)
	}
	return roles
}

func viewRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		resRule(read, core, "pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
			"services", "services/status", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "configmaps"),
		resRule(read, core, "limitranges", "resourcequotas", "bindings",
			"pods/status", "resourcequotas/status", "namespaces/status", "replicationcontrollers/status", "pods/log"),
		resRule(read, core, "namespaces"),
		resRule(read, []string{"", "events.k8s.io"}, "events"),
		resRule(read, []string{"discovery.k8s.io"}, "endpointslices"),
		resRule(read, []string{"apps"}, "controllerrevisions",
			"statefulsets", "statefulsets/status", "statefulsets/scale",
			"daemonsets", "daemonsets/status",
			"deployments", "deployments/status", "deployments/scale",
			"replicasets", "replicasets/status", "replicasets/scale"),
		resRule(read, []string{"autoscaling"}, "horizontalpodautoscalers", "horizontalpodautoscalers/status"),
		resRule(read, []string{"batch"}, "jobs", "cronjobs", "cronjobs/status", "jobs/status"),
		resRule(read, []string{"extensions"}, "daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status",
			"ingresses", "ingresses/status", "replicasets", "replicasets/scale", "replicasets/status", "replicationcontrollers/scale",
			"networkpolicies"),
		resRule(read, []string{"policy"}, "poddisruptionbudgets", "poddisruptionbudgets/status"),
		resRule(read, []string{"networking.k8s.io"}, "networkpolicies", "ingresses", "ingresses/status"),
	}
}

func editRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		resRule(read, core, "pods/attach", "pods/proxy", "pods/exec", "pods/portforward", "secrets", "services/proxy"),
		resRule([]string{"impersonate"}, core, "serviceaccounts"),
		resRule(write, core, "pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward"),
		resRule([]string{"create"}, core, "pods/eviction"),
		resRule(write, core, "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
			"services", "services/proxy", "persistentvolumeclaims", "configmaps", "secrets"),
		resRule([]string{"create"}, core, "serviceaccounts/token"),
		resRule(write, []string{"", "events.k8s.io"}, "events"),
		resRule(write, []string{"apps"}, "statefulsets", "statefulsets/scale", "daemonsets",
			"deployments", "deployments/scale", "deployments/rollback", "replicasets", "replicasets/scale"),
		resRule(write, []string{"autoscaling"}, "horizontalpodautoscalers"),
		resRule(write, []string{"batch"}, "jobs", "cronjobs"),
		resRule(write, []string{"extensions"}, "daemonsets", "deployments", "deployments/scale", "deployments/rollback", "ingresses",
			"replicasets", "replicasets/scale", "replicationcontrollers/scale", "networkpolicies"),
		resRule(write, []string{"policy"}, "poddisruptionbudgets"),
		resRule(write, []string{"networking.k8s.io"}, "networkpolicies", "ingresses"),
		resRule(readWrite, []string{"coordination.k8s.io"}, "leases"),
	}
}

// DefaultClusterRoleBindings are kube's bindings of the default roles.
func DefaultClusterRoleBindings() []rbacv1.ClusterRoleBinding {
	bind := func(role string, groups ...string) rbacv1.ClusterRoleBinding {
		b := rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		}
		for _, g := range groups {
			b.Subjects = append(b.Subjects, rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: g})
		}
		defaultMeta(&b.ObjectMeta)
		return b
	}
	return []rbacv1.ClusterRoleBinding{
		bind("cluster-admin", "system:masters"),
		bind("system:discovery", "system:authenticated"),
		bind("system:basic-user", "system:authenticated"),
		bind("system:public-info-viewer", "system:authenticated", "system:unauthenticated"),
		bind("system:monitoring", "system:monitoring"),
	}
}

func defaultMeta(m *metav1.ObjectMeta) {
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	m.Labels[BootstrappingLabel] = "rbac-defaults"
	m.Annotations = map[string]string{AutoUpdateAnnotation: "true"}
}

// bootstrap reconciles the defaults through the loopback client, retrying
// until it succeeds or ctx ends.
func (z *Authorizer) bootstrap(ctx context.Context, env *pipeline.HookEnv) error {
	cs, err := kubernetes.NewForConfig(env.Loopback)
	if err != nil {
		return err
	}
	backoff := 50 * time.Millisecond
	for {
		err := Reconcile(ctx, cs)
		if err == nil {
			return nil
		}
		z.log.Warn("reconciling the default RBAC policy", zap.Error(err))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// Reconcile creates each missing default role and binding and, unless it
// is annotated autoupdate "false", adds back what a default is missing
// (rules, aggregation selectors, subjects, labels, annotations), as kube's
// reconciliation does without removing anything extra.
func Reconcile(ctx context.Context, cs kubernetes.Interface) error {
	roles := cs.RbacV1().ClusterRoles()
	for _, want := range DefaultClusterRoles() {
		have, err := roles.Get(ctx, want.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			if _, err := roles.Create(ctx, &want, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating clusterrole %s: %w", want.Name, err)
			}
			continue
		}
		if err != nil {
			return err
		}
		if have.Annotations[AutoUpdateAnnotation] == "false" {
			continue
		}
		next := have.DeepCopy()
		next.Labels = merge(want.Labels, have.Labels)
		next.Annotations = merge(want.Annotations, have.Annotations)
		if want.AggregationRule != nil {
			if next.AggregationRule == nil {
				next.AggregationRule = &rbacv1.AggregationRule{}
			}
			for _, s := range want.AggregationRule.ClusterRoleSelectors {
				if !containsSelector(next.AggregationRule.ClusterRoleSelectors, s) {
					next.AggregationRule.ClusterRoleSelectors = append(next.AggregationRule.ClusterRoleSelectors, s)
				}
			}
		} else {
			for _, r := range want.Rules {
				if !containsRule(next.Rules, r) {
					next.Rules = append(next.Rules, r)
				}
			}
		}
		if !equality.Semantic.DeepEqual(next, have) {
			if _, err := roles.Update(ctx, next, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("updating clusterrole %s: %w", want.Name, err)
			}
		}
	}
	bindings := cs.RbacV1().ClusterRoleBindings()
	for _, want := range DefaultClusterRoleBindings() {
		have, err := bindings.Get(ctx, want.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			if _, err := bindings.Create(ctx, &want, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating clusterrolebinding %s: %w", want.Name, err)
			}
			continue
		}
		if err != nil {
			return err
		}
		if have.Annotations[AutoUpdateAnnotation] == "false" {
			continue
		}
		if have.RoleRef != want.RoleRef {
			// roleRef is immutable: kube recreates the binding.
			if err := bindings.Delete(ctx, want.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			want.Subjects = mergeSubjects(want.Subjects, have.Subjects)
			if _, err := bindings.Create(ctx, &want, metav1.CreateOptions{}); err != nil {
				return err
			}
			continue
		}
		next := have.DeepCopy()
		next.Labels = merge(want.Labels, have.Labels)
		next.Annotations = merge(want.Annotations, have.Annotations)
		next.Subjects = mergeSubjects(have.Subjects, want.Subjects)
		if !equality.Semantic.DeepEqual(next, have) {
			if _, err := bindings.Update(ctx, next, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("updating clusterrolebinding %s: %w", want.Name, err)
			}
		}
	}
	return nil
}

// merge returns the keys of both maps; b wins on a conflict.
func merge(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func mergeSubjects(a, b []rbacv1.Subject) []rbacv1.Subject {
	out := append([]rbacv1.Subject{}, a...)
	for _, s := range b {
		found := false
		for _, o := range out {
			if o == s {
				found = true
				break
			}
		}
		if !found {
			out = append(out, s)
		}
	}
	return out
}

func containsSelector(list []metav1.LabelSelector, s metav1.LabelSelector) bool {
	for i := range list {
		if equality.Semantic.DeepEqual(list[i], s) {
			return true
		}
	}
	return false
}

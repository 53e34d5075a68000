package accesse2e

import (
	"context"
	"slices"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

func hasRule(rules []rbacv1.PolicyRule, want rbacv1.PolicyRule) bool {
	for _, r := range rules {
		if equality.Semantic.DeepEqual(r, want) {
			return true
		}
	}
	return false
}

// grants reports whether one of rules lists verb on group/resource.
func grants(rules []rbacv1.PolicyRule, verb, group, resource string) bool {
	for _, r := range rules {
		if slices.Contains(r.Verbs, verb) && slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) {
			return true
		}
	}
	return false
}

func TestClusterRoleAggregationWrittenBack(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	cs := e2eutil.Clientset(t, ts.Config)
	ctx := context.Background()
	roles := cs.RbacV1().ClusterRoles()

	t.Run("the default aggregated roles hold their rules", func(t *testing.T) {
		e2eutil.Eventually(t, 10*time.Second, "view, edit and admin to get view's rules", func() bool {
			for _, name := range []string{"view", "edit", "admin"} {
				r, err := roles.Get(ctx, name, metav1.GetOptions{})
				if err != nil || !grants(r.Rules, "watch", "", "configmaps") {
					return false
				}
			}
			return true
		})
		out, err := e2eutil.Kubectl(t, ts, "get", "clusterrole", "view", "-o", "yaml")
		if err != nil {
			t.Fatalf("kubectl: %v\n%s", err, out)
		}
		e2eutil.MustContain(t, "view", out, "aggregationRule:", "rules:", "- pods", "- configmaps")
	})

	crd := rbacv1.PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{"example.com"}, Resources: []string{"widgets"}}
	t.Run("a new labelled role is aggregated into view, edit and admin", func(t *testing.T) {
		_, err := roles.Create(ctx, &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "widgets-view", Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
			Rules:      []rbacv1.PolicyRule{crd},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e2eutil.Eventually(t, 10*time.Second, "widgets in view, edit and admin", func() bool {
			for _, name := range []string{"view", "edit", "admin"} {
				r, err := roles.Get(ctx, name, metav1.GetOptions{})
				if err != nil || !hasRule(r.Rules, crd) || !grants(r.Rules, "list", "", "pods") {
					return false
				}
			}
			return true
		})
		out, err := e2eutil.Kubectl(t, ts, "get", "clusterrole", "view", "-o", "yaml")
		if err != nil {
			t.Fatalf("kubectl: %v\n%s", err, out)
		}
		e2eutil.MustContain(t, "view", out, "example.com", "widgets")
	})
	t.Run("a changed role is written again", func(t *testing.T) {
		r, err := roles.Get(ctx, "widgets-view", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		changed := crd
		changed.Verbs = []string{"get", "list", "watch"}
		r.Rules = []rbacv1.PolicyRule{changed}
		if _, err := roles.Update(ctx, r, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		e2eutil.Eventually(t, 10*time.Second, "the changed rule in view", func() bool {
			v, err := roles.Get(ctx, "view", metav1.GetOptions{})
			return err == nil && hasRule(v.Rules, changed) && !hasRule(v.Rules, crd)
		})
	})
	t.Run("a deleted or unlabelled role leaves", func(t *testing.T) {
		if err := roles.Delete(ctx, "widgets-view", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e2eutil.Eventually(t, 10*time.Second, "widgets gone from admin", func() bool {
			v, err := roles.Get(ctx, "admin", metav1.GetOptions{})
			if err != nil || !grants(v.Rules, "list", "", "pods") {
				return false
			}
			for _, r := range v.Rules {
				if len(r.APIGroups) == 1 && r.APIGroups[0] == "example.com" {
					return false
				}
			}
			return true
		})
	})
	t.Run("any aggregationRule is written, not only the defaults", func(t *testing.T) {
		_, err := roles.Create(ctx, &rbacv1.ClusterRole{
			ObjectMeta:      metav1.ObjectMeta{Name: "custom-aggregate"},
			AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"custom": "yes"}}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rule := rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/custom"}}
		if _, err := roles.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "custom-part", Labels: map[string]string{"custom": "yes"}},
			Rules: []rbacv1.PolicyRule{rule}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		e2eutil.Eventually(t, 10*time.Second, "the custom aggregate's rules", func() bool {
			v, err := roles.Get(ctx, "custom-aggregate", metav1.GetOptions{})
			return err == nil && len(v.Rules) == 1 && equality.Semantic.DeepEqual(v.Rules[0], rule)
		})
	})
}

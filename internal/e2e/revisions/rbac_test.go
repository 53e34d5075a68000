package revisions

import (
	"context"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

// kube's default roles: edit (through view) reads ControllerRevisions but
// may not write them; no aggregated role grants PodTemplates.
func TestDefaultRoles(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	cs, _ := clients(t, ts)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "rev-rbac")
	_, err := cs.RbacV1().RoleBindings("rev-rbac").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "alice-edit"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	allowed := func(verb, group, resource string) bool {
		r, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               "alice",
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "rev-rbac", Verb: verb, Group: group, Resource: resource},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Status.Allowed
	}
	// The aggregation controller fills edit's rules after start.
	e2eutil.Eventually(t, 10*time.Second, "edit grants reading controllerrevisions", func() bool {
		return allowed("list", "apps", "controllerrevisions")
	})
	for _, tc := range []struct {
		verb, group, resource string
		want                  bool
	}{
		{"get", "apps", "controllerrevisions", true},
		{"watch", "apps", "controllerrevisions", true},
		{"create", "apps", "controllerrevisions", false},
		{"delete", "apps", "controllerrevisions", false},
		{"get", "", "podtemplates", false},
		{"create", "", "podtemplates", false},
		{"create", "apps", "statefulsets", true},
	} {
		t.Run(tc.verb+" "+tc.resource, func(t *testing.T) {
			if got := allowed(tc.verb, tc.group, tc.resource); got != tc.want {
				t.Errorf("allowed = %v, want %v", got, tc.want)
			}
		})
	}
}

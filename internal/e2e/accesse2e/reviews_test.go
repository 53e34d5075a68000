package accesse2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

// waitRBAC bounds how long a new binding takes to reach the RBAC cache.
const waitRBAC = 10 * time.Second

// canI runs `kubectl auth can-i` with kubeconfig and returns its answer
// and exit code (0 yes, 1 no), as kubectl reports them.
func canI(t *testing.T, kubeconfig string, args ...string) (string, int) {
	t.Helper()
	out, err := e2eutil.KubectlAs(t, kubeconfig, append([]string{"auth", "can-i"}, args...)...)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("kubectl auth can-i %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(out), code
}

func bindRole(t *testing.T, cs kubernetes.Interface, ns, name, kind, role string, subjects ...rbacv1.Subject) {
	t.Helper()
	_, err := cs.RbacV1().RoleBindings(ns).Create(context.Background(), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: role},
		Subjects:   subjects,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func saSubject(ns, name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}
}

// startViewer starts a server with a service account team-a/viewer bound
// to view in team-a, and returns its token.
func startViewer(t *testing.T) (*testserver.TestServer, string) {
	t.Helper()
	ts := testserver.Start(t, testserver.Options{})
	admin := e2eutil.Clientset(t, ts.Config)
	createNamespaces(t, admin, "team-a", "team-b")
	createSA(t, admin, "team-a", "viewer")
	bindRole(t, admin, "team-a", "viewer-view", "ClusterRole", "view", saSubject("team-a", "viewer"))
	return ts, createToken(t, ts, "team-a", "viewer")
}

// TestAccessReviews shares one server between its parts: each server
// start costs the whole package time.
func TestAccessReviews(t *testing.T) {
	ts, token := startViewer(t)
	t.Run("reviews", func(t *testing.T) { testReviews(t, ts, token) })
	t.Run("RBAC escalation", func(t *testing.T) { testRBACEscalation(t, ts) })
}

func testReviews(t *testing.T, ts *testserver.TestServer, token string) {
	ctx := context.Background()
	admin := e2eutil.Clientset(t, ts.Config)
	const user = "system:serviceaccount:team-a:viewer"

	// The token user's real requests: list in team-a, refused in team-b
	// with kube's message, refused writes.
	viewer := e2eutil.Clientset(t, e2eutil.TokenConfig(ts, token))
	e2eutil.Eventually(t, waitRBAC, "the view binding to reach the RBAC cache", func() bool {
		_, err := viewer.CoreV1().Pods("team-a").List(ctx, metav1.ListOptions{})
		return err == nil
	})
	_, err := viewer.CoreV1().Pods("team-b").List(ctx, metav1.ListOptions{})
	mustForbidden(t, err, `pods is forbidden: User "`+user+`" cannot list resource "pods" in API group "" in the namespace "team-b"`)
	_, err = viewer.CoreV1().ConfigMaps("team-a").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	mustForbidden(t, err, `configmaps is forbidden: User "`+user+`" cannot create resource "configmaps" in API group "" in the namespace "team-a"`)

	// kubectl auth can-i agrees with them.
	kc := e2eutil.TokenKubeconfig(t, ts, token)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "pods", "-n", "team-a"}, "yes"},
		{[]string{"get", "configmaps/anything", "-n", "team-a"}, "yes"},
		{[]string{"list", "pods", "-n", "team-b"}, "no"},
		{[]string{"create", "pods", "-n", "team-a"}, "no"},
		{[]string{"delete", "deployments.apps", "-n", "team-a"}, "no"},
		{[]string{"get", "secrets", "-n", "team-a"}, "no"},
		{[]string{"get", "/readyz"}, "yes"},
		{[]string{"get", "/metrics"}, "no"},
	} {
		got, code := canI(t, kc, tc.args...)
		wantCode := map[string]int{"yes": 0, "no": 1}[tc.want]
		if got != tc.want || code != wantCode {
			t.Errorf("kubectl auth can-i %v = %q (exit %d), want %q (exit %d)", tc.args, got, code, tc.want, wantCode)
		}
	}

	// can-i --list shows the rules of team-a: view's, and basic-user's
	// self reviews.
	out, err := e2eutil.KubectlAs(t, kc, "auth", "can-i", "--list", "-n", "team-a")
	if err != nil {
		t.Fatalf("kubectl auth can-i --list: %v\n%s", err, out)
	}
	e2eutil.MustContain(t, "can-i --list", out,
		"selfsubjectaccessreviews.authorization.k8s.io", "selfsubjectrulesreviews.authorization.k8s.io",
		"selfsubjectreviews.authentication.k8s.io", "[create]", "pods ", "[get list watch]", "[/readyz]")
	t.Logf("kubectl auth can-i --list -n team-a:\n%s", out)
	if strings.Contains(out, "secrets ") {
		t.Errorf("can-i --list in team-a lists secrets, which view does not grant:\n%s", out)
	}
	out, err = e2eutil.KubectlAs(t, kc, "auth", "can-i", "--list", "-n", "team-b")
	if err != nil {
		t.Fatal(err, out)
	}
	if strings.Contains(out, "pods ") {
		t.Errorf("can-i --list in team-b lists pods:\n%s", out)
	}

	// SubjectAccessReview by the admin, for the token user.
	sar := func(verb, ns string) authorizationv1.SubjectAccessReviewStatus {
		t.Helper()
		r, err := admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: []string{"system:serviceaccounts", "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Resource: "pods", Namespace: ns},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Status
	}
	if st := sar("list", "team-a"); !st.Allowed || !strings.Contains(st.Reason, `RoleBinding "team-a/viewer-view" of ClusterRole "view"`) {
		t.Errorf("SAR list pods in team-a = %+v, want allowed by the binding", st)
	}
	if st := sar("list", "team-b"); st.Allowed || st.Denied {
		t.Errorf("SAR list pods in team-b = %+v, want no opinion", st)
	}
	if st := sar("delete", "team-a"); st.Allowed {
		t.Errorf("SAR delete pods in team-a = %+v, want not allowed", st)
	}
	// LocalSubjectAccessReview, also for a namespace that does not exist.
	lsar, err := admin.AuthorizationV1().LocalSubjectAccessReviews("nowhere").Create(ctx, &authorizationv1.LocalSubjectAccessReview{
		ObjectMeta: metav1.ObjectMeta{Namespace: "nowhere"},
		Spec: authorizationv1.SubjectAccessReviewSpec{User: "someone",
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods", Namespace: "nowhere"}},
	}, metav1.CreateOptions{})
	if err != nil || lsar.Status.Allowed {
		t.Errorf("LocalSubjectAccessReview in a missing namespace = %+v, %v", lsar, err)
	}
	// Bad reviews are 422 with kube's messages.
	_, err = admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "exactly one of nonResourceAttributes or resourceAttributes must be specified") ||
		!strings.Contains(err.Error(), "at least one of user or group must be specified") {
		t.Errorf("empty SubjectAccessReview: err = %v, want 422", err)
	}
	// The token user may not ask about others.
	_, err = viewer.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: "admin", ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods"}}}, metav1.CreateOptions{})
	mustForbidden(t, err, `subjectaccessreviews.authorization.k8s.io is forbidden: User "`+user+`" cannot create resource "subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope`)

	// The admin, in system:masters, can do anything.
	if got, code := canI(t, ts.Kubeconfig, "delete", "secrets", "-n", "kube-system"); got != "yes" || code != 0 {
		t.Errorf("admin can-i delete secrets = %q (%d)", got, code)
	}
	// Reviews are create-only and in discovery as kube has them.
	res, err := admin.Discovery().ServerResourcesForGroupVersion("authorization.k8s.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range res.APIResources {
		names = append(names, r.Name+":"+strings.Join(r.Verbs, ","))
	}
	want := "localsubjectaccessreviews:create selfsubjectaccessreviews:create selfsubjectrulesreviews:create subjectaccessreviews:create"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("authorization.k8s.io/v1 discovery = %s, want %s", got, want)
	}
	_, err = admin.AuthorizationV1().RESTClient().Get().Resource("subjectaccessreviews").DoRaw(ctx)
	if !apierrors.IsMethodNotSupported(err) {
		t.Errorf("GET subjectaccessreviews: err = %v, want 405", err)
	}
}

func testRBACEscalation(t *testing.T, ts *testserver.TestServer) {
	ctx := context.Background()
	admin := e2eutil.Clientset(t, ts.Config)
	createNamespaces(t, admin, "esc")
	createSA(t, admin, "esc", "manager")
	const user = "system:serviceaccount:esc:manager"
	const groups = `["system:serviceaccounts" "system:serviceaccounts:esc" "system:authenticated"]`

	// The manager may write roles and bindings in esc, and read pods.
	_, err := admin.RbacV1().Roles("esc").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "role-manager"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles", "rolebindings"}, Verbs: []string{"create", "update", "get", "patch"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bindRole(t, admin, "esc", "role-manager", "Role", "role-manager", saSubject("esc", "manager"))
	mgr := e2eutil.Clientset(t, e2eutil.TokenConfig(ts, createToken(t, ts, "esc", "manager")))
	roles := mgr.RbacV1().Roles("esc")

	held := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}}
	e2eutil.Eventually(t, waitRBAC, "the manager's binding to reach the RBAC cache", func() bool {
		_, err := roles.Create(ctx, held, metav1.CreateOptions{})
		return err == nil
	})

	// A role granting what the manager does not hold is refused with
	// kube's message.
	secrets := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "secret-reader"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}}
	_, err = roles.Create(ctx, secrets, metav1.CreateOptions{})
	mustForbidden(t, err, `roles.rbac.authorization.k8s.io "secret-reader" is forbidden: user "`+user+`" (groups=`+groups+`) is attempting to grant RBAC permissions not currently held:
{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}`)
	// Escalation is refused before validation, as kube's RBAC storage
	// does: a role that escalates and is invalid (a rule without verbs) is
	// a 403, not a 422.
	invalid := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "invalid-secret-reader"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}}}}
	_, err = roles.Create(ctx, invalid, metav1.CreateOptions{})
	mustForbidden(t, err, `roles.rbac.authorization.k8s.io "invalid-secret-reader" is forbidden: user "`+user+`" (groups=`+groups+`) is attempting to grant RBAC permissions not currently held:
{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`)
	// So is widening a held role by update.
	cur, err := roles.Get(ctx, "pod-reader", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Rules[0].Verbs = []string{"get", "delete"}
	_, err = roles.Update(ctx, cur, metav1.UpdateOptions{})
	mustForbidden(t, err, `roles.rbac.authorization.k8s.io "pod-reader" is forbidden: user "`+user+`" (groups=`+groups+`) is attempting to grant RBAC permissions not currently held:
{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}`)

	// Binding a role whose permissions the manager lacks is refused;
	// binding one it holds passes.
	bindings := mgr.RbacV1().RoleBindings("esc")
	editBinding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "edit-for-bob"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bob"}}}
	_, err = bindings.Create(ctx, editBinding, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `rolebindings.rbac.authorization.k8s.io "edit-for-bob" is forbidden: user "`+user+`" (groups=`+groups+`) is attempting to grant RBAC permissions not currently held:`) {
		t.Fatalf("binding edit: err = %v, want kube's escalation refusal", err)
	}
	if _, err := bindings.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader-for-bob"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bob"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("binding a held role: %v", err)
	}

	// With the bind verb on edit, the binding passes.
	_, err = admin.RbacV1().Roles("esc").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "bind-edit"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, ResourceNames: []string{"edit"}, Verbs: []string{"bind"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bindRole(t, admin, "esc", "bind-edit", "Role", "bind-edit", saSubject("esc", "manager"))
	e2eutil.Eventually(t, waitRBAC, "binding edit with the bind verb", func() bool {
		_, err := bindings.Create(ctx, editBinding, metav1.CreateOptions{})
		return err == nil
	})

	// With the escalate verb on roles, the secret reader passes.
	_, err = admin.RbacV1().Roles("esc").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "escalate"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles"}, Verbs: []string{"escalate"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bindRole(t, admin, "esc", "escalate", "Role", "escalate", saSubject("esc", "manager"))
	e2eutil.Eventually(t, waitRBAC, "creating the secret reader with the escalate verb", func() bool {
		_, err := roles.Create(ctx, secrets, metav1.CreateOptions{})
		return err == nil
	})

	// The admin (system:masters) is never checked.
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "esc-anything"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("admin creating a cluster role: %v", err)
	}
}

package webhookconditions

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

// start runs a server with the webhook plugins in its admission lists
// (they are not in the default lists), RBAC authorizing.
func start(t *testing.T) (*testserver.TestServer, kubernetes.Interface) {
	t.Helper()
	ts := testserver.Start(t, testserver.Options{Configure: e2eutil.WebhookAdmission})
	return ts, kubernetes.NewForConfigOrDie(ts.Config)
}

func validatingConfig(name, url string, ca []byte, expr string) *admissionregistrationv1.ValidatingWebhookConfiguration {
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:         name + ".kpipe.test",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(url), CABundle: ca},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
			}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{"case": name}},
			MatchConditions:         []admissionregistrationv1.MatchCondition{{Name: "cond", Expression: expr}},
		}},
	}
}

// TestInvalidConditionsRejected: a configuration whose matchCondition does
// not compile is refused with kube's 422, through client-go and kubectl.
func TestInvalidConditionsRejected(t *testing.T) {
	ts, cs := start(t)
	ctx := context.Background()
	const url = "https://127.0.0.1:1/never"

	_, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx,
		validatingConfig("syntax", url, nil, "object.x in [1, 2, "), metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
		`ValidatingWebhookConfiguration.admissionregistration.k8s.io "syntax" is invalid: webhooks[0].matchConditions[0].expression: Invalid value: "object.x in [1, 2,": compilation failed: ERROR: <input>:1:19: Syntax error: missing ']' at '<EOF>'
 | object.x in [1, 2,
 | ..................^`)
	if se, ok := err.(apierrors.APIStatus); ok {
		d := se.Status().Details
		if d == nil || len(d.Causes) != 1 || d.Causes[0].Field != "webhooks[0].matchConditions[0].expression" || d.Causes[0].Type != metav1.CauseTypeFieldValueInvalid {
			t.Errorf("causes: %+v", d)
		}
	}

	// A mutating configuration, a condition that is not a bool.
	_, err = cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "not-bool"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "not-bool.kpipe.test", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(url)},
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "cond", Expression: "object.metadata.name"}},
		}},
	}, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
		`MutatingWebhookConfiguration.admissionregistration.k8s.io "not-bool" is invalid: webhooks[0].matchConditions[0].expression: Invalid value: "object.metadata.name": must evaluate to bool but got dyn`)

	// An update that changes the conditions is checked too; one that
	// keeps them is not.
	good := validatingConfig("good", url, nil, "true")
	created, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, good, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bad := created.DeepCopy()
	bad.Webhooks[0].MatchConditions[0].Expression = "request.uid != ''"
	_, err = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Update(ctx, bad, metav1.UpdateOptions{})
	if code := status(err); code != http.StatusUnprocessableEntity || !strings.Contains(err.Error(), "undefined field 'uid'") {
		t.Fatalf("update: %v", err)
	}
	created.Webhooks[0].TimeoutSeconds = ptr.To(int32(5))
	if _, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("an update keeping the conditions: %v", err)
	}

	// kubectl prints the same Status.
	manifest := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(manifest, []byte(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: from-kubectl
webhooks:
- name: from-kubectl.kpipe.test
  clientConfig:
    url: https://127.0.0.1:1/never
  sideEffects: None
  admissionReviewVersions: ["v1"]
  matchConditions:
  - name: cond
    expression: "nope() == true"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := e2eutil.Kubectl(t, ts, "create", "-f", manifest)
	if err == nil {
		t.Fatalf("kubectl created it:\n%s", out)
	}
	e2eutil.MustContain(t, "kubectl output", out,
		`The ValidatingWebhookConfiguration "from-kubectl" is invalid: webhooks[0].matchConditions[0].expression: Invalid value: "nope() == true": compilation failed: ERROR: <input>:1:5: undeclared reference to 'nope' (in container '')`)
}

func status(err error) int32 {
	if se, ok := err.(apierrors.APIStatus); ok {
		return se.Status().Code
	}
	return 0
}

// TestAuthorizerCondition: a webhook whose matchCondition asks the
// authorizer is called for a user the server's RBAC allows, and skipped
// for one it does not.
func TestAuthorizerCondition(t *testing.T) {
	ts, cs := start(t)
	hooks := e2eutil.StartHookServer(t)
	ctx := context.Background()
	const ns = "authz-cond"
	e2eutil.Namespace(t, cs, ns)

	// Both may create configmaps in ns; only alice may create pods there.
	rules := map[string][]string{"cm-writer": {"configmaps"}, "pod-writer": {"pods"}}
	for name, resources := range rules {
		if _, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: resources, Verbs: []string{"create"}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bind := func(role string, users ...string) {
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role}}
		for _, u := range users {
			rb.Subjects = append(rb.Subjects, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: u})
		}
		if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bind("cm-writer", "alice", "bob")
	bind("pod-writer", "alice")

	cfg := validatingConfig("authz", hooks.URL+"/deny", hooks.CA,
		"authorizer.group('').resource('pods').namespace(request.namespace).check('create').allowed()")
	if _, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	as := func(user string) kubernetes.Interface {
		c := rest.CopyConfig(ts.Config)
		c.Impersonate = rest.ImpersonationConfig{UserName: user}
		return kubernetes.NewForConfigOrDie(c)
	}
	alice, bob := as("alice"), as("bob")
	n := 0
	create := func(c kubernetes.Interface) error {
		n++
		_, err := c.CoreV1().ConfigMaps(ns).Create(ctx, e2eutil.ConfigMap(fmt.Sprintf("cm-%d", n), map[string]string{"case": "authz"}), metav1.CreateOptions{})
		return err
	}

	// The configuration and the roles reach the server's caches through
	// watches: alice is refused by the webhook once both have.
	var err error
	e2eutil.Eventually(t, 10*time.Second, "the webhook to refuse alice's create", func() bool {
		err = create(alice)
		return err != nil && strings.Contains(err.Error(), "no thanks")
	})
	if status(err) != http.StatusForbidden || err.Error() != `admission webhook "authz.kpipe.test" denied the request: no thanks` {
		t.Fatalf("alice: %v", err)
	}
	calls := hooks.Calls("/deny")
	if calls == 0 {
		t.Fatal("the webhook was not called for alice")
	}

	// bob may create configmaps but not pods: the condition is false and
	// the webhook (failurePolicy Fail, always denying) is skipped.
	e2eutil.Eventually(t, 10*time.Second, "bob's create to pass", func() bool {
		err = create(bob)
		return err == nil
	})
	if got := hooks.Calls("/deny"); got != calls {
		t.Fatalf("the webhook was called for bob (%d calls, %d before)", got, calls)
	}
	// And alice is still refused.
	if err := create(alice); status(err) != http.StatusForbidden {
		t.Fatalf("alice: %v", err)
	}
}

package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

// A namespace "." or ".." in the path (%2e, %2e%2e) is never cleaned into
// another key: kube's storage refuses the key, admission and authorization
// see the namespace as sent, and no request returns or deletes the objects
// of other namespaces. The answers are kube-apiserver's.
func TestNamespacePathSegments(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "audit.log")
	policyPath := filepath.Join(t.TempDir(), "policy.yaml")
	policy := "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n"
	if err := os.WriteFile(policyPath, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := testserver.Start(t, testserver.Options{Configure: func(c *config.Config) {
		for i, e := range c.Pipeline {
			if e.Name == "audit" {
				c.Pipeline[i].Config = map[string]any{"policyFile": policyPath, "logPath": logPath}
			}
		}
	}})
	cs := e2eutil.Clientset(t, ts.Config)
	ctx := context.Background()
	for _, ns := range []string{"a", "b"} {
		e2eutil.Namespace(t, cs, ns)
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Data: map[string]string{"k": ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "x"}, StringData: map[string]string{"k": ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// alice may do anything to configmaps and secrets in "a", nothing else.
	if _, err := cs.RbacV1().Roles("a").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "all"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"}, Verbs: []string{"*"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().RoleBindings("a").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "all"},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "alice"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e2eutil.Eventually(t, 10*time.Second, "alice can list configmaps in a", func() bool {
		code, _ := send(t, ts, "alice", "GET", "/api/v1/namespaces/a/configmaps", "")
		return code == 200
	})

	cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"k":"new"}}`
	tests := []struct {
		name   string
		user   string // impersonated; "" is the admin
		method string
		path   string
		body   string
		code   int
		reason metav1.StatusReason
		msg    string // kube's whole message
	}{
		{"list in .", "", "GET", "/api/v1/namespaces/%2e/configmaps", "", 500, metav1.StatusReasonUnknown, `invalid key: "/configmaps/."`},
		{"list in ..", "", "GET", "/api/v1/namespaces/%2e%2e/configmaps", "", 500, metav1.StatusReasonUnknown, `invalid key: "/configmaps/.."`},
		{"list in .. unescaped", "", "GET", "/api/v1/namespaces/../configmaps", "", 500, metav1.StatusReasonUnknown, `invalid key: "/configmaps/.."`},
		{"list secrets in .", "", "GET", "/api/v1/namespaces/%2e/secrets", "", 500, metav1.StatusReasonUnknown, `invalid key: "/secrets/."`},
		{"watch in .", "", "GET", "/api/v1/namespaces/%2e/configmaps?watch=true", "", 500, metav1.StatusReasonUnknown, `invalid key: "/configmaps/."`},
		{"watch secrets in ..", "", "GET", "/api/v1/namespaces/%2e%2e/secrets?watch=true", "", 500, metav1.StatusReasonUnknown, `invalid key: "/secrets/.."`},
		{"get in .", "", "GET", "/api/v1/namespaces/%2e/configmaps/x", "", 500, metav1.StatusReasonUnknown, `invalid key: "/configmaps/./x"`},
		{"update in .", "", "PUT", "/api/v1/namespaces/%2e/configmaps/x", cm, 500, metav1.StatusReasonUnknown, `invalid key: "/configmaps/./x"`},
		{"delete in ..", "", "DELETE", "/api/v1/namespaces/%2e%2e/configmaps/x", "", 500, metav1.StatusReasonUnknown, `invalid key: "/configmaps/../x"`},
		{"deletecollection in .", "", "DELETE", "/api/v1/namespaces/%2e/configmaps", "", 500, metav1.StatusReasonUnknown, `invalid key: "/configmaps/."`},
		{"deletecollection of secrets in .", "", "DELETE", "/api/v1/namespaces/%2e/secrets", "", 500, metav1.StatusReasonUnknown, `invalid key: "/secrets/."`},
		// kube answers a 500 here from NamespaceLifecycle, which it runs
		// before validation; kpipe validates first (see the report).
		{"create in .", "", "POST", "/api/v1/namespaces/%2e/configmaps", cm, 422, metav1.StatusReasonInvalid, `ConfigMap "x" is invalid: metadata.namespace: Invalid value: ".": ` + dnsLabelMsg},
		{"create in ..", "", "POST", "/api/v1/namespaces/%2e%2e/configmaps", cm, 422, metav1.StatusReasonInvalid, `ConfigMap "x" is invalid: metadata.namespace: Invalid value: "..": ` + dnsLabelMsg},
		// The namespaces resource itself: its name is checked.
		{"get namespace ..", "", "GET", "/api/v1/namespaces/%2e%2e", "", 400, metav1.StatusReasonBadRequest, `Name parameter invalid: "..": may not be '..'`},
		{"get namespace .", "", "GET", "/api/v1/namespaces/%2e", "", 400, metav1.StatusReasonBadRequest, `Name parameter invalid: ".": may not be '.'`},
		{"delete namespace ..", "", "DELETE", "/api/v1/namespaces/%2e%2e", "", 400, metav1.StatusReasonBadRequest, `Name parameter invalid: "..": may not be '..'`},
		// alice is authorized for the namespace as sent, ".", not for "a".
		{"alice lists in .", "alice", "GET", "/api/v1/namespaces/%2e/configmaps", "", 403, metav1.StatusReasonForbidden,
			`configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "."`},
		{"alice lists secrets in .", "alice", "GET", "/api/v1/namespaces/%2e/secrets", "", 403, metav1.StatusReasonForbidden,
			`secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "."`},
		{"alice watches in .", "alice", "GET", "/api/v1/namespaces/%2e/configmaps?watch=1", "", 403, metav1.StatusReasonForbidden,
			`configmaps is forbidden: User "alice" cannot watch resource "configmaps" in API group "" in the namespace "."`},
		{"alice deletes the collection in .", "alice", "DELETE", "/api/v1/namespaces/%2e/secrets", "", 403, metav1.StatusReasonForbidden,
			`secrets is forbidden: User "alice" cannot deletecollection resource "secrets" in API group "" in the namespace "."`},
		{"alice lists in ..", "alice", "GET", "/api/v1/namespaces/%2e%2e/configmaps", "", 403, metav1.StatusReasonForbidden,
			`configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace ".."`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, raw := send(t, ts, tc.user, tc.method, tc.path, tc.body)
			var st metav1.Status
			if err := json.Unmarshal(raw, &st); err != nil || st.Kind != "Status" {
				t.Fatalf("%d, not a Status: %.300s", code, raw)
			}
			if code != tc.code || int(st.Code) != tc.code || st.Reason != tc.reason || st.Message != tc.msg {
				t.Errorf("got %d %d %q %q\nwant %d %q %q", code, st.Code, st.Reason, st.Message, tc.code, tc.reason, tc.msg)
			}
			if strings.Contains(string(raw), `"k":"b"`) || strings.Contains(string(raw), "/registry") {
				t.Errorf("the answer shows another namespace's object or the etcd prefix: %.300s", raw)
			}
		})
	}

	// Everything is where it was.
	for _, ns := range []string{"a", "b"} {
		got, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "x", metav1.GetOptions{})
		if err != nil || got.Data["k"] != ns {
			t.Errorf("configmap %s/x after the requests: %v %v", ns, got.Data, err)
		}
		if _, err := cs.CoreV1().Secrets(ns).Get(ctx, "x", metav1.GetOptions{}); err != nil {
			t.Errorf("secret %s/x after the requests: %v", ns, err)
		}
	}

	// Audit records the namespace as sent too.
	e2eutil.Eventually(t, 10*time.Second, `alice's refused list in "." in the audit log`, func() bool {
		for _, ev := range e2eutil.AuditEvents(t, logPath) {
			if ev.ImpersonatedUser != nil && ev.ImpersonatedUser.Username == "alice" && ev.Verb == "list" && ev.ObjectRef != nil &&
				ev.ObjectRef.Resource == "configmaps" && ev.ResponseStatus != nil && ev.ResponseStatus.Code == 403 {
				if ev.ObjectRef.Namespace != "." {
					t.Fatalf("audit objectRef namespace %q, want %q", ev.ObjectRef.Namespace, ".")
				}
				return true
			}
		}
		return false
	})
}

const dnsLabelMsg = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"

// send makes one request as the admin, or as user by impersonation.
func send(t *testing.T, ts *testserver.TestServer, user, method, path, body string) (int, []byte) {
	t.Helper()
	// A watch that was let through would stream: the deadline ends it.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, ts.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if user != "" {
		req.Header.Set("Impersonate-User", user)
	}
	resp, err := ts.HTTPClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

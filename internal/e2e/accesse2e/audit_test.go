package accesse2e

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
	"github.com/kpipe/kpipe/plugins/audit"
)

const auditPolicy = `
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: []
rules:
- level: None
  users: ["system:apiserver"]
- level: None
  nonResourceURLs: ["/readyz*", "/livez*", "/healthz*"]
- level: Metadata
  resources:
  - group: ""
    resources: ["secrets"]
- level: RequestResponse
  resources:
  - group: ""
    resources: ["configmaps"]
- level: Request
  resources:
  - group: ""
    resources: ["serviceaccounts"]
- level: Metadata
`

// findEvents polls the log for the events match selects, until want
// says they are all there.
func findEvents(t *testing.T, path, what string, match func(*audit.Event) bool, stages ...audit.EventStage) map[audit.EventStage]audit.Event {
	t.Helper()
	var got map[audit.EventStage]audit.Event
	e2eutil.Eventually(t, 10*time.Second, what, func() bool {
		got = map[audit.EventStage]audit.Event{}
		for _, ev := range e2eutil.AuditEvents(t, path) {
			if match(&ev) {
				got[ev.Stage] = ev
			}
		}
		for _, s := range stages {
			if _, ok := got[s]; !ok {
				return false
			}
		}
		return true
	})
	return got
}

func objectIs(verb, resource, name string) func(*audit.Event) bool {
	return func(ev *audit.Event) bool {
		if ev.Verb != verb || ev.ObjectRef == nil || ev.ObjectRef.Resource != resource {
			return false
		}
		// A create learns its name from the body, after RequestReceived.
		return ev.ObjectRef.Name == name || (verb == "create" && ev.Stage == audit.StageRequestReceived && ev.ObjectRef.Name == "")
	}
}

func TestAudit(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "audit.log")
	policyPath := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policyPath, []byte(auditPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := testserver.Start(t, testserver.Options{Configure: func(c *config.Config) {
		for i, e := range c.Pipeline {
			if e.Name == "audit" {
				c.Pipeline[i].Config = map[string]any{"policyFile": policyPath, "logPath": logPath, "maxSize": 1}
			}
		}
	}})
	cs := e2eutil.Clientset(t, ts.Config)
	ctx := context.Background()
	const secretValue = "hunter2-very-secret"

	t.Run("secrets at Metadata: no data in any event", func(t *testing.T) {
		_, err := cs.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "s1"}, StringData: map[string]string{"password": secretValue},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out, err := e2eutil.Kubectl(t, ts, "get", "secret", "s1", "-o", "yaml"); err != nil || !strings.Contains(out, "password:") {
			t.Fatalf("kubectl get secret: %v\n%s", err, out)
		}
		evs := findEvents(t, logPath, "the secret's create events", objectIs("create", "secrets", "s1"),
			audit.StageRequestReceived, audit.StageResponseComplete)
		done := evs[audit.StageResponseComplete]
		if done.Level != audit.LevelMetadata || done.RequestObject != nil || done.ResponseObject != nil {
			t.Errorf("create secret event: level %s, requestObject %s, responseObject %s", done.Level, done.RequestObject, done.ResponseObject)
		}
		if done.User.Username != "kubernetes-admin" || done.ResponseStatus == nil || done.ResponseStatus.Code != 201 {
			t.Errorf("create secret event: user %+v status %+v", done.User, done.ResponseStatus)
		}
		if done.Annotations["authorization.k8s.io/decision"] != "allow" {
			t.Errorf("annotations = %v, want the authorization decision", done.Annotations)
		}
		if done.ObjectRef.Namespace != "default" || done.ObjectRef.APIVersion != "v1" {
			t.Errorf("objectRef = %+v", done.ObjectRef)
		}
		findEvents(t, logPath, "kubectl's get of the secret", objectIs("get", "secrets", "s1"), audit.StageResponseComplete)
		raw, err := os.ReadFile(logPath)
		if err != nil {
			t.Fatal(err)
		}
		for _, leak := range []string{secretValue, "aHVudGVyMi12ZXJ5LXNlY3JldA=="} {
			if strings.Contains(string(raw), leak) {
				t.Fatalf("the audit log holds the secret's data %q", leak)
			}
		}
	})

	t.Run("RequestResponse has both bodies, and the Audit-Id header names the event", func(t *testing.T) {
		var auditID string
		cfg := rest.CopyConfig(ts.Config)
		cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
			return roundTripper(func(r *http.Request) (*http.Response, error) {
				resp, err := rt.RoundTrip(r)
				if err == nil && r.Method == http.MethodPost {
					auditID = resp.Header.Get("Audit-Id")
				}
				return resp, err
			})
		}
		_, err := e2eutil.Clientset(t, cfg).CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "c1"}, Data: map[string]string{"colour": "teal"},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		evs := findEvents(t, logPath, "the configmap's create", objectIs("create", "configmaps", "c1"),
			audit.StageRequestReceived, audit.StageResponseComplete)
		done := evs[audit.StageResponseComplete]
		if auditID == "" || string(done.AuditID) != auditID || string(evs[audit.StageRequestReceived].AuditID) != auditID {
			t.Errorf("Audit-Id header %q, events %q %q", auditID, done.AuditID, evs[audit.StageRequestReceived].AuditID)
		}
		if done.Level != audit.LevelRequestResponse || !strings.Contains(string(done.RequestObject), `"colour":"teal"`) ||
			!strings.Contains(string(done.ResponseObject), `"uid"`) || !strings.Contains(string(done.ResponseObject), `"colour":"teal"`) {
			t.Errorf("bodies: request %s response %s", done.RequestObject, done.ResponseObject)
		}
		if evs[audit.StageRequestReceived].RequestObject != nil {
			t.Errorf("RequestReceived has a body: %s", evs[audit.StageRequestReceived].RequestObject)
		}
	})

	t.Run("Request level has the request only", func(t *testing.T) {
		if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa1"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		done := findEvents(t, logPath, "the service account's create", objectIs("create", "serviceaccounts", "sa1"), audit.StageResponseComplete)[audit.StageResponseComplete]
		if done.Level != audit.LevelRequest || !strings.Contains(string(done.RequestObject), `"sa1"`) || done.ResponseObject != nil {
			t.Errorf("level %s request %s response %s", done.Level, done.RequestObject, done.ResponseObject)
		}
	})

	t.Run("failed authentication is audited", func(t *testing.T) {
		cfg := rest.AnonymousClientConfig(ts.Config)
		cfg.BearerToken = "not-a-token"
		_, err := e2eutil.Clientset(t, cfg).CoreV1().Namespaces().Get(ctx, "audit-401", metav1.GetOptions{})
		if err == nil {
			t.Fatal("a bad token was let in")
		}
		evs := findEvents(t, logPath, "the 401's event", objectIs("get", "namespaces", "audit-401"), audit.StageResponseStarted)
		ev := evs[audit.StageResponseStarted]
		if ev.ResponseStatus == nil || ev.ResponseStatus.Code != 401 || ev.ResponseStatus.Message != "Authentication failed, attempted: bearer" || ev.User.Username != "" {
			t.Errorf("event = %+v", ev)
		}
		if _, ok := evs[audit.StageRequestReceived]; ok {
			t.Error("a failed authentication has a RequestReceived event; kube writes ResponseStarted only")
		}
	})

	t.Run("impersonation records both users, a refusal its decision", func(t *testing.T) {
		cfg := rest.CopyConfig(ts.Config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: "alice", Groups: []string{"devs"}}
		_, err := e2eutil.Clientset(t, cfg).CoreV1().ConfigMaps("default").Get(ctx, "c1", metav1.GetOptions{})
		mustForbidden(t, err, `configmaps "c1" is forbidden: User "alice" cannot get resource "configmaps" in API group "" in the namespace "default"`)
		done := findEvents(t, logPath, "alice's get", objectIs("get", "configmaps", "c1"), audit.StageResponseComplete)[audit.StageResponseComplete]
		if done.User.Username != "kubernetes-admin" || done.ImpersonatedUser == nil || done.ImpersonatedUser.Username != "alice" ||
			strings.Join(done.ImpersonatedUser.Groups, ",") != "devs,system:authenticated" {
			t.Errorf("user %+v impersonated %+v", done.User, done.ImpersonatedUser)
		}
		if done.Annotations["authorization.k8s.io/decision"] != "forbid" || done.ResponseStatus.Code != 403 || done.ResponseStatus.Reason != metav1.StatusReasonForbidden {
			t.Errorf("annotations %v status %+v", done.Annotations, done.ResponseStatus)
		}
	})

	t.Run("a watch has ResponseStarted", func(t *testing.T) {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		w, err := cs.CoreV1().ConfigMaps("default").Watch(wctx, metav1.ListOptions{FieldSelector: "metadata.name=c-watch"})
		if err != nil {
			t.Fatal(err)
		}
		findEvents(t, logPath, "the watch's ResponseStarted", func(ev *audit.Event) bool {
			return ev.Verb == "watch" && ev.ObjectRef != nil && ev.ObjectRef.Resource == "configmaps" && strings.Contains(ev.RequestURI, "c-watch")
		}, audit.StageRequestReceived, audit.StageResponseStarted)
		w.Stop()
		cancel()
		findEvents(t, logPath, "the watch's ResponseComplete", func(ev *audit.Event) bool {
			return ev.Verb == "watch" && strings.Contains(ev.RequestURI, "c-watch")
		}, audit.StageResponseComplete)
	})

	t.Run("the policy file is reloaded when it changes", func(t *testing.T) {
		quiet := strings.Replace(auditPolicy, "- level: Metadata\n  resources:", "- level: None\n  namespaces: [\"quiet\"]\n- level: Metadata\n  resources:", 1)
		if err := os.WriteFile(policyPath, []byte(quiet), 0o600); err != nil {
			t.Fatal(err)
		}
		// Once the new policy is in, a probe in "quiet" leaves no event
		// while one sent after it in "loud" does.
		e2eutil.Eventually(t, 10*time.Second, "the new policy", func() bool {
			for _, ns := range []string{"quiet", "loud"} {
				_, _ = cs.CoreV1().ConfigMaps(ns).Get(ctx, "probe", metav1.GetOptions{})
			}
			var last []audit.Event
			for _, ev := range e2eutil.AuditEvents(t, logPath) {
				if ev.ObjectRef != nil && ev.ObjectRef.Name == "probe" && ev.Stage == audit.StageResponseComplete {
					last = append(last, ev)
				}
			}
			n := len(last)
			return n >= 2 && last[n-1].ObjectRef.Namespace == "loud" && last[n-2].ObjectRef.Namespace == "loud"
		})
	})
}

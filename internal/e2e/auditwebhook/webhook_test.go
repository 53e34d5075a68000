package auditwebhook

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
	"github.com/kpipe/kpipe/plugins/audit"
)

// policy audits what the tests do at Metadata, and not the server's own
// loopback requests nor health checks.
const policy = `
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  users: ["system:apiserver"]
- level: None
  nonResourceURLs: ["/readyz*", "/livez*", "/healthz*", "/metrics"]
- level: Metadata
`

// token is the receiver's credential, given in the kubeconfig.
const token = "audit-receiver-token"

// receiver is an HTTPS audit webhook on 127.0.0.1: it checks the bearer
// token, answers 500 to the first fail POSTs, and keeps the EventLists.
type receiver struct {
	srv *httptest.Server

	mu     sync.Mutex
	posts  int
	fail   int
	lists  []audit.EventList
	events []audit.Event
}

func newReceiver(t *testing.T, fail int) *receiver {
	rc := &receiver{fail: fail}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.posts++
		if rc.fail > 0 {
			rc.fail--
			http.Error(w, "not now", http.StatusInternalServerError)
			return
		}
		var l audit.EventList
		if err := json.Unmarshal(body, &l); err != nil || r.URL.Path != "/audit" ||
			r.Header.Get("Content-Type") != "application/json" || l.Kind != "EventList" || l.APIVersion != "audit.k8s.io/v1" {
			t.Errorf("receiver: %s %s %q: %v", r.Method, r.URL.Path, body, err)
			return
		}
		rc.lists = append(rc.lists, l)
		rc.events = append(rc.events, l.Items...)
	}))
	rc.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	rc.srv.StartTLS()
	t.Cleanup(rc.srv.Close)
	return rc
}

// kubeconfig writes the file kube's --audit-webhook-config-file takes:
// the receiver's URL and CA, and the token.
func (rc *receiver) kubeconfig(t *testing.T) string {
	t.Helper()
	c := clientcmdapi.NewConfig()
	c.Clusters["receiver"] = &clientcmdapi.Cluster{Server: rc.srv.URL + "/audit",
		CertificateAuthorityData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rc.srv.Certificate().Raw})}
	c.AuthInfos["apiserver"] = &clientcmdapi.AuthInfo{Token: token}
	c.Contexts["webhook"] = &clientcmdapi.Context{Cluster: "receiver", AuthInfo: "apiserver"}
	c.CurrentContext = "webhook"
	path := filepath.Join(t.TempDir(), "audit-webhook.kubeconfig")
	if err := clientcmd.WriteToFile(*c, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func (rc *receiver) snapshot() (posts int, events []audit.Event) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.posts, slices.Clone(rc.events)
}

// find polls for the events match selects until every stage is there.
func (rc *receiver) find(t *testing.T, what string, match func(*audit.Event) bool, stages ...audit.EventStage) map[audit.EventStage]audit.Event {
	t.Helper()
	var got map[audit.EventStage]audit.Event
	e2eutil.Eventually(t, 15*time.Second, what, func() bool {
		got = map[audit.EventStage]audit.Event{}
		_, evs := rc.snapshot()
		for _, ev := range evs {
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

// webhookConfig is the audit stage's config with the webhook block.
func webhookConfig(t *testing.T, rc *receiver, webhook map[string]any) map[string]any {
	t.Helper()
	policyPath := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policyPath, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	webhook["configFile"] = rc.kubeconfig(t)
	return map[string]any{"policyFile": policyPath, "webhook": webhook}
}

func start(t *testing.T, auditConfig map[string]any) *testserver.TestServer {
	return testserver.Start(t, testserver.Options{Configure: func(c *config.Config) {
		for i, e := range c.Pipeline {
			if e.Name == "audit" {
				c.Pipeline[i].Config = auditConfig
			}
		}
	}})
}

// createConfigMap creates one with client-go's HTTP client and returns
// the Audit-Id the server answered with.
func createConfigMap(t *testing.T, ts *testserver.TestServer, name string) string {
	t.Helper()
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"},"data":{"k":"v"}}`
	resp, err := ts.HTTPClient(t).Post(ts.URL()+"/api/v1/namespaces/default/configmaps", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("create %s: %d %s", name, resp.StatusCode, b)
	}
	id := resp.Header.Get("Audit-Id")
	if id == "" {
		t.Fatal("no Audit-Id header")
	}
	return id
}

func byID(id string) func(*audit.Event) bool {
	return func(ev *audit.Event) bool { return string(ev.AuditID) == id }
}

func TestAuditWebhookEvents(t *testing.T) {
	rc := newReceiver(t, 0)
	ts := start(t, webhookConfig(t, rc, map[string]any{"batchMaxWait": "200ms"}))
	ctx := context.Background()

	// client-go: a create whose Audit-Id we read, and a typed get.
	id := createConfigMap(t, ts, "wh-one")
	got := rc.find(t, "the create's events", byID(id), audit.StageRequestReceived, audit.StageResponseComplete)
	for stage, ev := range got {
		if ev.Verb != "create" || ev.Level != audit.LevelMetadata || ev.RequestURI != "/api/v1/namespaces/default/configmaps" {
			t.Errorf("%s: verb %q level %q uri %q", stage, ev.Verb, ev.Level, ev.RequestURI)
		}
		if ev.User.Username != "kubernetes-admin" || !slices.Contains(ev.User.Groups, "system:masters") {
			t.Errorf("%s: user %+v", stage, ev.User)
		}
		if r := ev.ObjectRef; r == nil || r.Resource != "configmaps" || r.Namespace != "default" || r.APIVersion != "v1" {
			t.Errorf("%s: objectRef %+v", stage, ev.ObjectRef)
		}
		if len(ev.SourceIPs) == 0 || ev.SourceIPs[0] != "127.0.0.1" {
			t.Errorf("%s: sourceIPs %v", stage, ev.SourceIPs)
		}
		if ev.Kind != "" || ev.APIVersion != "" {
			t.Errorf("%s: an item of the EventList has kind %q apiVersion %q; kube's have neither", stage, ev.Kind, ev.APIVersion)
		}
	}
	done := got[audit.StageResponseComplete]
	if done.ObjectRef.Name != "wh-one" || done.ResponseStatus == nil || done.ResponseStatus.Code != http.StatusCreated {
		t.Errorf("ResponseComplete: objectRef %+v responseStatus %+v", done.ObjectRef, done.ResponseStatus)
	}
	if d := done.Annotations["authorization.k8s.io/decision"]; d != "allow" {
		t.Errorf("annotations = %v", done.Annotations)
	}

	cs := e2eutil.Clientset(t, ts.Config)
	if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "nope", metav1.GetOptions{}); err == nil {
		t.Fatal("get of a missing configmap succeeded")
	}
	missing := rc.find(t, "the failed get's events", func(ev *audit.Event) bool {
		return ev.Verb == "get" && ev.ObjectRef != nil && ev.ObjectRef.Name == "nope"
	}, audit.StageResponseComplete)[audit.StageResponseComplete]
	if st := missing.ResponseStatus; st == nil || st.Code != 404 || st.Reason != metav1.StatusReasonNotFound || st.Message != `configmaps "nope" not found` {
		t.Errorf("get nope: responseStatus %+v", missing.ResponseStatus)
	}

	// kubectl.
	if _, err := e2eutil.Kubectl(t, ts, "create", "configmap", "wh-kubectl", "-n", "default", "--from-literal=a=b"); err != nil {
		t.Fatalf("kubectl create: %v", err)
	}
	out, err := e2eutil.Kubectl(t, ts, "get", "configmap", "wh-kubectl", "-n", "default", "-o", "name")
	if err != nil || strings.TrimSpace(out) != "configmap/wh-kubectl" {
		t.Fatalf("kubectl get: %v %s", err, out)
	}
	for _, verb := range []string{"create", "get"} {
		evs := rc.find(t, "kubectl's "+verb, func(ev *audit.Event) bool {
			return ev.Verb == verb && strings.HasPrefix(ev.UserAgent, "kubectl") && ev.ObjectRef != nil &&
				(ev.ObjectRef.Name == "wh-kubectl" || ev.Stage == audit.StageRequestReceived)
		}, audit.StageRequestReceived, audit.StageResponseComplete)
		if ev := evs[audit.StageResponseComplete]; ev.AuditID != evs[audit.StageRequestReceived].AuditID && verb == "get" {
			t.Errorf("kubectl get: RequestReceived and ResponseComplete differ in auditID")
		}
	}

	// Events go in EventLists of several when requests come together.
	_, evs := rc.snapshot()
	rc.mu.Lock()
	lists := len(rc.lists)
	rc.mu.Unlock()
	if lists >= len(evs) {
		t.Errorf("%d lists for %d events: no batching", lists, len(evs))
	}

	_, metrics := e2eutil.Get(t, ts.HTTPClient(t), ts.URL()+"/metrics")
	e2eutil.MustContain(t, "/metrics", metrics, `apiserver_audit_level_total{level="Metadata"}`, "apiserver_audit_event_total")
	if strings.Contains(metrics, `apiserver_audit_error_total{plugin="webhook"}`) && !strings.Contains(metrics, `apiserver_audit_error_total{plugin="webhook"} 0`) {
		t.Errorf("webhook errors reported:\n%s", grep(metrics, "apiserver_audit_error_total"))
	}
}

func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestAuditWebhookRetries(t *testing.T) {
	rc := newReceiver(t, 2)
	ts := start(t, webhookConfig(t, rc, map[string]any{"batchMaxWait": "100ms", "initialBackoff": "100ms"}))
	id := createConfigMap(t, ts, "wh-retried")
	rc.find(t, "the create's events after the receiver recovered", byID(id), audit.StageRequestReceived, audit.StageResponseComplete)
	if posts, _ := rc.snapshot(); posts < 3 {
		t.Errorf("receiver had %d POSTs, want the 2 failures and a retry", posts)
	}
	_, metrics := e2eutil.Get(t, ts.HTTPClient(t), ts.URL()+"/metrics")
	if strings.Contains(metrics, `apiserver_audit_error_total{plugin="webhook"} `) {
		t.Errorf("a retried batch counted as an error:\n%s", grep(metrics, "apiserver_audit_error_total"))
	}
}

func TestAuditWebhookBlocking(t *testing.T) {
	rc := newReceiver(t, 0)
	ts := start(t, webhookConfig(t, rc, map[string]any{"mode": "blocking"}))
	id := createConfigMap(t, ts, "wh-blocking")
	// Blocking: both events were POSTed before the response came back.
	_, evs := rc.snapshot()
	n := 0
	for _, ev := range evs {
		if string(ev.AuditID) == id {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d events of the create at the receiver when it answered, want 2", n)
	}
}

func TestAuditWebhookShutdownFlush(t *testing.T) {
	rc := newReceiver(t, 0)
	ts := start(t, webhookConfig(t, rc, map[string]any{"batchMaxWait": "1h"}))
	cs := e2eutil.Clientset(t, ts.Config)
	id := createConfigMap(t, ts, "wh-flushed")
	if _, err := cs.CoreV1().ConfigMaps("default").Create(context.Background(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "wh-flushed-2"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if posts, _ := rc.snapshot(); posts != 0 {
		t.Fatalf("receiver had %d POSTs before the batch was due", posts)
	}
	ts.Stop(t)
	posts, evs := rc.snapshot()
	var stages []audit.EventStage
	names := map[string]bool{}
	for _, ev := range evs {
		if string(ev.AuditID) == id {
			stages = append(stages, ev.Stage)
		}
		if ev.ObjectRef != nil {
			names[ev.ObjectRef.Name] = true
		}
	}
	slices.Sort(stages)
	if len(stages) != 2 || !names["wh-flushed-2"] {
		t.Errorf("after shutdown: %d POSTs, stages of the first create %v, names %v", posts, stages, names)
	}
}

func TestAuditWebhookBlockingStrict(t *testing.T) {
	rc := newReceiver(t, 1<<30)
	ts := start(t, webhookConfig(t, rc, map[string]any{"mode": "blocking-strict", "initialBackoff": "1ms"}))
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"wh-strict"}}`
	resp, err := ts.HTTPClient(t).Post(ts.URL()+"/api/v1/namespaces/default/configmaps", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `Internal Server Error: "/api/v1/namespaces/default/configmaps": failed to store audit event` + "\n"; resp.StatusCode != 500 || string(b) != want {
		t.Errorf("create with the receiver down: %d %q, want 500 %q", resp.StatusCode, b, want)
	}
	if posts, _ := rc.snapshot(); posts != 5 {
		t.Errorf("receiver had %d POSTs, want kube's 5 tries", posts)
	}
	cs := e2eutil.Clientset(t, ts.Config)
	if _, err := cs.CoreV1().ConfigMaps("default").Get(context.Background(), "wh-strict", metav1.GetOptions{}); err == nil {
		t.Error("the refused create was stored")
	}
	_, metrics := e2eutil.Get(t, ts.HTTPClient(t), ts.URL()+"/metrics")
	e2eutil.MustContain(t, "/metrics", metrics, "apiserver_audit_requests_rejected_total 2", `apiserver_audit_error_total{plugin="webhook"} 2`)
}

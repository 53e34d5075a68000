package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
	"github.com/kpipe/kpipe/plugins/audit"
)

type env struct {
	ts       *testserver.TestServer
	auditLog string
	cs       kubernetes.Interface
	hooks    *hookServer
	prefix   string // the server's storage prefix
}

// start runs a server whose admission lists hold the webhook plugins
// (they are not in the default lists).
func start(t *testing.T) *env {
	t.Helper()
	return startReplica(t, startHookServer(t), "")
}

// startReplica starts a server on the storage prefix of another (a
// replica), or on its own with prefix "".
func startReplica(t *testing.T, hooks *hookServer, prefix string) *env {
	t.Helper()
	e := &env{hooks: hooks, auditLog: filepath.Join(t.TempDir(), "audit.log")}
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.ts = testserver.Start(t, testserver.Options{Configure: func(c *config.Config) {
		if prefix != "" {
			c.Storage.Prefix = prefix
		}
		e.prefix = c.Storage.Prefix
		e2eutil.WebhookAdmission(c)
		for i, p := range c.Pipeline {
			if p.Name == "audit" {
				c.Pipeline[i].Config = map[string]any{"policyFile": policy, "logPath": e.auditLog}
			}
		}
	}})
	e.cs = kubernetes.NewForConfigOrDie(e.ts.Config)
	return e
}

var configMapRules = []admissionregistrationv1.RuleWithOperations{{
	Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
	Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
}}

// hook is one webhook's settings for a test case; the case's objects
// carry the label case=<caseName>, and only they are selected.
type hook struct {
	name       string
	path       string
	url        string // overrides the hook server's
	service    *admissionregistrationv1.ServiceReference
	fail       bool
	timeout    int32
	sideEffect admissionregistrationv1.SideEffectClass
	reinvoke   bool
	nsSelector *metav1.LabelSelector
	conditions []admissionregistrationv1.MatchCondition
}

func (e *env) clientConfig(h hook) admissionregistrationv1.WebhookClientConfig {
	cc := admissionregistrationv1.WebhookClientConfig{CABundle: e.hooks.CA}
	switch {
	case h.service != nil:
		cc.Service = h.service
	case h.url != "":
		cc.URL = ptr.To(h.url)
	default:
		cc.URL = ptr.To(e.hooks.URL + h.path)
	}
	return cc
}

func (h hook) common() (admissionregistrationv1.FailurePolicyType, *int32, admissionregistrationv1.SideEffectClass) {
	fp := admissionregistrationv1.Ignore
	if h.fail {
		fp = admissionregistrationv1.Fail
	}
	var timeout *int32
	if h.timeout != 0 {
		timeout = ptr.To(h.timeout)
	}
	se := h.sideEffect
	if se == "" {
		se = admissionregistrationv1.SideEffectClassNone
	}
	return fp, timeout, se
}

func caseSelector(caseName string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"case": caseName}}
}

// validating creates a ValidatingWebhookConfiguration named caseName and
// deletes it when the test ends.
func (e *env) validating(t *testing.T, caseName string, hooks ...hook) {
	t.Helper()
	c := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: caseName}}
	for _, h := range hooks {
		fp, timeout, se := h.common()
		c.Webhooks = append(c.Webhooks, admissionregistrationv1.ValidatingWebhook{
			Name: h.name, ClientConfig: e.clientConfig(h), Rules: configMapRules, FailurePolicy: &fp,
			TimeoutSeconds: timeout, SideEffects: &se, AdmissionReviewVersions: []string{"v1"},
			ObjectSelector: caseSelector(caseName), NamespaceSelector: h.nsSelector, MatchConditions: h.conditions,
		})
	}
	ctx := context.Background()
	if _, err := e.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, c, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, caseName, metav1.DeleteOptions{})
	})
}

// mutating creates a MutatingWebhookConfiguration named caseName.
func (e *env) mutating(t *testing.T, caseName string, hooks ...hook) {
	t.Helper()
	c := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: caseName}}
	for _, h := range hooks {
		fp, timeout, se := h.common()
		policy := admissionregistrationv1.NeverReinvocationPolicy
		if h.reinvoke {
			policy = admissionregistrationv1.IfNeededReinvocationPolicy
		}
		c.Webhooks = append(c.Webhooks, admissionregistrationv1.MutatingWebhook{
			Name: h.name, ClientConfig: e.clientConfig(h), Rules: configMapRules, FailurePolicy: &fp,
			TimeoutSeconds: timeout, SideEffects: &se, AdmissionReviewVersions: []string{"v1"},
			ObjectSelector: caseSelector(caseName), NamespaceSelector: h.nsSelector, ReinvocationPolicy: &policy,
		})
	}
	ctx := context.Background()
	if _, err := e.cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, c, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, caseName, metav1.DeleteOptions{})
	})
}

func configMap(caseName, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"case": caseName}}, Data: map[string]string{"k": "v"}}
}

var seq int

// create makes a configmap of the case in ns, under a fresh name.
func (e *env) create(caseName, ns string, dryRun bool) (*corev1.ConfigMap, error) {
	seq++
	opts := metav1.CreateOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return e.cs.CoreV1().ConfigMaps(ns).Create(context.Background(), configMap(caseName, fmt.Sprintf("%s-%d", caseName, seq)), opts)
}

// eventually polls until cond holds: configurations reach the plugins
// through a watch, a moment after they are written.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func code(err error) int32 {
	if s, ok := err.(apierrors.APIStatus); ok {
		return s.Status().Code
	}
	return 0
}

// denied waits until a create of the case is refused and returns the
// error.
func (e *env) denied(t *testing.T, caseName, ns string) error {
	t.Helper()
	var last error
	eventually(t, caseName+" to refuse a create", func() bool {
		_, last = e.create(caseName, ns, false)
		return last != nil
	})
	return last
}

func namespace(t *testing.T, cs kubernetes.Interface, name string, labels map[string]string) {
	t.Helper()
	_, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

func TestWebhooks(t *testing.T) {
	e := start(t)
	for _, c := range []struct {
		name string
		fn   func(*testing.T, *env)
	}{
		{"Deny", deny},
		{"MutateWithJSONPatch", mutate},
		{"DownWebhookFailurePolicy", down},
		{"SlowWebhookTimesOut", slow},
		{"GarbageAnswer", garbage},
		{"NamespaceSelector", namespaceSelector},
		{"ServiceReference", serviceReference},
		{"DryRunSideEffects", dryRun},
		{"Reinvocation", reinvocation},
		{"MatchConditions", matchConditions},
		{"Metrics", metrics},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, e) })
	}
}

func deny(t *testing.T, e *env) {
	e.validating(t, "deny", hook{name: "deny.kpipe.test", path: "/deny", fail: true})
	err := e.denied(t, "deny", "default")
	want := `admission webhook "deny.kpipe.test" denied the request: no thanks`
	if code(err) != http.StatusForbidden || err.Error() != want {
		t.Fatalf("got %d %q, want 403 %q", code(err), err.Error(), want)
	}
	// What the webhook was sent.
	req := e.hooks.Last("/deny")
	if req.Operation != "CREATE" || req.Kind.Kind != "ConfigMap" || req.Resource.Resource != "configmaps" || req.Namespace != "default" ||
		req.RequestResource == nil || req.RequestKind == nil || req.DryRun == nil || *req.DryRun {
		t.Fatalf("review: %+v", req)
	}
	if req.UserInfo.Username == "" || len(req.UserInfo.Groups) == 0 {
		t.Fatalf("review without the user: %+v", req.UserInfo)
	}
	var opts metav1.CreateOptions
	if err := json.Unmarshal(req.Options.Raw, &opts); err != nil || opts.Kind != "CreateOptions" {
		t.Fatalf("options %s: %v", req.Options.Raw, err)
	}
	if !strings.Contains(string(req.Object.Raw), `"kind":"ConfigMap"`) || len(req.OldObject.Raw) != 0 {
		t.Fatalf("object %s, oldObject %s", req.Object.Raw, req.OldObject.Raw)
	}
	// Objects without the case's label are not sent.
	calls := e.hooks.Calls("/deny")
	if _, err := e.cs.CoreV1().ConfigMaps("default").Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "deny-unlabeled"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("an unselected object was refused: %v", err)
	}
	if e.hooks.Calls("/deny") != calls {
		t.Fatal("the webhook was called for an object its objectSelector does not select")
	}

	// A denial without a code is 400; an update carries the old object.
	e.validating(t, "deny-bare", hook{name: "bare.kpipe.test", path: "/deny-bare", fail: true})
	err = e.denied(t, "deny-bare", "default")
	if code(err) != http.StatusBadRequest || err.Error() != `admission webhook "bare.kpipe.test" denied the request: nope` {
		t.Fatalf("got %d %q", code(err), err.Error())
	}
}

func mutate(t *testing.T, e *env) {
	e.mutating(t, "mutate", hook{name: "label.kpipe.test", path: "/label", fail: true})
	var cm *corev1.ConfigMap
	eventually(t, "the mutating webhook to label", func() bool {
		var err error
		cm, err = e.create("mutate", "default", false)
		if err != nil {
			t.Fatal(err)
		}
		return cm.Labels["webhook"] == "was-here"
	})
	stored, err := e.cs.CoreV1().ConfigMaps("default").Get(context.Background(), cm.Name, metav1.GetOptions{})
	if err != nil || stored.Labels["webhook"] != "was-here" || stored.Labels["case"] != "mutate" {
		t.Fatalf("stored %v: %v", stored.Labels, err)
	}
	// An update is sent with its old object, and UpdateOptions.
	stored.Data["k"] = "changed"
	if _, err := e.cs.CoreV1().ConfigMaps("default").Update(context.Background(), stored, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	req := e.hooks.Last("/label")
	if req.Operation != "UPDATE" || len(req.OldObject.Raw) == 0 || !strings.Contains(string(req.Options.Raw), `"UpdateOptions"`) {
		t.Fatalf("update review: op %s old %s options %s", req.Operation, req.OldObject.Raw, req.Options.Raw)
	}
}

func down(t *testing.T, e *env) {
	port := testserver.FreePorts(t, 1)[0]
	url := "https://127.0.0.1:" + port + "/nobody"
	e.validating(t, "down-fail", hook{name: "down-fail.kpipe.test", url: url, fail: true})
	err := e.denied(t, "down-fail", "default")
	if code(err) != http.StatusInternalServerError || !apierrors.IsInternalError(err) ||
		!strings.Contains(err.Error(), `failed calling webhook "down-fail.kpipe.test": failed to call webhook: Post "https://127.0.0.1:`+port+`/nobody?timeout=10s"`) {
		t.Fatalf("got %d %q", code(err), err.Error())
	}
	e.validating(t, "down-ignore", hook{name: "down-ignore.kpipe.test", url: url})
	var ann map[string]string
	eventually(t, "the down webhook to be skipped under Ignore", func() bool {
		cm, err := e.create("down-ignore", "default", false)
		if err != nil {
			t.Fatalf("failurePolicy Ignore: %v", err)
		}
		ann = e.auditAnnotations(t, cm.Name)
		return ann["failed-open.validating.webhook.admission.k8s.io/round_0_index_0"] == "down-ignore.kpipe.test"
	})
	// Mutating webhooks too.
	e.mutating(t, "down-fail-m", hook{name: "down-fail-m.kpipe.test", url: url, fail: true})
	if err := e.denied(t, "down-fail-m", "default"); code(err) != http.StatusInternalServerError {
		t.Fatalf("got %v", err)
	}
}

func slow(t *testing.T, e *env) {
	e.validating(t, "slow-fail", hook{name: "slow-fail.kpipe.test", path: "/slow", fail: true, timeout: 1})
	err := e.denied(t, "slow-fail", "default")
	if code(err) != http.StatusInternalServerError || !strings.Contains(err.Error(), `failed calling webhook "slow-fail.kpipe.test"`) ||
		!strings.Contains(err.Error(), "?timeout=1s") {
		t.Fatalf("got %d %q", code(err), err.Error())
	}
	// A request answered once the configuration is seen: time one more.
	start := time.Now()
	if _, err := e.create("slow-fail", "default", false); err == nil {
		t.Fatal("the slow webhook's request passed under failurePolicy Fail")
	}
	if d := time.Since(start); d < 900*time.Millisecond || d > 3*time.Second {
		t.Fatalf("a webhook with timeoutSeconds 1 took %v", d)
	}

	e.mutating(t, "slow-ignore", hook{name: "slow-ignore.kpipe.test", path: "/slow", timeout: 1})
	eventually(t, "the slow mutating webhook to be called", func() bool {
		calls := e.hooks.Calls("/slow")
		start = time.Now()
		if _, err := e.create("slow-ignore", "default", false); err != nil {
			t.Fatalf("failurePolicy Ignore: %v", err)
		}
		return e.hooks.Calls("/slow") > calls
	})
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("a webhook with timeoutSeconds 1 took %v", d)
	}
}

func garbage(t *testing.T, e *env) {
	e.validating(t, "garbage", hook{name: "garbage.kpipe.test", path: "/garbage", fail: true})
	err := e.denied(t, "garbage", "default")
	if code(err) != http.StatusInternalServerError || !strings.Contains(err.Error(), `failed calling webhook "garbage.kpipe.test"`) {
		t.Fatalf("got %d %q", code(err), err.Error())
	}
	e.mutating(t, "garbage-ignore", hook{name: "garbage-ignore.kpipe.test", path: "/garbage"})
	eventually(t, "the garbage webhook to be called", func() bool {
		calls := e.hooks.Calls("/garbage")
		if _, err := e.create("garbage-ignore", "default", false); err != nil {
			t.Fatalf("failurePolicy Ignore: %v", err)
		}
		return e.hooks.Calls("/garbage") > calls
	})
	// The server is still serving.
	if _, err := e.cs.CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
}

func namespaceSelector(t *testing.T, e *env) {
	namespace(t, e.cs, "wh-on", map[string]string{"webhooks": "on"})
	namespace(t, e.cs, "wh-off", nil)
	e.validating(t, "nssel", hook{name: "nssel.kpipe.test", path: "/deny", fail: true,
		nsSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"webhooks": "on"}}})
	if err := e.denied(t, "nssel", "wh-on"); code(err) != http.StatusForbidden {
		t.Fatalf("selected namespace: %v", err)
	}
	if _, err := e.create("nssel", "wh-off", false); err != nil {
		t.Fatalf("a namespace the selector skips: %v", err)
	}
}

// serviceReference: the webhook is a Service whose Endpoints point at the
// hook server. kube's validation refuses loopback endpoint addresses, so
// the Endpoints are written to storage directly, as a controller outside
// validation would have them.
func serviceReference(t *testing.T, e *env) {
	ctx := context.Background()
	namespace(t, e.cs, "webhook-svc", nil)
	_, err := e.cs.CoreV1().Services("webhook-svc").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "wh-svc"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(8443)}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var port int32
	fmt.Sscan(e.hooks.Port, &port)
	eps := &corev1.Endpoints{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Endpoints"},
		ObjectMeta: metav1.ObjectMeta{Name: "wh-svc", Namespace: "webhook-svc", UID: "5f6d2c1e-0000-4000-8000-000000000001", CreationTimestamp: metav1.Now()},
		Subsets: []corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{{IP: "127.0.0.1"}},
			Ports:     []corev1.EndpointPort{{Name: "https", Port: port, Protocol: corev1.ProtocolTCP}},
		}},
	}
	e.putRaw(t, "/services/endpoints/webhook-svc/wh-svc", eps)
	got, err := e.cs.CoreV1().Endpoints("webhook-svc").Get(ctx, "wh-svc", metav1.GetOptions{})
	if err != nil || len(got.Subsets) != 1 {
		t.Fatalf("endpoints as served: %v %v", got, err)
	}

	e.validating(t, "svcref", hook{name: "svcref.kpipe.test", fail: true, service: &admissionregistrationv1.ServiceReference{
		Namespace: "webhook-svc", Name: "wh-svc", Path: ptr.To("/deny"), Port: ptr.To[int32](443)}})
	err = e.denied(t, "svcref", "default")
	if code(err) != http.StatusForbidden || err.Error() != `admission webhook "svcref.kpipe.test" denied the request: no thanks` {
		t.Fatalf("got %d %q", code(err), err.Error())
	}
	// A Service with an EndpointSlice (and no Endpoints) resolves through
	// the slice.
	_, err = e.cs.CoreV1().Services("webhook-svc").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "wh-slice"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 8443, TargetPort: intstr.FromInt32(8443)}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.putRaw(t, "/endpointslices/webhook-svc/wh-slice-x1", &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{Name: "wh-slice-x1", Namespace: "webhook-svc", UID: "5f6d2c1e-0000-4000-8000-000000000003",
			CreationTimestamp: metav1.Now(), Labels: map[string]string{discoveryv1.LabelServiceName: "wh-slice"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(port), Protocol: ptr.To(corev1.ProtocolTCP)}},
	})
	e.validating(t, "svcslice", hook{name: "svcslice.kpipe.test", fail: true, service: &admissionregistrationv1.ServiceReference{
		Namespace: "webhook-svc", Name: "wh-slice", Path: ptr.To("/deny-bare"), Port: ptr.To[int32](8443)}})
	err = e.denied(t, "svcslice", "default")
	if code(err) != http.StatusBadRequest || err.Error() != `admission webhook "svcslice.kpipe.test" denied the request: nope` {
		t.Fatalf("got %d %q", code(err), err.Error())
	}

	// A service port the Service lacks fails the call.
	e.validating(t, "svcref-noport", hook{name: "svcref-noport.kpipe.test", fail: true, service: &admissionregistrationv1.ServiceReference{
		Namespace: "webhook-svc", Name: "wh-svc", Path: ptr.To("/allow"), Port: ptr.To[int32](9999)}})
	err = e.denied(t, "svcref-noport", "default")
	if code(err) != http.StatusInternalServerError || !strings.Contains(err.Error(), `no service port 9999 found for service "wh-svc"`) {
		t.Fatalf("got %d %q", code(err), err.Error())
	}
}

// putRaw writes obj to storage under the server's prefix, past
// validation: objects kube's validation refuses today but that storage may
// hold (written by older versions, or by hand).
func (e *env) putRaw(t *testing.T, key string, obj any) {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	etcd := testserver.DialSharedEtcd(t)
	if _, err := etcd.Put(context.Background(), e.prefix+key, string(b)); err != nil {
		t.Fatal(err)
	}
}

func dryRun(t *testing.T, e *env) {
	e.validating(t, "dry-none", hook{name: "dry-none.kpipe.test", path: "/allow", fail: true})
	eventually(t, "the side-effect-free webhook to see a dry run", func() bool {
		if _, err := e.create("dry-none", "default", true); err != nil {
			t.Fatalf("dry run with sideEffects None: %v", err)
		}
		req := e.hooks.Last("/allow")
		return req != nil && req.DryRun != nil && *req.DryRun && strings.Contains(string(req.Object.Raw), `"dry-none`)
	})
	// admissionregistration.k8s.io/v1 accepts only None and NoneOnDryRun;
	// a configuration with Unknown (from v1beta1 days) is written to
	// storage directly, as an upgraded cluster holds it.
	unknown := admissionregistrationv1.SideEffectClassUnknown
	fp := admissionregistrationv1.Ignore
	e.putRaw(t, "/validatingwebhookconfigurations/dry-unknown", &admissionregistrationv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: "dry-unknown", UID: "5f6d2c1e-0000-4000-8000-000000000002", CreationTimestamp: metav1.Now(), Generation: 1},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "dry-unknown.kpipe.test", ClientConfig: e.clientConfig(hook{path: "/allow"}), Rules: configMapRules,
			FailurePolicy: &fp, SideEffects: &unknown, AdmissionReviewVersions: []string{"v1"}, ObjectSelector: caseSelector("dry-unknown"),
			NamespaceSelector: &metav1.LabelSelector{}, TimeoutSeconds: ptr.To[int32](10),
		}},
	})
	t.Cleanup(func() {
		_ = e.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), "dry-unknown", metav1.DeleteOptions{})
	})
	var err error
	eventually(t, "the webhook with side effects to refuse a dry run", func() bool {
		_, err = e.create("dry-unknown", "default", true)
		return err != nil
	})
	if code(err) != http.StatusBadRequest || err.Error() != `admission webhook "dry-unknown.kpipe.test" does not support dry run` {
		t.Fatalf("got %d %q", code(err), err.Error())
	}
	if _, err := e.create("dry-unknown", "default", false); err != nil {
		t.Fatalf("a real request to a webhook with side effects: %v", err)
	}
}

// reinvocation: the first webhook (IfNeeded) runs again after the second
// changed the object; a Never one does not.
func reinvocation(t *testing.T, e *env) {
	e.mutating(t, "reinvoke",
		hook{name: "first.kpipe.test", path: "/warn", reinvoke: true},
		hook{name: "second.kpipe.test", path: "/second"})
	var cm *corev1.ConfigMap
	eventually(t, "the second webhook to label", func() bool {
		var err error
		cm, err = e.create("reinvoke", "default", false)
		if err != nil {
			t.Fatal(err)
		}
		return cm.Labels["second"] == "yes"
	})
	before := e.hooks.Calls("/warn")
	// The webhook's warning reaches the client, once though it was
	// called twice.
	warnings := &e2eutil.Warnings{}
	cfg := rest.CopyConfig(e.ts.Config)
	cfg.WarningHandler = warnings
	if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps("default").Create(context.Background(), configMap("reinvoke", "reinvoke-warned"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := warnings.Take(); len(got) != 1 || got[0] != "careful with that" {
		t.Fatalf("warnings %q", got)
	}
	if got := e.hooks.Calls("/warn") - before; got != 2 {
		t.Fatalf("the IfNeeded webhook was called %d times, want 2", got)
	}
	// kube's audit annotations: the webhook's own, prefixed by its name,
	// and one per call saying whether it mutated.
	ann := e.auditAnnotations(t, "reinvoke-warned")
	for k, v := range map[string]string{
		"first.kpipe.test/checked":                          "yes",
		"mutation.webhook.admission.k8s.io/round_0_index_1": `{"configuration":"reinvoke","webhook":"second.kpipe.test","mutated":true}`,
		"mutation.webhook.admission.k8s.io/round_1_index_0": `{"configuration":"reinvoke","webhook":"first.kpipe.test","mutated":false}`,
	} {
		if ann[k] != v {
			t.Errorf("audit annotation %s = %q, want %q (all: %v)", k, ann[k], v, ann)
		}
	}
	// The second round sees the second webhook's label.
	if !strings.Contains(string(e.hooks.Last("/warn").Object.Raw), `"second":"yes"`) {
		t.Fatalf("the reinvoked webhook saw %s", e.hooks.Last("/warn").Object.Raw)
	}

	e.mutating(t, "noreinvoke",
		hook{name: "first-never.kpipe.test", path: "/warn"},
		hook{name: "second-never.kpipe.test", path: "/second"})
	eventually(t, "the second webhook to label", func() bool {
		cm, err := e.create("noreinvoke", "default", false)
		if err != nil {
			t.Fatal(err)
		}
		return cm.Labels["second"] == "yes"
	})
	before = e.hooks.Calls("/warn")
	if _, err := e.create("noreinvoke", "default", false); err != nil {
		t.Fatal(err)
	}
	if got := e.hooks.Calls("/warn") - before; got != 1 {
		t.Fatalf("the Never webhook was called %d times, want 1", got)
	}
}

func matchConditions(t *testing.T, e *env) {
	e.validating(t, "mc", hook{name: "mc.kpipe.test", path: "/deny", fail: true, conditions: []admissionregistrationv1.MatchCondition{
		{Name: "not-skipped", Expression: "!object.metadata.name.endsWith('-skip')"},
		{Name: "a-user", Expression: "request.userInfo.username != ''"},
	}})
	if err := e.denied(t, "mc", "default"); code(err) != http.StatusForbidden {
		t.Fatalf("got %v", err)
	}
	calls := e.hooks.Calls("/deny")
	if _, err := e.cs.CoreV1().ConfigMaps("default").Create(context.Background(), configMap("mc", "mc-skip"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("a false matchCondition still called the webhook: %v", err)
	}
	if e.hooks.Calls("/deny") != calls {
		t.Fatal("the webhook was called though a matchCondition is false")
	}
	// A condition that errors fails the request under failurePolicy Fail.
	e.validating(t, "mc-error", hook{name: "mc-error.kpipe.test", path: "/allow", fail: true, conditions: []admissionregistrationv1.MatchCondition{
		{Name: "broken", Expression: "object.metadata.nothere.deeper == 1"},
	}})
	err := e.denied(t, "mc-error", "default")
	if code(err) != http.StatusForbidden || !strings.Contains(err.Error(), "is forbidden") {
		t.Fatalf("got %d %v", code(err), err)
	}
}

// auditAnnotations are the annotations of the ResponseComplete audit
// event of the configmap create named name.
func (e *env) auditAnnotations(t *testing.T, name string) map[string]string {
	t.Helper()
	var found map[string]string
	eventually(t, "the audit event of "+name, func() bool {
		b, err := os.ReadFile(e.auditLog)
		if err != nil {
			return false
		}
		for _, line := range strings.Split(string(b), "\n") {
			var ev audit.Event
			if json.Unmarshal([]byte(line), &ev) != nil || ev.Stage != audit.StageResponseComplete || ev.ObjectRef == nil {
				continue
			}
			if ev.Verb == "create" && ev.ObjectRef.Resource == "configmaps" && ev.ObjectRef.Name == name {
				found = ev.Annotations
				return true
			}
		}
		return false
	})
	return found
}

func metrics(t *testing.T, e *env) {
	c, err := rest.HTTPClientFor(e.ts.Config)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get(e.ts.Config.Host + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`apiserver_admission_webhook_admission_duration_seconds_bucket{name="deny.kpipe.test",operation="CREATE",rejected="true",type="validating",le="0.005"}`,
		`apiserver_admission_webhook_admission_duration_seconds_count{name="label.kpipe.test",operation="CREATE",rejected="false",type="admit"}`,
		`apiserver_admission_webhook_rejection_count{error_type="no_error",name="deny.kpipe.test",operation="CREATE",rejection_code="403",type="validating"}`,
		`apiserver_admission_webhook_rejection_count{error_type="calling_webhook_error",name="down-fail.kpipe.test",operation="CREATE",rejection_code="503",type="validating"}`,
		`apiserver_admission_webhook_request_total{code="200",name="label.kpipe.test",operation="CREATE",rejected="false",type="admit"}`,
		`apiserver_admission_webhook_request_total{code="403",name="deny.kpipe.test",operation="CREATE",rejected="true",type="validating"}`,
		`apiserver_admission_webhook_fail_open_count{name="down-ignore.kpipe.test",type="validating"}`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// A configuration written through one replica is enforced by another:
// each replica's plugins watch storage.
func TestConfigurationSeenByAnotherReplica(t *testing.T) {
	a := start(t)
	b := startReplica(t, a.hooks, a.prefix)
	start := time.Now()
	a.validating(t, "replica", hook{name: "replica.kpipe.test", path: "/deny", fail: true})
	if err := b.denied(t, "replica", "default"); code(err) != http.StatusForbidden {
		t.Fatalf("replica b: %v", err)
	}
	t.Logf("enforced by the other replica after %v", time.Since(start))
	if err := a.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), "replica", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "replica b to drop the deleted configuration", func() bool {
		_, err := b.create("replica", "default", false)
		return err == nil
	})
}

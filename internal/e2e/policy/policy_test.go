package policy

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
	"github.com/kpipe/kpipe/plugins/audit"
)

const auditPolicy = `
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  users: ["system:apiserver"]
- level: None
  nonResourceURLs: ["/readyz*", "/livez*", "/healthz*"]
- level: Metadata
`

// The inline policy and binding of the plugin's config: configmaps named
// "forbidden-*" are refused everywhere.
const inlineConfig = `
policies:
- metadata:
    name: inline-no-forbidden
  spec:
    matchConstraints:
      resourceRules:
      - apiGroups: [""]
        apiVersions: ["v1"]
        operations: ["CREATE"]
        resources: ["configmaps"]
    validations:
    - expression: "!object.metadata.name.startsWith('forbidden-')"
      message: "inline says no"
      reason: Forbidden
bindings:
- metadata:
    name: inline-no-forbidden-binding
  spec:
    policyName: inline-no-forbidden
    validationActions: [Deny]
`

type env struct {
	ts       *testserver.TestServer
	cs       kubernetes.Interface
	auditLog string
	warnings *e2eutil.Warnings
	warnCS   kubernetes.Interface
}

func start(t *testing.T) *env {
	dir := t.TempDir()
	logPath, policyPath := filepath.Join(dir, "audit.log"), filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policyPath, []byte(auditPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	var inline map[string]any
	if err := yaml.Unmarshal([]byte(inlineConfig), &inline); err != nil {
		t.Fatal(err)
	}
	ts := testserver.Start(t, testserver.Options{Configure: func(c *config.Config) {
		for i, e := range c.Pipeline {
			switch e.Name {
			case "audit":
				c.Pipeline[i].Config = map[string]any{"policyFile": policyPath, "logPath": logPath}
			case "validating-admission":
				c.Pipeline[i].Config = map[string]any{"plugins": []any{
					map[string]any{"name": "NamespaceLifecycle"},
					map[string]any{"name": "ValidatingAdmissionPolicy", "config": inline},
				}}
			}
		}
	}})
	w := &e2eutil.Warnings{}
	wcfg := rest.CopyConfig(ts.Config)
	wcfg.WarningHandler = w
	return &env{ts: ts, cs: kubernetes.NewForConfigOrDie(ts.Config), auditLog: logPath, warnings: w, warnCS: kubernetes.NewForConfigOrDie(wcfg)}
}

// TestValidatingAdmissionPolicy runs every case on one server.
func TestValidatingAdmissionPolicy(t *testing.T) {
	e := start(t)
	for _, c := range []struct {
		name string
		fn   func(*testing.T, *env)
	}{
		{"DenyReplicas", denyReplicas},
		{"MessageExpressionAndReason", messageExpression},
		{"WarnAndAudit", warnAndAudit},
		{"ParamsFromConfigMap", paramsFromConfigMap},
		{"NamespaceObjectAndVariables", namespaceObjectAndVariables},
		{"FailurePolicy", failurePolicy},
		{"CompileErrorRefused", compileError},
		{"TypeErrorInStatus", typeErrorInStatus},
		{"InlinePolicy", inlinePolicy},
		{"DeletedPolicyStopsApplying", deletedPolicy},
		{"Authorizer", authorizerChecks},
		{"MatchingAndParamSelector", matchingAndParamSelector},
		{"ParamsMisconfigured", paramsMisconfigured},
		{"StoredDefaultsMatchKube", storedDefaults},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, e) })
	}
}

var ctx = context.Background()

func namespace(t *testing.T, e *env, name string, labels map[string]string) {
	t.Helper()
	if _, err := e.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func rules(group, resource string, ops ...admissionregistrationv1.OperationType) *admissionregistrationv1.MatchResources {
	if len(ops) == 0 {
		ops = []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}
	}
	version := "v1"
	return &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
		RuleWithOperations: admissionregistrationv1.RuleWithOperations{Operations: ops, Rule: admissionregistrationv1.Rule{
			APIGroups: []string{group}, APIVersions: []string{version}, Resources: []string{resource},
		}},
	}}}
}

func createPolicy(t *testing.T, e *env, p *admissionregistrationv1.ValidatingAdmissionPolicy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	if _, err := e.cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("policy: %v", err)
	}
	if b != nil {
		if _, err := e.cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
			t.Fatalf("binding: %v", err)
		}
	}
}

func binding(name, policy string, actions []admissionregistrationv1.ValidationAction, nsLabel string) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy, ValidationActions: actions},
	}
	if nsLabel != "" {
		b.Spec.MatchResources = &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"vap-case": nsLabel}}}
	}
	return b
}

var deny = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}

func deployment(name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
			},
		},
	}
}

var dryRun = metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}

// waitRefused waits until a dry-run create is refused: policies and
// bindings reach the plugin through its informers, a moment after they
// are stored.
func waitRefused(t *testing.T, what string, create func(opts metav1.CreateOptions) error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for create(dryRun) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for the policy to refuse %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitAdmitted waits until create succeeds, the policy that refused it
// gone.
func waitAdmitted(t *testing.T, what string, create func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := create()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func expectStatus(t *testing.T, err error, code int32, reason metav1.StatusReason, msg string) {
	t.Helper()
	var se *apierrors.StatusError
	if err == nil {
		t.Fatalf("no error; want %d %s %q", code, reason, msg)
	}
	if !asStatus(err, &se) {
		t.Fatalf("error %v is not a Status", err)
	}
	s := se.ErrStatus
	if s.Code != code || s.Reason != reason || s.Message != msg {
		t.Fatalf("got %d %s %q\nwant %d %s %q", s.Code, s.Reason, s.Message, code, reason, msg)
	}
}

func asStatus(err error, out **apierrors.StatusError) bool {
	se, ok := err.(*apierrors.StatusError)
	*out = se
	return ok
}

// denyReplicas is kube's documentation example: at most 5 replicas in
// the namespaces the binding selects.
func denyReplicas(t *testing.T, e *env) {
	namespace(t, e, "vap-test", map[string]string{"vap-case": "replicas"})
	namespace(t, e, "vap-other", nil)
	createPolicy(t, e, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "demo-policy.example.com"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: rules("apps", "deployments"),
			Validations:      []admissionregistrationv1.Validation{{Expression: "object.spec.replicas <= 5"}},
		},
	}, binding("demo-binding-test.example.com", "demo-policy.example.com", deny, "replicas"))
	deps := e.cs.AppsV1().Deployments("vap-test")
	waitRefused(t, "6 replicas", func(o metav1.CreateOptions) error { _, err := deps.Create(ctx, deployment("big", 6), o); return err })

	_, err := deps.Create(ctx, deployment("big", 6), metav1.CreateOptions{})
	expectStatus(t, err, 422, metav1.StatusReasonInvalid, `deployments.apps "big" is forbidden: ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-test.example.com' denied request: failed expression: object.spec.replicas <= 5`)
	if _, err := deps.Create(ctx, deployment("small", 3), metav1.CreateOptions{}); err != nil {
		t.Fatalf("3 replicas: %v", err)
	}
	// An update is matched too.
	d, err := deps.Get(ctx, "small", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Spec.Replicas = ptr.To[int32](7)
	if _, err := deps.Update(ctx, d, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("update to 7 replicas: %v", err)
	}
	// The binding selects only labelled namespaces.
	if _, err := e.cs.AppsV1().Deployments("vap-other").Create(ctx, deployment("big", 6), metav1.CreateOptions{}); err != nil {
		t.Fatalf("namespace the binding does not select: %v", err)
	}
	// kube's policy check metric counts the denials.
	raw, err := e.cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const metric = `apiserver_validating_admission_policy_check_total{enforcement_action="deny",error_type="no_error",policy="demo-policy.example.com",policy_binding="demo-binding-test.example.com"}`
	if !strings.Contains(string(raw), metric) {
		t.Errorf("/metrics lacks %s", metric)
	}
}

func messageExpression(t *testing.T, e *env) {
	namespace(t, e, "vap-msg", map[string]string{"vap-case": "msg"})
	createPolicy(t, e, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "msg-policy"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: rules("apps", "deployments"),
			Validations: []admissionregistrationv1.Validation{{
				Expression:        "object.spec.replicas <= 2",
				Message:           "static message",
				MessageExpression: "'replicas ' + string(object.spec.replicas) + ' exceed 2 for ' + request.userInfo.username",
				Reason:            ptr.To(metav1.StatusReasonForbidden),
			}},
		},
	}, binding("msg-binding", "msg-policy", deny, "msg"))
	deps := e.cs.AppsV1().Deployments("vap-msg")
	waitRefused(t, "3 replicas", func(o metav1.CreateOptions) error { _, err := deps.Create(ctx, deployment("d", 3), o); return err })
	_, err := deps.Create(ctx, deployment("d", 3), metav1.CreateOptions{})
	expectStatus(t, err, 403, metav1.StatusReasonForbidden, `deployments.apps "d" is forbidden: ValidatingAdmissionPolicy 'msg-policy' with binding 'msg-binding' denied request: replicas 3 exceed 2 for kubernetes-admin`)
}

func warnAndAudit(t *testing.T, e *env) {
	namespace(t, e, "vap-warn", map[string]string{"vap-case": "warn"})
	createPolicy(t, e, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "warn-policy"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: rules("", "configmaps"),
			Validations: []admissionregistrationv1.Validation{{
				Expression: "has(object.metadata.labels) && 'owner' in object.metadata.labels",
				Message:    "configmaps need an owner label",
			}},
			AuditAnnotations: []admissionregistrationv1.AuditAnnotation{{Key: "keys", ValueExpression: "string(size(object.data))"}},
		},
	}, binding("warn-binding", "warn-policy", []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn, admissionregistrationv1.Audit}, "warn"))
	cms := e.warnCS.CoreV1().ConfigMaps("vap-warn")
	cm := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"a": "1", "b": "2"}}
	}
	want := "Validation failed for ValidatingAdmissionPolicy 'warn-policy' with binding 'warn-binding': configmaps need an owner label"
	deadline := time.Now().Add(10 * time.Second)
	for {
		e.warnings.Take()
		if _, err := cms.Create(ctx, cm("probe"), dryRun); err != nil {
			t.Fatal(err)
		}
		if w := e.warnings.Take(); len(w) == 1 && w[0] == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for the warning")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Warn and Audit admit the request.
	if _, err := cms.Create(ctx, cm("unowned"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if w := e.warnings.Take(); len(w) != 1 || w[0] != want {
		t.Fatalf("warnings %q, want %q", w, want)
	}
	ev := findEvent(t, e.auditLog, func(ev *audit.Event) bool {
		return ev.Stage == audit.StageResponseComplete && ev.Verb == "create" && ev.ObjectRef != nil &&
			ev.ObjectRef.Resource == "configmaps" && ev.ObjectRef.Name == "unowned"
	})
	var failures []map[string]any
	if err := json.Unmarshal([]byte(ev.Annotations["validation.policy.admission.k8s.io/validation_failure"]), &failures); err != nil {
		t.Fatalf("validation_failure annotation %q: %v", ev.Annotations["validation.policy.admission.k8s.io/validation_failure"], err)
	}
	wantFailure := `[{"binding":"warn-binding","expressionIndex":0,"message":"configmaps need an owner label","policy":"warn-policy","validationActions":["Warn","Audit"]}]`
	if got, _ := json.Marshal(failures); string(got) != wantFailure {
		t.Fatalf("validation_failure %s, want %s", got, wantFailure)
	}
	if got := ev.Annotations["warn-policy/keys"]; got != "2" {
		t.Fatalf("audit annotation warn-policy/keys = %q, want 2 (annotations %v)", got, ev.Annotations)
	}
	// An owned configmap draws neither.
	owned := cm("owned")
	owned.Labels = map[string]string{"owner": "me"}
	if _, err := cms.Create(ctx, owned, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if w := e.warnings.Take(); len(w) != 0 {
		t.Fatalf("warnings for an owned configmap: %q", w)
	}
}

func findEvent(t *testing.T, path string, match func(*audit.Event) bool) audit.Event {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if f, err := os.Open(path); err == nil {
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, 16<<20)
			for sc.Scan() {
				var ev audit.Event
				if json.Unmarshal(sc.Bytes(), &ev) == nil && match(&ev) {
					f.Close()
					return ev
				}
			}
			f.Close()
		}
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for the audit event")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func paramsFromConfigMap(t *testing.T, e *env) {
	namespace(t, e, "vap-params", map[string]string{"vap-case": "params"})
	namespace(t, e, "vap-params-missing", map[string]string{"vap-case": "params"})
	if _, err := e.cs.CoreV1().ConfigMaps("vap-params").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "limits"}, Data: map[string]string{"maxReplicas": "4"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "params-policy"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			ParamKind:        &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
			MatchConstraints: rules("apps", "deployments"),
			Validations: []admissionregistrationv1.Validation{{
				Expression:        "object.spec.replicas <= int(params.data.maxReplicas)",
				MessageExpression: "'at most ' + params.data.maxReplicas + ' replicas'",
			}},
		},
	}
	b := binding("params-binding", "params-policy", deny, "params")
	b.Spec.ParamRef = &admissionregistrationv1.ParamRef{Name: "limits", ParameterNotFoundAction: ptr.To(admissionregistrationv1.DenyAction)}
	createPolicy(t, e, p, b)
	deps := e.cs.AppsV1().Deployments("vap-params")
	waitRefused(t, "5 replicas", func(o metav1.CreateOptions) error { _, err := deps.Create(ctx, deployment("d", 5), o); return err })
	_, err := deps.Create(ctx, deployment("d", 5), metav1.CreateOptions{})
	expectStatus(t, err, 422, metav1.StatusReasonInvalid, `deployments.apps "d" is forbidden: ValidatingAdmissionPolicy 'params-policy' with binding 'params-binding' denied request: at most 4 replicas`)
	if _, err := deps.Create(ctx, deployment("d", 4), metav1.CreateOptions{}); err != nil {
		t.Fatalf("4 replicas: %v", err)
	}
	// The param is read per request: raising it admits 5.
	cm, err := e.cs.CoreV1().ConfigMaps("vap-params").Get(ctx, "limits", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["maxReplicas"] = "6"
	if _, err := e.cs.CoreV1().ConfigMaps("vap-params").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := deps.Create(ctx, deployment("five", 5), dryRun); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for the raised param")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// No param in the namespace: parameterNotFoundAction Deny refuses.
	_, err = e.cs.AppsV1().Deployments("vap-params-missing").Create(ctx, deployment("d", 1), metav1.CreateOptions{})
	expectStatus(t, err, 422, metav1.StatusReasonInvalid, "deployments.apps \"d\" is forbidden: ValidatingAdmissionPolicy 'params-policy' with binding 'params-binding' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction")
}

func namespaceObjectAndVariables(t *testing.T, e *env) {
	namespace(t, e, "vap-frozen", map[string]string{"vap-case": "ns", "tier": "frozen"})
	namespace(t, e, "vap-warm", map[string]string{"vap-case": "ns", "tier": "warm"})
	createPolicy(t, e, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "ns-policy"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: rules("", "secrets"),
			Variables: []admissionregistrationv1.Variable{
				{Name: "tier", Expression: "namespaceObject.metadata.labels['tier']"},
				{Name: "frozen", Expression: "variables.tier == 'frozen'"},
			},
			Validations: []admissionregistrationv1.Validation{{
				Expression:        "!variables.frozen",
				MessageExpression: "'namespace ' + namespaceObject.metadata.name + ' is ' + variables.tier",
			}},
		},
	}, binding("ns-binding", "ns-policy", deny, "ns"))
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, StringData: map[string]string{"k": "v"}}
	frozen := e.cs.CoreV1().Secrets("vap-frozen")
	waitRefused(t, "a secret in a frozen namespace", func(o metav1.CreateOptions) error { _, err := frozen.Create(ctx, secret, o); return err })
	_, err := frozen.Create(ctx, secret, metav1.CreateOptions{})
	expectStatus(t, err, 422, metav1.StatusReasonInvalid, `secrets "s" is forbidden: ValidatingAdmissionPolicy 'ns-policy' with binding 'ns-binding' denied request: namespace vap-frozen is frozen`)
	if _, err := e.cs.CoreV1().Secrets("vap-warm").Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("warm namespace: %v", err)
	}
}

func failurePolicy(t *testing.T, e *env) {
	namespace(t, e, "vap-fail", map[string]string{"vap-case": "fail"})
	for _, fp := range []admissionregistrationv1.FailurePolicyType{admissionregistrationv1.Fail, admissionregistrationv1.Ignore} {
		name := "runtime-error-" + strings.ToLower(string(fp))
		createPolicy(t, e, &admissionregistrationv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				FailurePolicy:    ptr.To(fp),
				MatchConstraints: rules("", "serviceaccounts"),
				// A serviceaccount without this annotation makes the
				// expression fail at runtime: no such key.
				Validations: []admissionregistrationv1.Validation{{Expression: "object.metadata.annotations['team'] == 'x'"}},
			},
		}, binding(name, name, deny, "fail"))
	}
	sas := e.cs.CoreV1().ServiceAccounts("vap-fail")
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa", Annotations: map[string]string{"other": "y"}}}
	waitRefused(t, "a service account", func(o metav1.CreateOptions) error { _, err := sas.Create(ctx, sa, o); return err })
	_, err := sas.Create(ctx, sa, metav1.CreateOptions{})
	expectStatus(t, err, 422, metav1.StatusReasonInvalid, `serviceaccounts "sa" is forbidden: ValidatingAdmissionPolicy 'runtime-error-fail' with binding 'runtime-error-fail' denied request: expression 'object.metadata.annotations['team'] == 'x'' resulted in error: no such key: team`)
	// With only the Ignore policy left, the error admits.
	if err := e.cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(ctx, "runtime-error-fail", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := sas.Create(ctx, sa, metav1.CreateOptions{})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Ignore policy still refuses: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func compileError(t *testing.T, e *env) {
	_, err := e.cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "broken"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: rules("apps", "deployments"),
			Validations: []admissionregistrationv1.Validation{
				{Expression: "object.spec.replicas <"},
				{Expression: "true", MessageExpression: "1"},
				{Expression: "params.x == 1"},
			},
		},
	}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("got %v, want 422 Invalid", err)
	}
	se := err.(*apierrors.StatusError).ErrStatus
	want := []string{
		"spec.validations[0].expression: Invalid value: \"object.spec.replicas <\": compilation failed: ERROR: <input>:1:23: Syntax error: mismatched input '<EOF>'",
		"spec.validations[1].messageExpression: Invalid value: \"1\": must evaluate to string but got int",
		"spec.validations[2].expression: Invalid value: \"params.x == 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params'",
	}
	for _, w := range want {
		if !strings.Contains(se.Message, w) {
			t.Errorf("message %q\nlacks %q", se.Message, w)
		}
	}
	if se.Code != 422 || !strings.HasPrefix(se.Message, `ValidatingAdmissionPolicy.admissionregistration.k8s.io "broken" is invalid: `) {
		t.Errorf("got %d %q", se.Code, se.Message)
	}
}

func typeErrorInStatus(t *testing.T, e *env) {
	createPolicy(t, e, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "typed"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: rules("apps", "deployments"),
			Validations: []admissionregistrationv1.Validation{
				{Expression: "object.spec.replicas > 1"},
				{Expression: "object.spec.replicas == 'many'", MessageExpression: "string(object.spec.replicaz)"},
			},
		},
	}, nil)
	var got *admissionregistrationv1.ValidatingAdmissionPolicy
	deadline := time.Now().Add(10 * time.Second)
	for {
		p, err := e.cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, "typed", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Status.ObservedGeneration == p.Generation {
			got = p
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never observed generation %d: %+v", p.Generation, p.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got.Status.TypeChecking == nil || len(got.Status.TypeChecking.ExpressionWarnings) != 2 {
		t.Fatalf("typeChecking %+v, want two warnings", got.Status.TypeChecking)
	}
	w := got.Status.TypeChecking.ExpressionWarnings
	for _, x := range w {
		t.Logf("%s: %q", x.FieldRef, x.Warning)
	}
	if w[0].FieldRef != "spec.validations[1].expression" ||
		!strings.HasPrefix(w[0].Warning, "apps/v1, Kind=Deployment: compilation failed: ERROR: <input>:1:22: found no matching overload for '_==_' applied to '(int, string)'") {
		t.Errorf("warning 0: %+v", w[0])
	}
	if w[1].FieldRef != "spec.validations[1].messageExpression" ||
		!strings.Contains(w[1].Warning, "undefined field 'replicaz'") {
		t.Errorf("warning 1: %+v", w[1])
	}
	// A new generation is checked again: fixed, the warnings go.
	got.Spec.Validations = got.Spec.Validations[:1]
	if _, err := e.cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		p, err := e.cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, "typed", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Generation == 2 && p.Status.ObservedGeneration == 2 {
			if p.Status.TypeChecking != nil && len(p.Status.TypeChecking.ExpressionWarnings) != 0 {
				t.Fatalf("typeChecking after the fix: %+v", p.Status.TypeChecking)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("generation 2 never observed: %d %+v", p.Generation, p.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func inlinePolicy(t *testing.T, e *env) {
	_, err := e.cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "forbidden-one"}}, metav1.CreateOptions{})
	expectStatus(t, err, 403, metav1.StatusReasonForbidden, `configmaps "forbidden-one" is forbidden: ValidatingAdmissionPolicy 'inline-no-forbidden' with binding 'inline-no-forbidden-binding' denied request: inline says no`)
	if _, err := e.cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "allowed-one"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func deletedPolicy(t *testing.T, e *env) {
	namespace(t, e, "vap-delete", map[string]string{"vap-case": "delete"})
	createPolicy(t, e, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "no-pvc"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: rules("", "limitranges"),
			Validations:      []admissionregistrationv1.Validation{{Expression: "false", Message: "no limit ranges"}},
		},
	}, binding("no-pvc", "no-pvc", deny, "delete"))
	lrs := e.cs.CoreV1().LimitRanges("vap-delete")
	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "lr"}}
	waitRefused(t, "a limit range", func(o metav1.CreateOptions) error { _, err := lrs.Create(ctx, lr, o); return err })
	if err := e.cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(ctx, "no-pvc", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAdmitted(t, "still refused after the policy was deleted", func() error {
		_, err := lrs.Create(ctx, lr, metav1.CreateOptions{})
		return err
	})
}

// authorizerChecks asks RBAC from CEL: the requesting admin may create
// the request's resource; a service account without roles may not list
// secrets.
func authorizerChecks(t *testing.T, e *env) {
	namespace(t, e, "vap-authz", map[string]string{"vap-case": "authz"})
	createPolicy(t, e, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "authz-policy"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: rules("", "resourcequotas", admissionregistrationv1.Create),
			Validations: []admissionregistrationv1.Validation{
				{Expression: "authorizer.requestResource.check('create').allowed()", Message: "requester may not create"},
				{Expression: "authorizer.serviceAccount(request.namespace, object.metadata.name).group('').resource('secrets').namespace(request.namespace).check('list').allowed()",
					MessageExpression: "'service account ' + object.metadata.name + ' may not list secrets'"},
			},
		},
	}, binding("authz-binding", "authz-policy", deny, "authz"))
	pts := e.cs.CoreV1().ResourceQuotas("vap-authz")
	pt := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}
	waitRefused(t, "a quota", func(o metav1.CreateOptions) error { _, err := pts.Create(ctx, pt, o); return err })
	_, err := pts.Create(ctx, pt, metav1.CreateOptions{})
	expectStatus(t, err, 422, metav1.StatusReasonInvalid, `resourcequotas "robot" is forbidden: ValidatingAdmissionPolicy 'authz-policy' with binding 'authz-binding' denied request: service account robot may not list secrets`)
}

// storedDefaults creates the policy and binding manifests of
// internal/api/defaults' golden files through the server: what is stored
// is what kube-apiserver stores.
func storedDefaults(t *testing.T, e *env) {
	c := e.ts.HTTPClient(t)
	for _, name := range []string{"validatingadmissionpolicy", "validatingadmissionpolicybinding"} {
		t.Run(name, func(t *testing.T) {
			var in, golden, stored map[string]any
			for path, out := range map[string]*map[string]any{
				"../../api/defaults/testdata/" + name + ".input.yaml":  &in,
				"../../api/defaults/testdata/" + name + ".golden.yaml": &golden,
			} {
				raw, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := yaml.Unmarshal(raw, out); err != nil {
					t.Fatal(err)
				}
			}
			url := e.ts.URL() + "/apis/admissionregistration.k8s.io/v1/" + strings.TrimSuffix(name, "y") + "ies"
			if name == "validatingadmissionpolicybinding" {
				url = e.ts.URL() + "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings"
			}
			body, _ := json.Marshal(in)
			resp, err := c.Post(url, "application/json", strings.NewReader(string(body)))
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("create: %d %s", resp.StatusCode, raw)
			}
			if err := json.Unmarshal(raw, &stored); err != nil {
				t.Fatal(err)
			}
			for _, o := range []map[string]any{golden, stored} {
				delete(o, "status")
				m := o["metadata"].(map[string]any)
				for _, k := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"} {
					delete(m, k)
				}
			}
			if !reflect.DeepEqual(golden, stored) {
				t.Errorf("stored object differs from kube's:\nkube  %v\nkpipe %v", golden, stored)
			}
			req, _ := http.NewRequest(http.MethodDelete, url+"/"+in["metadata"].(map[string]any)["name"].(string), nil)
			if resp, err := c.Do(req); err == nil {
				resp.Body.Close()
			}
		})
	}
}

// matchingAndParamSelector covers matchConditions, excludeResourceRules,
// objectSelector, oldObject on update, DELETE with a null object, and
// params chosen by a label selector (each one evaluated).
func matchingAndParamSelector(t *testing.T, e *env) {
	namespace(t, e, "vap-match", map[string]string{"vap-case": "match"})
	cms := e.cs.CoreV1().ConfigMaps("vap-match")
	for _, l := range []struct{ name, value string }{{"limit-a", "x"}, {"limit-b", "y"}} {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: l.name, Labels: map[string]string{"role": "forbidden-value"}},
			Data: map[string]string{"value": l.value}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mr := rules("", "*", admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete)
	mr.ExcludeResourceRules = []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
	}}}
	mr.ObjectSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "skip", Operator: metav1.LabelSelectorOpDoesNotExist}}}
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "match-policy"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			ParamKind:        &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
			MatchConstraints: mr,
			MatchConditions: []admissionregistrationv1.MatchCondition{
				{Name: "not-system", Expression: "!request.userInfo.username.startsWith('system:')"},
				{Name: "secrets-only", Expression: "request.resource.resource == 'secrets'"},
			},
			Validations: []admissionregistrationv1.Validation{
				{Expression: "request.operation == 'DELETE' ? object == null && oldObject.metadata.labels['tier'] != 'protected' : true", Message: "protected"},
				{Expression: "request.operation != 'UPDATE' || oldObject.metadata.labels['tier'] == object.metadata.labels['tier']", Message: "tier is immutable"},
				{Expression: "object == null || !has(object.metadata.labels) || !('value' in object.metadata.labels) || object.metadata.labels['value'] != params.data.value",
					MessageExpression: "'value ' + params.data.value + ' is taken by ' + params.metadata.name"},
			},
		},
	}
	b := binding("match-binding", "match-policy", deny, "match")
	b.Spec.ParamRef = &admissionregistrationv1.ParamRef{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "forbidden-value"}},
		ParameterNotFoundAction: ptr.To(admissionregistrationv1.AllowAction)}
	createPolicy(t, e, p, b)
	secrets := e.cs.CoreV1().Secrets("vap-match")
	secret := func(name, value, tier string, skip bool) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"value": value, "tier": tier}}}
		if skip {
			s.Labels["skip"] = "1"
		}
		return s
	}
	waitRefused(t, "a secret with a taken value", func(o metav1.CreateOptions) error {
		_, err := secrets.Create(ctx, secret("s1", "y", "a", false), o)
		return err
	})
	// Each selected param is evaluated: y is taken by limit-b.
	_, err := secrets.Create(ctx, secret("s1", "y", "a", false), metav1.CreateOptions{})
	expectStatus(t, err, 422, metav1.StatusReasonInvalid, `secrets "s1" is forbidden: ValidatingAdmissionPolicy 'match-policy' with binding 'match-binding' denied request: value y is taken by limit-b`)
	// The objectSelector skips labelled objects.
	if _, err := secrets.Create(ctx, secret("skipped", "y", "a", true), dryRun); err != nil {
		t.Fatalf("object selector: %v", err)
	}
	// excludeResourceRules: configmaps are never checked.
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: map[string]string{"value": "x"}}}, dryRun); err != nil {
		t.Fatalf("excluded resource: %v", err)
	}
	// A match condition that is false skips the policy: serviceaccounts
	// are matched by the rules, not by the condition.
	if _, err := e.cs.CoreV1().ServiceAccounts("vap-match").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa", Labels: map[string]string{"value": "x"}}}, dryRun); err != nil {
		t.Fatalf("match condition: %v", err)
	}
	// kube's match condition metric times an evaluation that was not all
	// true.
	raw, err := e.cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const evalMetric = `apiserver_admission_match_condition_evaluation_seconds_count{kind="policy",name="match-policy",operation="CREATE",type="validate"}`
	if !strings.Contains(string(raw), evalMetric) {
		t.Errorf("/metrics lacks %s", evalMetric)
	}
	// oldObject on update.
	s, err := secrets.Create(ctx, secret("s2", "z", "a", false), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Labels["tier"] = "b"
	_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
	expectStatus(t, err, 422, metav1.StatusReasonInvalid, `secrets "s2" is forbidden: ValidatingAdmissionPolicy 'match-policy' with binding 'match-binding' denied request: tier is immutable`)
	// DELETE: object is null, oldObject the stored one.
	if err := secrets.Delete(ctx, "s2", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := secrets.Create(ctx, secret("s3", "z", "protected", false), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = secrets.Delete(ctx, "s3", metav1.DeleteOptions{})
	expectStatus(t, err, 422, metav1.StatusReasonInvalid, `secrets "s3" is forbidden: ValidatingAdmissionPolicy 'match-policy' with binding 'match-binding' denied request: protected`)
}

// paramsMisconfigured: a paramKind no resource serves fails the binding
// under failurePolicy Fail and is skipped under Ignore.
func paramsMisconfigured(t *testing.T, e *env) {
	namespace(t, e, "vap-badparams", map[string]string{"vap-case": "badparams"})
	for _, fp := range []admissionregistrationv1.FailurePolicyType{admissionregistrationv1.Fail, admissionregistrationv1.Ignore} {
		name := "bad-params-" + strings.ToLower(string(fp))
		b := binding(name, name, deny, "badparams")
		b.Spec.ParamRef = &admissionregistrationv1.ParamRef{Name: "x", ParameterNotFoundAction: ptr.To(admissionregistrationv1.AllowAction)}
		createPolicy(t, e, &admissionregistrationv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				FailurePolicy:    ptr.To(fp),
				ParamKind:        &admissionregistrationv1.ParamKind{APIVersion: "example.com/v1", Kind: "Nope"},
				MatchConstraints: rules("", "configmaps", admissionregistrationv1.Create),
				Validations:      []admissionregistrationv1.Validation{{Expression: "true"}},
			},
		}, b)
	}
	cms := e.cs.CoreV1().ConfigMaps("vap-badparams")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
	waitRefused(t, "a configmap", func(o metav1.CreateOptions) error { _, err := cms.Create(ctx, cm, o); return err })
	_, err := cms.Create(ctx, cm, metav1.CreateOptions{})
	expectStatus(t, err, 422, metav1.StatusReasonInvalid, "configmaps \"c\" is forbidden: ValidatingAdmissionPolicy 'bad-params-fail' with binding 'bad-params-fail' denied request: failed to configure binding: paramKind kind `&ParamKind{APIVersion:example.com/v1,Kind:Nope,}` not known")
	if err := e.cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, "bad-params-fail", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAdmitted(t, "the Ignore binding still refuses", func() error {
		_, err := cms.Create(ctx, cm, metav1.CreateOptions{})
		return err
	})
}

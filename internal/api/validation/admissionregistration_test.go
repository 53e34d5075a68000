package validation

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// withConditions is webhookConfig whose webhooks (one per list) have the
// given match condition expressions, named c0, c1...
func withConditions(exprs ...[]string) *admissionregistrationv1.ValidatingWebhookConfiguration {
	c := webhookConfig()
	h := c.Webhooks[0]
	c.Webhooks = nil
	for i, list := range exprs {
		h := h
		h.Name = string(rune('a'+i)) + ".example.com"
		h.MatchConditions = nil
		for j, e := range list {
			h.MatchConditions = append(h.MatchConditions, admissionregistrationv1.MatchCondition{Name: "c" + string(rune('0'+j)), Expression: e})
		}
		c.Webhooks = append(c.Webhooks, h)
	}
	return c
}

func mutatingWithConditions(exprs ...string) *admissionregistrationv1.MutatingWebhookConfiguration {
	v := withConditions(exprs)
	h := v.Webhooks[0]
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "w"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: h.Name, ClientConfig: h.ClientConfig, Rules: h.Rules, FailurePolicy: h.FailurePolicy, MatchPolicy: h.MatchPolicy,
			NamespaceSelector: h.NamespaceSelector, ObjectSelector: h.ObjectSelector, SideEffects: h.SideEffects,
			TimeoutSeconds: h.TimeoutSeconds, AdmissionReviewVersions: h.AdmissionReviewVersions, MatchConditions: h.MatchConditions,
			ReinvocationPolicy: ptr(admissionregistrationv1.NeverReinvocationPolicy),
		}},
	}
}

const vwcInvalid = `ValidatingWebhookConfiguration.admissionregistration.k8s.io "w" is invalid: `

// TestWebhookMatchConditionsCompile: kube compiles webhook match
// conditions at create, in its webhook CEL environment (object,
// oldObject, request typed as kube's AdmissionRequest, namespaceObject,
// authorizer; no params), with kube's field paths and details.
func TestWebhookMatchConditionsCompile(t *testing.T) {
	vwc := admissionGK("ValidatingWebhookConfiguration")
	one := func(e string) runtime.Object { return withConditions([]string{e}) }
	check(t, []testCase{
		{name: "valid", gk: vwc, obj: one("object.metadata.name == 'x' && request.userInfo.username != '' && namespaceObject == null && " +
			"authorizer.group('').resource('pods').namespace('ns').check('create').allowed() && authorizer.requestResource.check('get').allowed()")},
		{name: "syntax error, trimmed as kube", gk: vwc, obj: one("  object.x in [1, 2, "),
			want: vwcInvalid + `webhooks[0].matchConditions[0].expression: Invalid value: "object.x in [1, 2,": compilation failed: ERROR: <input>:1:19: Syntax error: missing ']' at '<EOF>'
 | object.x in [1, 2,
 | ..................^`},
		{name: "not a bool", gk: vwc, obj: one("6"),
			want: vwcInvalid + `webhooks[0].matchConditions[0].expression: Invalid value: "6": must evaluate to bool but got int`},
		{name: "dyn is not a bool", gk: vwc, obj: one("object.spec.enabled"),
			want: vwcInvalid + `webhooks[0].matchConditions[0].expression: Invalid value: "object.spec.enabled": must evaluate to bool but got dyn`},
		{name: "undeclared function", gk: vwc, obj: one("test() == true"),
			want: vwcInvalid + `webhooks[0].matchConditions[0].expression: Invalid value: "test() == true": compilation failed: ERROR: <input>:1:5: undeclared reference to 'test' (in container '')
 | test() == true
 | ....^`},
		{name: "no params for webhooks", gk: vwc, obj: one("params.x == 1"),
			want: vwcInvalid + `webhooks[0].matchConditions[0].expression: Invalid value: "params.x == 1": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')
 | params.x == 1
 | ^`},
		{name: "request has no uid", gk: vwc, obj: one("request.uid == ''"),
			want: vwcInvalid + `webhooks[0].matchConditions[0].expression: Invalid value: "request.uid == ''": compilation failed: ERROR: <input>:1:8: undefined field 'uid'
 | request.uid == ''
 | .......^`},
		{name: "includes is for stored expressions only", gk: vwc, obj: one("[1].includes(1)"),
			prefix: vwcInvalid + `webhooks[0].matchConditions[0].expression: Invalid value: "[1].includes(1)": compilation failed: ERROR: <input>:1:13: undeclared reference to 'includes'`},
		{name: "expression error before the name's, second webhook", gk: vwc, obj: withConditions([]string{"true"}, []string{"true", "1 +"}),
			prefix: vwcInvalid + `webhooks[1].matchConditions[1].expression: Invalid value: "1 +": compilation failed: ERROR: <input>:1:4: Syntax error:`},
		{name: "mutating", gk: admissionGK("MutatingWebhookConfiguration"), obj: mutatingWithConditions("'x'"),
			want: `MutatingWebhookConfiguration.admissionregistration.k8s.io "w" is invalid: webhooks[0].matchConditions[0].expression: Invalid value: "'x'": must evaluate to bool but got string`},
	})
}

// TestWebhookMatchConditionsUpdate is kube's rule on update: no match
// condition is validated when every webhook keeps exactly its old ones;
// otherwise each expression the old object held (in any webhook)
// compiles in the StoredExpressions environment, new ones in
// NewExpressions.
func TestWebhookMatchConditionsUpdate(t *testing.T) {
	vwc := admissionGK("ValidatingWebhookConfiguration")
	upd := func(name string, obj, old *admissionregistrationv1.ValidatingWebhookConfiguration, want, prefix string) testCase {
		return testCase{name: name, op: update, gk: vwc, obj: withRV(obj), old: old, want: want, prefix: prefix}
	}
	changedOther := func(o *admissionregistrationv1.ValidatingWebhookConfiguration) *admissionregistrationv1.ValidatingWebhookConfiguration {
		o.Webhooks[0].TimeoutSeconds = ptr(int32(5))
		return o
	}
	dupNames := func() *admissionregistrationv1.ValidatingWebhookConfiguration {
		c := withConditions([]string{"true", "true"})
		c.Webhooks[0].MatchConditions[1].Name = "c0"
		return c
	}
	check(t, []testCase{
		upd("unchanged conditions are not validated", changedOther(withConditions([]string{"test() == true"})),
			withConditions([]string{"test() == true"}), "", ""),
		upd("unchanged conditions skip the name rules too", dupNames(), dupNames(), "", ""),
		upd("a changed condition compiles as new", withConditions([]string{"test() == true"}), withConditions([]string{"true"}),
			"", vwcInvalid+`webhooks[0].matchConditions[0].expression: Invalid value: "test() == true": compilation failed: ERROR: <input>:1:5: undeclared reference to 'test'`),
		upd("a stored expression compiles as stored when another changes", withConditions([]string{"[1].includes(1)", "true"}),
			withConditions([]string{"[1].includes(1)"}), "", ""),
		upd("stored in one webhook, used by another", withConditions([]string{"true"}, []string{"[1].includes(1)"}),
			withConditions([]string{"[1].includes(1)"}), "", ""),
		upd("a renamed condition keeps its stored expression", func() *admissionregistrationv1.ValidatingWebhookConfiguration {
			c := withConditions([]string{"[1].includes(1)"})
			c.Webhooks[0].MatchConditions[0].Name = "renamed"
			return c
		}(), withConditions([]string{"[1].includes(1)"}), "", ""),
		upd("a new webhook makes every condition validated", withConditions([]string{"test() == true"}, []string{"true"}),
			withConditions([]string{"test() == true"}),
			"", vwcInvalid+`webhooks[0].matchConditions[0].expression: Invalid value: "test() == true": compilation failed: ERROR: <input>:1:5: undeclared reference to 'test'`),
		upd("a stored expression that never compiled still fails", withConditions([]string{"test() == true", "true"}),
			withConditions([]string{"test() == true"}),
			"", vwcInvalid+`webhooks[0].matchConditions[0].expression: Invalid value: "test() == true": compilation failed: ERROR: <input>:1:5: undeclared reference to 'test'`),
		upd("stored expressions are looked up trimmed, as kube", withConditions([]string{" [1].includes(1) ", "true"}),
			withConditions([]string{" [1].includes(1) "}),
			"", vwcInvalid+`webhooks[0].matchConditions[0].expression: Invalid value: "[1].includes(1)": compilation failed: ERROR: <input>:1:13: undeclared reference to 'includes'`),
		upd("a new expression using a stored-only function", withConditions([]string{"true", "[2].includes(2)"}),
			withConditions([]string{"true"}),
			"", vwcInvalid+`webhooks[0].matchConditions[1].expression: Invalid value: "[2].includes(2)": compilation failed: ERROR: <input>:1:13: undeclared reference to 'includes'`),
	})
}

// Package webhook is what kube's MutatingAdmissionWebhook and
// ValidatingAdmissionWebhook share: the AdmissionReview (admission.k8s.io/v1)
// a webhook is sent, the HTTPS call verified against the configuration's
// caBundle, `url` and `service` references, the checks on the answer,
// failurePolicy, timeoutSeconds, sideEffects on dry-run, kube's error
// messages and kube's webhook metrics. The two plugins differ only in the
// dispatcher: mutating webhooks run in order and may patch the object,
// validating ones run in parallel.
package webhook

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Hook is one webhook of a configuration, mutating or validating, with
// kube's defaults filled where the stored object lacks them.
type Hook struct {
	// UID identifies the hook across a request's reinvocation:
	// <configuration>/<webhook>/<index>, as kube's accessor.
	UID           string
	Configuration string
	Name          string
	ClientConfig  admissionregistrationv1.WebhookClientConfig
	Rules         []admissionregistrationv1.RuleWithOperations
	FailurePolicy admissionregistrationv1.FailurePolicyType
	MatchPolicy   admissionregistrationv1.MatchPolicyType
	// NamespaceSelector and ObjectSelector default to "everything".
	NamespaceSelector *metav1.LabelSelector
	ObjectSelector    *metav1.LabelSelector
	// SideEffects is nil when the stored webhook has none (kube then
	// refuses dry-run requests as "Webhook SideEffects is nil").
	SideEffects             *admissionregistrationv1.SideEffectClass
	TimeoutSeconds          int32
	AdmissionReviewVersions []string
	// Reinvoke is reinvocationPolicy IfNeeded (mutating only).
	Reinvoke bool
	// Index is the hook's position among all the configurations' hooks,
	// the index of kube's mutation audit annotations.
	Index           int
	MatchConditions []admissionregistrationv1.MatchCondition
	// conditions are MatchConditions compiled (by the source, once per
	// configuration generation).
	conditions *conditions
}

// DefaultTimeout is kube's timeoutSeconds default.
const DefaultTimeout = 10

func newHook(config string, i int, name string, cc admissionregistrationv1.WebhookClientConfig, rules []admissionregistrationv1.RuleWithOperations,
	fp *admissionregistrationv1.FailurePolicyType, mp *admissionregistrationv1.MatchPolicyType, ns, obj *metav1.LabelSelector,
	se *admissionregistrationv1.SideEffectClass, timeout *int32, versions []string, mc []admissionregistrationv1.MatchCondition) Hook {
	h := Hook{
		UID:           fmt.Sprintf("%s/%s/%d", config, name, i),
		Configuration: config, Name: name, ClientConfig: cc, Rules: rules,
		FailurePolicy: admissionregistrationv1.Fail, MatchPolicy: admissionregistrationv1.Equivalent,
		NamespaceSelector: ns, ObjectSelector: obj, SideEffects: se, TimeoutSeconds: DefaultTimeout,
		AdmissionReviewVersions: versions, MatchConditions: mc,
	}
	if fp != nil {
		h.FailurePolicy = *fp
	}
	if mp != nil {
		h.MatchPolicy = *mp
	}
	if timeout != nil && *timeout > 0 {
		h.TimeoutSeconds = *timeout
	}
	if h.NamespaceSelector == nil {
		h.NamespaceSelector = &metav1.LabelSelector{}
	}
	if h.ObjectSelector == nil {
		h.ObjectSelector = &metav1.LabelSelector{}
	}
	return h
}

// MutatingHooks are a configuration's webhooks, in order.
func MutatingHooks(c *admissionregistrationv1.MutatingWebhookConfiguration) []Hook {
	out := make([]Hook, 0, len(c.Webhooks))
	for i, w := range c.Webhooks {
		h := newHook(c.Name, i, w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.MatchPolicy, w.NamespaceSelector, w.ObjectSelector,
			w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, w.MatchConditions)
		h.Reinvoke = w.ReinvocationPolicy != nil && *w.ReinvocationPolicy == admissionregistrationv1.IfNeededReinvocationPolicy
		out = append(out, h)
	}
	return out
}

// ValidatingHooks are a configuration's webhooks, in order.
func ValidatingHooks(c *admissionregistrationv1.ValidatingWebhookConfiguration) []Hook {
	out := make([]Hook, 0, len(c.Webhooks))
	for i, w := range c.Webhooks {
		out = append(out, newHook(c.Name, i, w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.MatchPolicy, w.NamespaceSelector, w.ObjectSelector,
			w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, w.MatchConditions))
	}
	return out
}

// Ignore reports failurePolicy Ignore: a failed call lets the request on.
func (h *Hook) Ignore() bool { return h.FailurePolicy == admissionregistrationv1.Ignore }

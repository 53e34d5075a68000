package defaults

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// roleBinding defaults a binding's roleRef to the RBAC group and each
// subject's apiGroup by kind: users and groups are RBAC subjects, service
// accounts are core ones.
func roleBinding(ref *rbacv1.RoleRef, subjects []rbacv1.Subject) {
	if ref.APIGroup == "" {
		ref.APIGroup = rbacv1.GroupName
	}
	for i := range subjects {
		// A ServiceAccount keeps "", the core group.
		if s := &subjects[i]; s.APIGroup == "" && (s.Kind == rbacv1.UserKind || s.Kind == rbacv1.GroupKind) {
			s.APIGroup = rbacv1.GroupName
		}
	}
}

// endpointSlice gives every port an explicit name ("") and protocol (TCP).
func endpointSlice(es *discoveryv1.EndpointSlice) {
	for i := range es.Ports {
		p := &es.Ports[i]
		if p.Name == nil {
			p.Name = ptr.To("")
		}
		if p.Protocol == nil {
			p.Protocol = ptr.To(corev1.ProtocolTCP)
		}
	}
}

func mutatingWebhookConfiguration(c *admissionregistrationv1.MutatingWebhookConfiguration) {
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		webhookCommon(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds)
		if w.ReinvocationPolicy == nil {
			w.ReinvocationPolicy = ptr.To(admissionregistrationv1.NeverReinvocationPolicy)
		}
		webhookClient(&w.ClientConfig)
		rulesWithOperations(w.Rules)
	}
}

func validatingWebhookConfiguration(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		webhookCommon(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds)
		webhookClient(&w.ClientConfig)
		rulesWithOperations(w.Rules)
	}
}

// webhookCommon holds the defaults mutating and validating webhooks share:
// fail closed, match equivalent versions, select everything, 10s timeout.
// sideEffects and admissionReviewVersions have no default in v1.
func webhookCommon(
	failure **admissionregistrationv1.FailurePolicyType,
	match **admissionregistrationv1.MatchPolicyType,
	nsSel, objSel **metav1.LabelSelector,
	timeout **int32,
) {
	if *failure == nil {
		*failure = ptr.To(admissionregistrationv1.Fail)
	}
	if *match == nil {
		*match = ptr.To(admissionregistrationv1.Equivalent)
	}
	if *nsSel == nil {
		*nsSel = &metav1.LabelSelector{}
	}
	if *objSel == nil {
		*objSel = &metav1.LabelSelector{}
	}
	if *timeout == nil {
		*timeout = ptr.To[int32](10)
	}
}

func webhookClient(c *admissionregistrationv1.WebhookClientConfig) {
	if c.Service != nil && c.Service.Port == nil {
		c.Service.Port = ptr.To[int32](443)
	}
}

// rulesWithOperations defaults each rule's scope to all scopes ("*").
func rulesWithOperations(rules []admissionregistrationv1.RuleWithOperations) {
	for i := range rules {
		if r := &rules[i].Rule; r.Scope == nil {
			r.Scope = ptr.To(admissionregistrationv1.AllScopes)
		}
	}
}

func validatingAdmissionPolicy(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
	if p.Spec.FailurePolicy == nil {
		p.Spec.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
	}
	matchResources(p.Spec.MatchConstraints)
}

func mutatingAdmissionPolicy(p *admissionregistrationv1.MutatingAdmissionPolicy) {
	if p.Spec.FailurePolicy == nil {
		p.Spec.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
	}
	matchResources(p.Spec.MatchConstraints)
}

// matchResources defaults a policy's or a binding's match criteria like a
// webhook's, and the scope of its resource rules.
func matchResources(m *admissionregistrationv1.MatchResources) {
	if m == nil {
		return
	}
	if m.MatchPolicy == nil {
		m.MatchPolicy = ptr.To(admissionregistrationv1.Equivalent)
	}
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &metav1.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &metav1.LabelSelector{}
	}
	for _, rules := range [][]admissionregistrationv1.NamedRuleWithOperations{m.ResourceRules, m.ExcludeResourceRules} {
		for i := range rules {
			if r := &rules[i].Rule; r.Scope == nil {
				r.Scope = ptr.To(admissionregistrationv1.AllScopes)
			}
		}
	}
}

func priorityClass(pc *schedulingv1.PriorityClass) {
	if pc.PreemptionPolicy == nil {
		pc.PreemptionPolicy = ptr.To(corev1.PreemptLowerPriority)
	}
}

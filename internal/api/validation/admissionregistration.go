package validation

import (
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/util/jsonpath"

	policycel "github.com/kpipe/kpipe/internal/admission/cel"
)

// CEL expressions (a policy's, and webhooks' and policies' match
// conditions) are compiled here, as kube's validation does: an expression
// being written in the NewExpressions environment, one the stored object
// already held in StoredExpressions, with the compiler admission uses.

func init() {
	register(false, validateValidatingWebhookConfiguration, validateValidatingWebhookConfigurationUpdate, nil)
	register(false, validateMutatingWebhookConfiguration, validateMutatingWebhookConfigurationUpdate, nil)
	register(false, validateValidatingAdmissionPolicy, validateValidatingAdmissionPolicyUpdate, validateValidatingAdmissionPolicyStatus)
	register(false, validateValidatingAdmissionPolicyBinding, validateValidatingAdmissionPolicyBindingUpdate, nil)
}

// staticConfigSuffix is reserved for manifest-based configurations
// (ManifestBasedAdmissionControlConfig, beta and on in v1.37).
const staticConfigSuffix = ".static.k8s.io"

func validateStaticSuffix(name string) field.ErrorList {
	if strings.HasSuffix(name, staticConfigSuffix) {
		return field.ErrorList{field.Invalid(metadataPath.Child("name"), name,
			fmt.Sprintf("names ending with %q are reserved for static manifest-based configurations and cannot be managed via the API", staticConfigSuffix))}
	}
	return nil
}

var (
	acceptedAdmissionReviewVersions = []string{"v1", "v1beta1"}
	supportedFailurePolicies        = sets.New(string(admissionregistrationv1.Ignore), string(admissionregistrationv1.Fail))
	supportedMatchPolicies          = sets.New(string(admissionregistrationv1.Exact), string(admissionregistrationv1.Equivalent))
	supportedSideEffects            = sets.New(string(admissionregistrationv1.SideEffectClassUnknown), string(admissionregistrationv1.SideEffectClassNone),
		string(admissionregistrationv1.SideEffectClassSome), string(admissionregistrationv1.SideEffectClassNoneOnDryRun))
	noSideEffects       = sets.New(string(admissionregistrationv1.SideEffectClassNone), string(admissionregistrationv1.SideEffectClassNoneOnDryRun))
	supportedOperations = sets.New(string(admissionregistrationv1.OperationAll), string(admissionregistrationv1.Create),
		string(admissionregistrationv1.Update), string(admissionregistrationv1.Delete), string(admissionregistrationv1.Connect))
	supportedReinvocation = sets.New(string(admissionregistrationv1.NeverReinvocationPolicy), string(admissionregistrationv1.IfNeededReinvocationPolicy))
	supportedScopes       = sets.New(string(admissionregistrationv1.ClusterScope), string(admissionregistrationv1.NamespacedScope), string(admissionregistrationv1.AllScopes))
	supportedReasons      = sets.New(string(metav1.StatusReasonForbidden), string(metav1.StatusReasonInvalid), string(metav1.StatusReasonRequestEntityTooLarge))
	validationActions     = sets.New(string(admissionregistrationv1.Deny), string(admissionregistrationv1.Warn), string(admissionregistrationv1.Audit))
)

// webhookOptions relax the rules on update for what was already stored.
type webhookOptions struct {
	ignoreMatchConditions                   bool
	preexistingMatchConditions              sets.Set[string]
	requireNoSideEffects                    bool
	requireRecognizedAdmissionReviewVersion bool
	requireUniqueWebhookNames               bool
	allowInvalidLabelValueInSelector        bool
}

var createWebhookOptions = webhookOptions{
	requireNoSideEffects:                    true,
	requireRecognizedAdmissionReviewVersion: true,
	requireUniqueWebhookNames:               true,
}

// webhook is the part of a validating or mutating webhook that is validated
// the same way.
type webhook struct {
	name                    string
	clientConfig            admissionregistrationv1.WebhookClientConfig
	rules                   []admissionregistrationv1.RuleWithOperations
	failurePolicy           *admissionregistrationv1.FailurePolicyType
	matchPolicy             *admissionregistrationv1.MatchPolicyType
	namespaceSelector       *metav1.LabelSelector
	objectSelector          *metav1.LabelSelector
	sideEffects             *admissionregistrationv1.SideEffectClass
	timeoutSeconds          *int32
	admissionReviewVersions []string
	matchConditions         []admissionregistrationv1.MatchCondition
	reinvocationPolicy      *admissionregistrationv1.ReinvocationPolicyType
	mutating                bool
}

func validatingHooks(hs []admissionregistrationv1.ValidatingWebhook) []webhook {
	out := make([]webhook, len(hs))
	for i, h := range hs {
		out[i] = webhook{h.Name, h.ClientConfig, h.Rules, h.FailurePolicy, h.MatchPolicy, h.NamespaceSelector, h.ObjectSelector,
			h.SideEffects, h.TimeoutSeconds, h.AdmissionReviewVersions, h.MatchConditions, nil, false}
	}
	return out
}

func mutatingHooks(hs []admissionregistrationv1.MutatingWebhook) []webhook {
	out := make([]webhook, len(hs))
	for i, h := range hs {
		out[i] = webhook{h.Name, h.ClientConfig, h.Rules, h.FailurePolicy, h.MatchPolicy, h.NamespaceSelector, h.ObjectSelector,
			h.SideEffects, h.TimeoutSeconds, h.AdmissionReviewVersions, h.MatchConditions, h.ReinvocationPolicy, true}
	}
	return out
}

func validateValidatingWebhookConfiguration(c *admissionregistrationv1.ValidatingWebhookConfiguration) field.ErrorList {
	errs := validateWebhookConfiguration(&c.ObjectMeta, validatingHooks(c.Webhooks), createWebhookOptions)
	return append(errs, validateStaticSuffix(c.Name)...)
}

func validateMutatingWebhookConfiguration(c *admissionregistrationv1.MutatingWebhookConfiguration) field.ErrorList {
	errs := validateWebhookConfiguration(&c.ObjectMeta, mutatingHooks(c.Webhooks), createWebhookOptions)
	return append(errs, validateStaticSuffix(c.Name)...)
}

func validateValidatingWebhookConfigurationUpdate(c, old *admissionregistrationv1.ValidatingWebhookConfiguration) field.ErrorList {
	return validateWebhookConfiguration(&c.ObjectMeta, validatingHooks(c.Webhooks), updateWebhookOptions(validatingHooks(c.Webhooks), validatingHooks(old.Webhooks)))
}

func validateMutatingWebhookConfigurationUpdate(c, old *admissionregistrationv1.MutatingWebhookConfiguration) field.ErrorList {
	return validateWebhookConfiguration(&c.ObjectMeta, mutatingHooks(c.Webhooks), updateWebhookOptions(mutatingHooks(c.Webhooks), mutatingHooks(old.Webhooks)))
}

// updateWebhookOptions keeps stored configurations updatable: a rule is only
// enforced if the old object already met it. As kube's: match conditions
// are not validated at all when every webhook keeps exactly its old ones
// (reflect.DeepEqual, same number of webhooks); otherwise each expression
// the old object held, in any of its webhooks, compiles in the
// StoredExpressions environment and only new ones in NewExpressions.
func updateWebhookOptions(hooks, old []webhook) webhookOptions {
	o := webhookOptions{
		ignoreMatchConditions:                   len(hooks) == len(old),
		preexistingMatchConditions:              sets.New[string](),
		requireNoSideEffects:                    true,
		requireRecognizedAdmissionReviewVersion: true,
		requireUniqueWebhookNames:               true,
	}
	names := sets.New[string]()
	for i, h := range old {
		if o.ignoreMatchConditions && !reflect.DeepEqual(hooks[i].matchConditions, h.matchConditions) {
			o.ignoreMatchConditions = false
		}
		for _, mc := range h.matchConditions {
			o.preexistingMatchConditions.Insert(mc.Expression)
		}
		if h.sideEffects == nil || !noSideEffects.Has(string(*h.sideEffects)) {
			o.requireNoSideEffects = false
		}
		recognized := false
		for _, v := range h.admissionReviewVersions {
			recognized = recognized || containsString(acceptedAdmissionReviewVersions, v)
		}
		if !recognized && len(h.admissionReviewVersions) > 0 {
			o.requireRecognizedAdmissionReviewVersion = false
		}
		if names.Has(h.name) {
			o.requireUniqueWebhookNames = false
		}
		names.Insert(h.name)
		for _, sel := range []*metav1.LabelSelector{h.namespaceSelector, h.objectSelector} {
			if sel != nil && len(metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, nil)) > 0 {
				o.allowInvalidLabelValueInSelector = true
			}
		}
	}
	return o
}

// validateWebhookConfiguration uses the generic metadata rules, as kube does
// for this group.
func validateWebhookConfiguration(m *metav1.ObjectMeta, hooks []webhook, o webhookOptions) field.ErrorList {
	errs := apimachineryvalidation.ValidateObjectMeta(m, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	names := sets.New[string]()
	for i, h := range hooks {
		p := field.NewPath("webhooks").Index(i)
		errs = append(errs, validateWebhook(&h, o, p)...)
		errs = append(errs, validateAdmissionReviewVersions(h.admissionReviewVersions, o.requireRecognizedAdmissionReviewVersion, p.Child("admissionReviewVersions"))...)
		if o.requireUniqueWebhookNames && h.name != "" {
			if names.Has(h.name) {
				errs = append(errs, field.Duplicate(p.Child("name"), h.name))
			} else {
				names.Insert(h.name)
			}
		}
	}
	return errs
}

func validateWebhook(h *webhook, o webhookOptions, p *field.Path) field.ErrorList {
	errs := validation.IsFullyQualifiedName(p.Child("name"), h.name)
	for i := range h.rules {
		errs = append(errs, validateRuleWithOperations(&h.rules[i], p.Child("rules").Index(i))...)
	}
	if h.failurePolicy != nil && !supportedFailurePolicies.Has(string(*h.failurePolicy)) {
		errs = append(errs, field.NotSupported(p.Child("failurePolicy"), *h.failurePolicy, sets.List(supportedFailurePolicies)))
	}
	if h.matchPolicy != nil && !supportedMatchPolicies.Has(string(*h.matchPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("matchPolicy"), *h.matchPolicy, sets.List(supportedMatchPolicies)))
	}
	allowed := supportedSideEffects
	if o.requireNoSideEffects {
		allowed = noSideEffects
	}
	if h.sideEffects == nil {
		errs = append(errs, field.Required(p.Child("sideEffects"), fmt.Sprintf("must specify one of %v", strings.Join(sets.List(allowed), ", "))))
	}
	if h.sideEffects != nil && !allowed.Has(string(*h.sideEffects)) {
		errs = append(errs, field.NotSupported(p.Child("sideEffects"), *h.sideEffects, sets.List(allowed)))
	}
	if h.timeoutSeconds != nil && (*h.timeoutSeconds > 30 || *h.timeoutSeconds < 1) {
		errs = append(errs, field.Invalid(p.Child("timeoutSeconds"), *h.timeoutSeconds, "the timeout value must be between 1 and 30 seconds"))
	}
	selOpts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: o.allowInvalidLabelValueInSelector}
	if h.namespaceSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(h.namespaceSelector, selOpts, p.Child("namespaceSelector"))...)
	}
	if h.objectSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(h.objectSelector, selOpts, p.Child("objectSelector"))...)
	}
	if h.mutating && h.reinvocationPolicy != nil && !supportedReinvocation.Has(string(*h.reinvocationPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("reinvocationPolicy"), *h.reinvocationPolicy, sets.List(supportedReinvocation)))
	}
	cc := h.clientConfig
	cp := p.Child("clientConfig")
	switch {
	case (cc.URL == nil) == (cc.Service == nil):
		errs = append(errs, field.Required(cp, "exactly one of url or service is required"))
	case cc.URL != nil:
		errs = append(errs, validateWebhookURL(cp.Child("url"), *cc.URL)...)
	default:
		port := int32(0)
		if cc.Service.Port != nil {
			port = *cc.Service.Port
		}
		errs = append(errs, validateWebhookService(cp.Child("service"), cc.Service.Namespace, cc.Service.Name, cc.Service.Path, port)...)
	}
	if !o.ignoreMatchConditions {
		errs = append(errs, validateMatchConditions(h.matchConditions, false, o.preexistingMatchConditions, p.Child("matchConditions"))...)
	}
	return errs
}

func validateWebhookURL(p *field.Path, raw string) field.ErrorList {
	const form = "; desired format: https://host[/path]"
	u, err := url.Parse(raw)
	if err != nil {
		return field.ErrorList{field.Required(p, "url must be a valid URL: "+err.Error()+form)}
	}
	var errs field.ErrorList
	if u.Scheme != "https" {
		errs = append(errs, field.Invalid(p, u.Scheme, "'https' is the only allowed URL scheme"+form))
	}
	if u.Host == "" {
		errs = append(errs, field.Invalid(p, u.Host, "host must be specified"+form))
	}
	if u.User != nil {
		errs = append(errs, field.Invalid(p, u.User.String(), "user information is not permitted in the URL"))
	}
	if u.Fragment != "" {
		errs = append(errs, field.Invalid(p, u.Fragment, "fragments are not permitted in the URL"))
	}
	if u.RawQuery != "" {
		errs = append(errs, field.Invalid(p, u.RawQuery, "query parameters are not permitted in the URL"))
	}
	return errs
}

func validateWebhookService(p *field.Path, namespace, name string, svcPath *string, port int32) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	if namespace == "" {
		errs = append(errs, field.Required(p.Child("namespace"), ""))
	}
	if msgs := validation.IsValidPortNum(int(port)); msgs != nil {
		errs = append(errs, field.Invalid(p.Child("port"), port, "port is not valid: "+strings.Join(msgs, ", ")))
	}
	if svcPath == nil || *svcPath == "/" || *svcPath == "" {
		return errs
	}
	pp := p.Child("path")
	if *svcPath == "//" {
		return append(errs, field.Invalid(pp, *svcPath, "segment[0] may not be empty"))
	}
	if !strings.HasPrefix(*svcPath, "/") {
		errs = append(errs, field.Invalid(pp, *svcPath, "must start with a '/'"))
	}
	check := strings.TrimSuffix((*svcPath)[1:], "/")
	for i, step := range strings.Split(check, "/") {
		if step == "" {
			errs = append(errs, field.Invalid(pp, *svcPath, fmt.Sprintf("segment[%d] may not be empty", i)))
			continue
		}
		for _, msg := range validation.IsDNS1123Subdomain(step) {
			errs = append(errs, field.Invalid(pp, *svcPath, fmt.Sprintf("segment[%d]: %v", i, msg)))
		}
	}
	return errs
}

func validateAdmissionReviewVersions(versions []string, requireRecognized bool, p *field.Path) field.ErrorList {
	if len(versions) < 1 {
		return field.ErrorList{field.Required(p, fmt.Sprintf("must specify one of %v", strings.Join(acceptedAdmissionReviewVersions, ", ")))}
	}
	var errs field.ErrorList
	seen := sets.New[string]()
	recognized := false
	for i, v := range versions {
		if seen.Has(v) {
			errs = append(errs, field.Invalid(p.Index(i), v, "duplicate version"))
			continue
		}
		seen.Insert(v)
		for _, msg := range validation.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(p.Index(i), v, msg))
		}
		recognized = recognized || containsString(acceptedAdmissionReviewVersions, v)
	}
	if requireRecognized && !recognized {
		errs = append(errs, field.Invalid(p, versions, fmt.Sprintf("must include at least one of %v", strings.Join(acceptedAdmissionReviewVersions, ", "))))
	}
	return errs
}

func hasWildcard(list []string) bool { return containsString(list, "*") }

func validateRuleWithOperations(r *admissionregistrationv1.RuleWithOperations, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	op := p.Child("operations")
	if len(r.Operations) == 0 {
		errs = append(errs, field.Required(op, ""))
	}
	if len(r.Operations) > 1 {
		for _, o := range r.Operations {
			if o == admissionregistrationv1.OperationAll {
				errs = append(errs, field.Invalid(op, r.Operations, "if '*' is present, must not specify other operations"))
				break
			}
		}
	}
	for i, o := range r.Operations {
		if !supportedOperations.Has(string(o)) {
			errs = append(errs, field.NotSupported(op.Index(i), o, sets.List(supportedOperations)))
		}
	}
	return append(errs, validateRule(&r.Rule, p)...)
}

func validateRule(r *admissionregistrationv1.Rule, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.APIGroups) == 0 {
		errs = append(errs, field.Required(p.Child("apiGroups"), ""))
	}
	if len(r.APIGroups) > 1 && hasWildcard(r.APIGroups) {
		errs = append(errs, field.Invalid(p.Child("apiGroups"), r.APIGroups, "if '*' is present, must not specify other API groups"))
	}
	if len(r.APIVersions) == 0 {
		errs = append(errs, field.Required(p.Child("apiVersions"), ""))
	}
	if len(r.APIVersions) > 1 && hasWildcard(r.APIVersions) {
		errs = append(errs, field.Invalid(p.Child("apiVersions"), r.APIVersions, "if '*' is present, must not specify other API versions"))
	}
	for i, v := range r.APIVersions {
		if v == "" {
			errs = append(errs, field.Required(p.Child("apiVersions").Index(i), ""))
		}
	}
	errs = append(errs, validateRuleResources(r.Resources, p.Child("resources"))...)
	if r.Scope != nil && !supportedScopes.Has(string(*r.Scope)) {
		errs = append(errs, field.NotSupported(p.Child("scope"), *r.Scope, sets.List(supportedScopes)))
	}
	return errs
}

// validateRuleResources checks resource/subresource patterns and their
// wildcards.
func validateRuleResources(resources []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(resources) == 0 {
		errs = append(errs, field.Required(p, ""))
	}
	wildSub := sets.New[string]() // x/*
	wildRes := sets.New[string]() // */x
	doubleWild, singleWild, plain := false, false, false
	for i, rs := range resources {
		if rs == "" {
			errs = append(errs, field.Required(p.Index(i), ""))
			continue
		}
		doubleWild = doubleWild || rs == "*/*"
		singleWild = singleWild || rs == "*"
		res, sub, hasSub := strings.Cut(rs, "/")
		if !hasSub {
			plain = rs != "*"
			continue
		}
		if wildSub.Has(res) {
			errs = append(errs, field.Invalid(p.Index(i), rs, fmt.Sprintf("if '%s/*' is present, must not specify %s", res, rs)))
		}
		if wildRes.Has(sub) {
			errs = append(errs, field.Invalid(p.Index(i), rs, fmt.Sprintf("if '*/%s' is present, must not specify %s", sub, rs)))
		}
		if sub == "*" {
			wildSub.Insert(res)
		}
		if res == "*" {
			wildRes.Insert(sub)
		}
	}
	if len(resources) > 1 && doubleWild {
		errs = append(errs, field.Invalid(p, resources, "if '*/*' is present, must not specify other resources"))
	}
	if singleWild && plain {
		errs = append(errs, field.Invalid(p, resources, "if '*' is present, must not specify other resources without subresources"))
	}
	return errs
}

// validateMatchConditions checks a webhook's or a policy's match
// conditions and compiles each expression, trimmed, as kube does (so its
// columns count from the first non-blank character): in the
// StoredExpressions environment if preexisting holds it (as trimmed),
// else in NewExpressions; `params` only with hasParams.
func validateMatchConditions(mcs []admissionregistrationv1.MatchCondition, hasParams bool, preexisting sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(mcs) > 64 {
		errs = append(errs, field.TooMany(p, len(mcs), 64))
	}
	names := sets.New[string]()
	for i, mc := range mcs {
		ip := p.Index(i)
		if expr := strings.TrimSpace(mc.Expression); expr == "" {
			errs = append(errs, field.Required(ip.Child("expression"), ""))
		} else {
			env := policycel.NewExpressions
			if preexisting.Has(expr) {
				env = policycel.StoredExpressions
			}
			if err := celFieldError(ip.Child("expression"), expr, policycel.CheckMatchCondition(expr, hasParams, env)); err != nil {
				errs = append(errs, err)
			}
		}
		if mc.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		} else {
			errs = append(errs, qualifiedName(mc.Name, ip.Child("name"))...)
		}
		if mc.Name != "" {
			if names.Has(mc.Name) {
				errs = append(errs, field.Duplicate(ip.Child("name"), mc.Name))
			} else {
				names.Insert(mc.Name)
			}
		}
	}
	return errs
}

// --- ValidatingAdmissionPolicy ---

const (
	maxAuditAnnotations                     = 20
	maxAuditAnnotationValueExpressionLength = 5 * 1024
)

func validateValidatingAdmissionPolicy(vap *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	errs := validatePolicy(vap, false, nil)
	return append(errs, validateStaticSuffix(vap.Name)...)
}

// validateValidatingAdmissionPolicyUpdate skips match conditions that did not
// change (nor the paramKind), and compiles the old object's match
// condition expressions in the StoredExpressions environment, so stored
// expressions keep working.
func validateValidatingAdmissionPolicyUpdate(vap, old *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	ignore := apiequality.Semantic.DeepEqual(vap.Spec.ParamKind, old.Spec.ParamKind) &&
		apiequality.Semantic.DeepEqual(vap.Spec.MatchConditions, old.Spec.MatchConditions)
	preexisting := sets.New[string]()
	for _, mc := range old.Spec.MatchConditions {
		preexisting.Insert(mc.Expression)
	}
	return validatePolicy(vap, ignore, preexisting)
}

func validatePolicy(vap *admissionregistrationv1.ValidatingAdmissionPolicy, ignoreMatchConditions bool, preexisting sets.Set[string]) field.ErrorList {
	errs := apimachineryvalidation.ValidateObjectMeta(&vap.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	s := &vap.Spec
	p := field.NewPath("spec")
	if s.FailurePolicy == nil {
		errs = append(errs, field.Required(p.Child("failurePolicy"), ""))
	} else if !supportedFailurePolicies.Has(string(*s.FailurePolicy)) {
		errs = append(errs, field.NotSupported(p.Child("failurePolicy"), *s.FailurePolicy, sets.List(supportedFailurePolicies)))
	}
	if s.ParamKind != nil {
		errs = append(errs, validateParamKind(*s.ParamKind, p.Child("paramKind"))...)
	}
	if s.MatchConstraints == nil {
		errs = append(errs, field.Required(p.Child("matchConstraints"), ""))
	} else {
		errs = append(errs, validateMatchResources(s.MatchConstraints, p.Child("matchConstraints"))...)
		// Type checking needs at least one resource rule.
		if len(s.MatchConstraints.ResourceRules) == 0 {
			errs = append(errs, field.Required(p.Child("matchConstraints", "resourceRules"), ""))
		}
	}
	if !ignoreMatchConditions {
		errs = append(errs, validateMatchConditions(s.MatchConditions, s.ParamKind != nil, preexisting, p.Child("matchConditions"))...)
	}
	for i, v := range s.Variables {
		vp := p.Child("variables").Index(i)
		if strings.TrimSpace(v.Name) == "" {
			errs = append(errs, field.Required(vp.Child("name"), "name is not specified"))
		} else if !isCELIdentifier(v.Name) {
			errs = append(errs, field.Invalid(vp.Child("name"), v.Name, "must be a valid CEL identifier"))
		}
		if strings.TrimSpace(v.Expression) == "" {
			errs = append(errs, field.Required(vp.Child("expression"), "expression is not specified"))
		}
	}
	if len(s.Validations) == 0 && len(s.AuditAnnotations) == 0 {
		const msg = "validations or auditAnnotations must contain at least one item"
		return append(errs, field.Required(p.Child("validations"), msg), field.Required(p.Child("auditAnnotations"), msg))
	}
	for i, v := range s.Validations {
		errs = append(errs, validateValidation(&v, p.Child("validations").Index(i))...)
	}
	if s.AuditAnnotations != nil {
		if len(s.AuditAnnotations) > maxAuditAnnotations {
			errs = append(errs, field.Invalid(p.Child("auditAnnotations"), internal{s.AuditAnnotations}, fmt.Sprintf("must not have more than %d auditAnnotations", maxAuditAnnotations)))
		}
		keys := sets.New[string]()
		for i, a := range s.AuditAnnotations {
			ap := p.Child("auditAnnotations").Index(i)
			if vap.Name != "" {
				errs = append(errs, qualifiedName(vap.Name+"/"+a.Key, ap.Child("key"))...)
			} else {
				errs = append(errs, field.Invalid(ap.Child("key"), a.Key, "requires metadata.name be non-empty"))
			}
			ve := strings.TrimSpace(a.ValueExpression)
			if ve == "" {
				errs = append(errs, field.Required(ap.Child("valueExpression"), "valueExpression is not specified"))
			} else if len(ve) > maxAuditAnnotationValueExpressionLength {
				errs = append(errs, field.Required(ap.Child("valueExpression"), fmt.Sprintf("must not exceed %d bytes in length", maxAuditAnnotationValueExpressionLength)))
			}
			if keys.Has(a.Key) {
				errs = append(errs, field.Duplicate(ap.Child("key"), a.Key))
			}
			keys.Insert(a.Key)
		}
	}
	return append(errs, validatePolicyExpressions(s, p)...)
}

// celFieldError is kube's field error for a compile error: Invalid with
// its detail, or an internal error; nil without one.
func celFieldError(path *field.Path, src string, err *policycel.Error) *field.Error {
	switch {
	case err == nil:
		return nil
	case err.Type == policycel.ErrorInvalid:
		return field.Invalid(path, src, err.Detail)
	default:
		return field.InternalError(path, err)
	}
}

// validatePolicyExpressions compiles the variables, validations and audit
// annotations of a policy, as kube's validation does, each against the
// variables before it (match conditions are compiled with the others in
// validateMatchConditions).
func validatePolicyExpressions(s *admissionregistrationv1.ValidatingAdmissionPolicySpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	c := policycel.Compile(s, policycel.Options{HasParams: s.ParamKind != nil})
	check := func(x *policycel.Expression, path *field.Path) {
		if x == nil || strings.TrimSpace(x.Source) == "" {
			return
		}
		if err := celFieldError(path, x.Source, x.Err); err != nil {
			errs = append(errs, err)
		}
	}
	for i := range c.Variables {
		check(&c.Variables[i].Expression, p.Child("variables").Index(i).Child("expression"))
	}
	for i := range c.Validations {
		check(&c.Validations[i], p.Child("validations").Index(i).Child("expression"))
		check(c.Messages[i], p.Child("validations").Index(i).Child("messageExpression"))
	}
	for i := range c.AuditAnnotations {
		check(&c.AuditAnnotations[i], p.Child("auditAnnotations").Index(i).Child("valueExpression"))
	}
	return errs
}

var newlines = regexp.MustCompile(`[\n\r]+`)

func validateValidation(v *admissionregistrationv1.Validation, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if strings.TrimSpace(v.Expression) == "" {
		errs = append(errs, field.Required(p.Child("expression"), "expression is not specified"))
	}
	if v.MessageExpression != "" && strings.TrimSpace(v.MessageExpression) == "" {
		errs = append(errs, field.Invalid(p.Child("messageExpression"), v.MessageExpression, "must be non-empty if specified"))
	}
	msg := strings.TrimSpace(v.Message)
	if v.Message != "" && msg == "" {
		errs = append(errs, field.Invalid(p.Child("message"), v.Message, "must be non-empty if specified"))
	} else if newlines.MatchString(msg) {
		errs = append(errs, field.Invalid(p.Child("message"), v.Message, "must not contain line breaks"))
	}
	if v.Reason != nil && !supportedReasons.Has(string(*v.Reason)) {
		errs = append(errs, field.NotSupported(p.Child("reason"), *v.Reason, sets.List(supportedReasons)))
	}
	return errs
}

var (
	celIdent    = regexp.MustCompile("^[_a-zA-Z][_a-zA-Z0-9]*$")
	celReserved = sets.New("true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function",
		"if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while")
)

func isCELIdentifier(s string) bool { return celIdent.MatchString(s) && !celReserved.Has(s) }

func validateParamKind(k admissionregistrationv1.ParamKind, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	ap := p.Child("apiVersion")
	switch group, version, err := parseGroupVersion(k.APIVersion); {
	case k.APIVersion == "":
		errs = append(errs, field.Required(ap, ""))
	case err != nil:
		errs = append(errs, field.Invalid(ap, k.APIVersion, err.Error()))
	default:
		if group != "" {
			if msgs := validation.IsDNS1123Subdomain(group); len(msgs) > 0 {
				errs = append(errs, field.Invalid(ap, group, strings.Join(msgs, ",")))
			}
		}
		if version == "" {
			errs = append(errs, field.Invalid(ap, k.APIVersion, "version must be specified"))
		} else if msgs := validation.IsDNS1035Label(version); len(msgs) > 0 {
			errs = append(errs, field.Invalid(ap, version, strings.Join(msgs, ",")))
		}
	}
	if k.Kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	} else if msgs := validation.IsDNS1035Label(strings.ToLower(k.Kind)); len(msgs) > 0 {
		errs = append(errs, field.Invalid(p.Child("kind"), k.Kind, "may have mixed case, but should otherwise match: "+strings.Join(msgs, ",")))
	}
	return errs
}

func parseGroupVersion(gv string) (string, string, error) {
	if gv == "" || gv == "/" {
		return "", "", nil
	}
	switch strings.Count(gv, "/") {
	case 0:
		return "", gv, nil
	case 1:
		g, v, _ := strings.Cut(gv, "/")
		return g, v, nil
	}
	return "", "", fmt.Errorf("unexpected GroupVersion string: %v", gv)
}

func validateMatchResources(m *admissionregistrationv1.MatchResources, p *field.Path) field.ErrorList {
	if m == nil {
		return nil
	}
	var errs field.ErrorList
	if m.MatchPolicy == nil {
		errs = append(errs, field.Required(p.Child("matchPolicy"), ""))
	} else if !supportedMatchPolicies.Has(string(*m.MatchPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("matchPolicy"), *m.MatchPolicy, sets.List(supportedMatchPolicies)))
	}
	// These selectors are strict: the type came after lax selectors were fixed.
	if m.NamespaceSelector == nil {
		errs = append(errs, field.Required(p.Child("namespaceSelector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(m.NamespaceSelector, metav1validation.LabelSelectorValidationOptions{}, p.Child("namespaceSelector"))...)
	}
	if m.ObjectSelector == nil {
		errs = append(errs, field.Required(p.Child("objectSelector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(m.ObjectSelector, metav1validation.LabelSelectorValidationOptions{}, p.Child("objectSelector"))...)
	}
	for i := range m.ResourceRules {
		errs = append(errs, validateNamedRule(&m.ResourceRules[i], p.Child("resourceRules").Index(i))...)
	}
	for i := range m.ExcludeResourceRules {
		errs = append(errs, validateNamedRule(&m.ExcludeResourceRules[i], p.Child("excludeResourceRules").Index(i))...)
	}
	return errs
}

func validateNamedRule(r *admissionregistrationv1.NamedRuleWithOperations, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, n := range r.ResourceNames {
		np := p.Child("resourceNames").Index(i)
		for _, msg := range content.IsPathSegmentName(n) {
			errs = append(errs, field.Invalid(np, n, msg))
		}
		if names.Has(n) {
			errs = append(errs, field.Duplicate(np, n))
		} else {
			names.Insert(n)
		}
	}
	return append(errs, validateRuleWithOperations(&r.RuleWithOperations, p)...)
}

// validateValidatingAdmissionPolicyStatus is the /status rule: type-checking
// warnings and conditions.
func validateValidatingAdmissionPolicyStatus(vap, _ *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("status")
	if tc := vap.Status.TypeChecking; tc != nil {
		for i, w := range tc.ExpressionWarnings {
			wp := p.Child("typeChecking", "expressionWarnings").Index(i)
			if w.Warning == "" {
				errs = append(errs, field.Required(wp.Child("warning"), ""))
			}
			errs = append(errs, validateFieldRef(w.FieldRef, wp.Child("fieldRef"))...)
		}
	}
	return append(errs, metav1validation.ValidateConditions(vap.Status.Conditions, p.Child("conditions"))...)
}

func validateFieldRef(ref string, p *field.Path) field.ErrorList {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	if err := jsonpath.New("spec").Parse(fmt.Sprintf("{%s}", ref)); err != nil {
		return field.ErrorList{field.Invalid(p, ref, fmt.Sprintf("invalid JSONPath: %v", err))}
	}
	return nil
}

// --- ValidatingAdmissionPolicyBinding ---

func validateValidatingAdmissionPolicyBinding(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	errs := validateBindingSpec(b, nil)
	return append(errs, validateStaticSuffix(b.Name)...)
}

func validateValidatingAdmissionPolicyBindingUpdate(b, old *admissionregistrationv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	return validateBindingSpec(b, old)
}

// validateBindingSpec: policyName and validationActions are required by
// declarative rules at beta; see validateRules in rbac.go.
func validateBindingSpec(b, old *admissionregistrationv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	errs := apimachineryvalidation.ValidateObjectMeta(&b.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	s := &b.Spec
	p := field.NewPath("spec")
	if s.PolicyName == "" {
		e := field.Required(p.Child("policyName"), "")
		if old == nil || old.Spec.PolicyName != s.PolicyName {
			e = e.MarkBeta()
		}
		errs = append(errs, e)
	} else {
		errs = append(errs, nameErrs(apimachineryvalidation.NameIsDNSSubdomain, s.PolicyName, p.Child("policyName"))...)
	}
	errs = append(errs, validateParamRef(s.ParamRef, p.Child("paramRef"))...)
	errs = append(errs, validateMatchResources(s.MatchResources, p.Child("matchResources"))...)

	ap := p.Child("validationActions")
	seen := sets.New[string]()
	for i, a := range s.ValidationActions {
		if !validationActions.Has(string(a)) {
			errs = append(errs, field.NotSupported(ap.Index(i), a, sets.List(validationActions)))
		}
		if seen.Has(string(a)) {
			errs = append(errs, field.Duplicate(ap.Index(i), a))
		}
		seen.Insert(string(a))
	}
	if seen.HasAll(string(admissionregistrationv1.Deny), string(admissionregistrationv1.Warn)) {
		errs = append(errs, field.Invalid(ap, s.ValidationActions, "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"))
	}
	if len(seen) == 0 {
		if old == nil || !apiequality.Semantic.DeepEqual(s.ValidationActions, old.Spec.ValidationActions) {
			errs = append(errs, field.Required(ap, "").MarkBeta())
		} else {
			errs = append(errs, field.Required(ap, "at least one validation action is required"))
		}
	}
	return errs
}

func validateParamRef(r *admissionregistrationv1.ParamRef, p *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if r.Name != "" {
		for _, msg := range content.IsPathSegmentName(r.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), r.Name, msg))
		}
		if r.Selector != nil {
			errs = append(errs, field.Forbidden(p.Child("name"), `name and selector are mutually exclusive`))
		}
	}
	if r.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(r.Selector, metav1validation.LabelSelectorValidationOptions{}, p.Child("selector"))...)
		if r.Name != "" {
			errs = append(errs, field.Forbidden(p.Child("selector"), `name and selector are mutually exclusive`))
		}
	}
	if r.Name == "" && r.Selector == nil {
		errs = append(errs, field.Required(p, `one of name or selector must be specified`))
	}
	pa := r.ParameterNotFoundAction
	switch {
	case pa == nil || *pa == "":
		errs = append(errs, field.Required(p.Child("parameterNotFoundAction"), ""))
	case *pa != admissionregistrationv1.DenyAction && *pa != admissionregistrationv1.AllowAction:
		errs = append(errs, field.NotSupported(p.Child("parameterNotFoundAction"), pa, []string{string(admissionregistrationv1.DenyAction), string(admissionregistrationv1.AllowAction)}))
	}
	return errs
}

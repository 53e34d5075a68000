package validation

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// The networking.k8s.io/v1 rules of kube v1.37 (pkg/apis/networking/
// validation), with its default feature gates: RelaxedServiceNameValidation
// is GA, so backend service names are DNS labels. The required checks of
// ipBlock.cidr and of an IngressClass's parameters.kind and name are
// declarative at beta: their errors come last.
func init() {
	register(true, validateIngressCreate, validateIngressUpdate, validateIngressStatusUpdate)
	register(false, validateIngressClass, validateIngressClassUpdate, nil)
	register(true,
		func(np *networkingv1.NetworkPolicy) field.ErrorList { return validateNetworkPolicy(np, nil) },
		validateNetworkPolicy, nil)
}

const (
	annotationIngressClass       = "kubernetes.io/ingress.class"
	maxLenIngressClassController = 250
)

var (
	supportedPathTypes = sets.New(
		string(networkingv1.PathTypeExact),
		string(networkingv1.PathTypePrefix),
		string(networkingv1.PathTypeImplementationSpecific),
	)
	invalidPathSequences = []string{"//", "/./", "/../", "%2f", "%2F"}
	invalidPathSuffixes  = []string{"/..", "/."}

	supportedParametersScopes = sets.New(
		networkingv1.IngressClassParametersReferenceScopeNamespace,
		networkingv1.IngressClassParametersReferenceScopeCluster,
	)
)

// ingressOptions relax the rules an existing Ingress may have passed
// under older releases.
type ingressOptions struct {
	allowInvalidSecretName       bool
	allowInvalidWildcardHostRule bool
}

func validateIngressCreate(ing *networkingv1.Ingress) field.ErrorList {
	errs := validateIngress(ing, ingressOptions{})
	if v, set := ing.Annotations[annotationIngressClass]; set && ing.Spec.IngressClassName != nil && v != *ing.Spec.IngressClassName {
		errs = append(errs, field.Invalid(field.NewPath("annotations").Child(annotationIngressClass), v, "must match `ingressClassName` when both are specified"))
	}
	return errs
}

func validateIngressUpdate(ing, old *networkingv1.Ingress) field.ErrorList {
	errs := objectMetaUpdate(&ing.ObjectMeta, &old.ObjectMeta, metadataPath)
	opts := ingressOptions{
		allowInvalidSecretName:       hasInvalidSecretName(old),
		allowInvalidWildcardHostRule: hasInvalidWildcardHostRule(old),
	}
	return append(errs, validateIngress(ing, opts)...)
}

func validateIngress(ing *networkingv1.Ingress, opts ingressOptions) field.ErrorList {
	errs := objectMeta(&ing.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	return append(errs, validateIngressSpec(&ing.Spec, field.NewPath("spec"), opts)...)
}

func validateIngressSpec(spec *networkingv1.IngressSpec, p *field.Path, opts ingressOptions) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Rules) == 0 && spec.DefaultBackend == nil {
		errs = append(errs, field.Invalid(p, spec.Rules, "either `defaultBackend` or `rules` must be specified"))
	}
	if spec.DefaultBackend != nil {
		errs = append(errs, validateIngressBackend(spec.DefaultBackend, p.Child("defaultBackend"))...)
	}
	if len(spec.Rules) > 0 {
		errs = append(errs, validateIngressRules(spec.Rules, p.Child("rules"), opts)...)
	}
	if len(spec.TLS) > 0 {
		errs = append(errs, validateIngressTLS(spec.TLS, p.Child("tls"), opts)...)
	}
	if spec.IngressClassName != nil {
		errs = append(errs, nameErrs(apimachineryvalidation.NameIsDNSSubdomain, *spec.IngressClassName, p.Child("ingressClassName"))...)
	}
	return errs
}

func validateIngressTLS(tls []networkingv1.IngressTLS, p *field.Path, opts ingressOptions) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tls {
		for j, host := range t.Hosts {
			hp := p.Index(i).Child("hosts").Index(j)
			check := validation.IsDNS1123Subdomain
			if strings.Contains(host, "*") {
				check = validation.IsWildcardDNS1123Subdomain
			}
			for _, msg := range check(host) {
				errs = append(errs, field.Invalid(hp, host, msg))
			}
		}
		if !opts.allowInvalidSecretName {
			for _, msg := range tlsSecretNameErrs(t.SecretName) {
				errs = append(errs, field.Invalid(p.Index(i).Child("secretName"), t.SecretName, msg))
			}
		}
	}
	return errs
}

func tlsSecretNameErrs(name string) []string {
	if name == "" {
		return nil
	}
	return apimachineryvalidation.NameIsDNSSubdomain(name, false)
}

func validateIngressRules(rules []networkingv1.IngressRule, p *field.Path, opts ingressOptions) field.ErrorList {
	var errs field.ErrorList
	for i, rule := range rules {
		wildcard := false
		if rule.Host != "" {
			hp := p.Index(i).Child("host")
			if netutils.ParseIPSloppy(rule.Host) != nil {
				errs = append(errs, field.Invalid(hp, rule.Host, "must be a DNS name, not an IP address"))
			}
			check := validation.IsDNS1123Subdomain
			if strings.Contains(rule.Host, "*") {
				check = validation.IsWildcardDNS1123Subdomain
				wildcard = true
			}
			for _, msg := range check(rule.Host) {
				errs = append(errs, field.Invalid(hp, rule.Host, msg))
			}
		}
		if !wildcard || !opts.allowInvalidWildcardHostRule {
			errs = append(errs, validateIngressRuleValue(&rule.IngressRuleValue, p.Index(i))...)
		}
	}
	return errs
}

func validateIngressRuleValue(v *networkingv1.IngressRuleValue, p *field.Path) field.ErrorList {
	if v.HTTP == nil {
		return nil
	}
	hp := p.Child("http")
	var errs field.ErrorList
	if len(v.HTTP.Paths) == 0 {
		errs = append(errs, field.Required(hp.Child("paths"), ""))
	}
	for i := range v.HTTP.Paths {
		errs = append(errs, validateHTTPIngressPath(&v.HTTP.Paths[i], hp.Child("paths").Index(i))...)
	}
	return errs
}

func validateHTTPIngressPath(path *networkingv1.HTTPIngressPath, p *field.Path) field.ErrorList {
	if path.PathType == nil {
		return field.ErrorList{field.Required(p.Child("pathType"), "pathType must be specified")}
	}
	var errs field.ErrorList
	pp := p.Child("path")
	switch *path.PathType {
	case networkingv1.PathTypeExact, networkingv1.PathTypePrefix:
		if !strings.HasPrefix(path.Path, "/") {
			errs = append(errs, field.Invalid(pp, path.Path, "must be an absolute path"))
		}
		if path.Path != "" {
			for _, seq := range invalidPathSequences {
				if strings.Contains(path.Path, seq) {
					errs = append(errs, field.Invalid(pp, path.Path, fmt.Sprintf("must not contain '%s'", seq)))
				}
			}
			for _, suffix := range invalidPathSuffixes {
				if strings.HasSuffix(path.Path, suffix) {
					errs = append(errs, field.Invalid(pp, path.Path, fmt.Sprintf("cannot end with '%s'", suffix)))
				}
			}
		}
	case networkingv1.PathTypeImplementationSpecific:
		if path.Path != "" && !strings.HasPrefix(path.Path, "/") {
			errs = append(errs, field.Invalid(pp, path.Path, "must be an absolute path"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("pathType"), *path.PathType, sets.List(supportedPathTypes)))
	}
	return append(errs, validateIngressBackend(&path.Backend, p.Child("backend"))...)
}

func validateIngressBackend(b *networkingv1.IngressBackend, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case b.Resource != nil && b.Service != nil:
		return field.ErrorList{field.Invalid(p, "", "cannot set both resource and service backends")}
	case b.Resource != nil:
		errs = append(errs, validateBackendResource(b.Resource, p.Child("resource"))...)
	case b.Service != nil:
		if b.Service.Name == "" {
			errs = append(errs, field.Required(p.Child("service", "name"), ""))
		} else {
			errs = append(errs, nameErrs(apimachineryvalidation.NameIsDNSLabel, b.Service.Name, p.Child("service", "name"))...)
		}
		hasName, hasNumber := b.Service.Port.Name != "", b.Service.Port.Number != 0
		switch {
		case hasName && hasNumber:
			errs = append(errs, field.Invalid(p, "", "cannot set both port name & port number"))
		case hasName:
			for _, msg := range validation.IsValidPortName(b.Service.Port.Name) {
				errs = append(errs, field.Invalid(p.Child("service", "port", "name"), b.Service.Port.Name, msg))
			}
		case hasNumber:
			for _, msg := range validation.IsValidPortNum(int(b.Service.Port.Number)) {
				errs = append(errs, field.Invalid(p.Child("service", "port", "number"), b.Service.Port.Number, msg))
			}
		default:
			errs = append(errs, field.Required(p, "port name or number is required"))
		}
	default:
		errs = append(errs, field.Invalid(p, "", "resource or service backend is required"))
	}
	return errs
}

// validateBackendResource is kube's validateIngressTypedLocalObjectReference.
func validateBackendResource(r *corev1.TypedLocalObjectReference, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if r.APIGroup != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*r.APIGroup) {
			errs = append(errs, field.Invalid(p.Child("apiGroup"), *r.APIGroup, msg))
		}
	}
	errs = append(errs, requiredPathSegment(r.Kind, p.Child("kind"), false)...)
	return append(errs, requiredPathSegment(r.Name, p.Child("name"), false)...)
}

// requiredPathSegment requires a value that fits a URL path segment; a
// declarative requirement's error is marked beta.
func requiredPathSegment(v string, p *field.Path, declarative bool) field.ErrorList {
	if v == "" {
		e := field.Required(p, "")
		if declarative {
			e = e.MarkBeta()
		}
		return field.ErrorList{e}
	}
	var errs field.ErrorList
	for _, msg := range content.IsPathSegmentName(v) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

func hasInvalidSecretName(old *networkingv1.Ingress) bool {
	for _, tls := range old.Spec.TLS {
		if len(tlsSecretNameErrs(tls.SecretName)) > 0 {
			return true
		}
	}
	return false
}

func hasInvalidWildcardHostRule(old *networkingv1.Ingress) bool {
	for i := range old.Spec.Rules {
		rule := &old.Spec.Rules[i]
		if strings.Contains(rule.Host, "*") && len(validateIngressRuleValue(&rule.IngressRuleValue, nil)) > 0 {
			return true
		}
	}
	return false
}

func validateIngressStatusUpdate(ing, old *networkingv1.Ingress) field.ErrorList {
	errs := objectMetaUpdate(&ing.ObjectMeta, &old.ObjectMeta, metadataPath)
	p := field.NewPath("status", "loadBalancer")
	var oldIPs []string
	for _, in := range old.Status.LoadBalancer.Ingress {
		if in.IP != "" {
			oldIPs = append(oldIPs, in.IP)
		}
	}
	for i, in := range ing.Status.LoadBalancer.Ingress {
		ip := p.Child("ingress").Index(i)
		if in.IP != "" {
			errs = append(errs, legacyIP(ip.Child("ip"), in.IP, oldIPs)...)
		}
		if in.Hostname != "" {
			for _, msg := range validation.IsDNS1123Subdomain(in.Hostname) {
				errs = append(errs, field.Invalid(ip.Child("hostname"), in.Hostname, msg))
			}
			if netutils.ParseIPSloppy(in.Hostname) != nil {
				errs = append(errs, field.Invalid(ip.Child("hostname"), in.Hostname, "must be a DNS name, not an IP address"))
			}
		}
	}
	return errs
}

func validateIngressClass(ic *networkingv1.IngressClass) field.ErrorList {
	errs := objectMeta(&ic.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	sp := field.NewPath("spec")
	if len(ic.Spec.Controller) > maxLenIngressClassController {
		errs = append(errs, field.TooLong(sp.Child("controller"), "", maxLenIngressClassController))
	}
	errs = append(errs, validation.IsDomainPrefixedPath(sp.Child("controller"), ic.Spec.Controller)...)
	return append(errs, validateIngressClassParameters(ic.Spec.Parameters, sp.Child("parameters"))...)
}

func validateIngressClassUpdate(ic, old *networkingv1.IngressClass) field.ErrorList {
	errs := objectMetaUpdate(&ic.ObjectMeta, &old.ObjectMeta, metadataPath)
	errs = append(errs, apimachineryvalidation.ValidateImmutableField(ic.Spec.Controller, old.Spec.Controller, field.NewPath("spec", "controller"))...)
	return append(errs, validateIngressClass(ic)...)
}

func validateIngressClassParameters(params *networkingv1.IngressClassParametersReference, p *field.Path) field.ErrorList {
	if params == nil {
		return nil
	}
	var errs field.ErrorList
	if params.APIGroup != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*params.APIGroup) {
			errs = append(errs, field.Invalid(p.Child("apiGroup"), *params.APIGroup, msg))
		}
	}
	errs = append(errs, requiredPathSegment(params.Kind, p.Child("kind"), true)...)
	errs = append(errs, requiredPathSegment(params.Name, p.Child("name"), true)...)
	if params.Scope == nil {
		return append(errs, field.Required(p.Child("scope"), ""))
	}
	scope := *params.Scope
	if !supportedParametersScopes.Has(scope) {
		return append(errs, field.NotSupported(p.Child("scope"), scope, sets.List(supportedParametersScopes)))
	}
	if scope == networkingv1.IngressClassParametersReferenceScopeNamespace {
		if params.Namespace == nil {
			errs = append(errs, field.Required(p.Child("namespace"), "`parameters.scope` is set to 'Namespace'"))
		} else {
			errs = append(errs, nameErrs(apimachineryvalidation.ValidateNamespaceName, *params.Namespace, p.Child("namespace"))...)
		}
	}
	if scope == networkingv1.IngressClassParametersReferenceScopeCluster && params.Namespace != nil {
		errs = append(errs, field.Forbidden(p.Child("namespace"), "`parameters.scope` is set to 'Cluster'"))
	}
	return errs
}

// networkPolicyOptions relax what an existing policy may keep.
type networkPolicyOptions struct {
	allowInvalidLabelValue bool
	// existingCIDRs passed an older, looser CIDR rule.
	existingCIDRs []string
}

// validateNetworkPolicy serves create (old nil) and update.
func validateNetworkPolicy(np, old *networkingv1.NetworkPolicy) field.ErrorList {
	var opts networkPolicyOptions
	var errs field.ErrorList
	if old == nil {
		errs = objectMeta(&np.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	} else {
		if len(metav1validation.ValidateLabelSelector(&old.Spec.PodSelector, metav1validation.LabelSelectorValidationOptions{}, nil)) > 0 {
			opts.allowInvalidLabelValue = true
		}
		for _, rule := range old.Spec.Ingress {
			opts.existingCIDRs = appendCIDRs(opts.existingCIDRs, rule.From)
		}
		for _, rule := range old.Spec.Egress {
			opts.existingCIDRs = appendCIDRs(opts.existingCIDRs, rule.To)
		}
		errs = objectMetaUpdate(&np.ObjectMeta, &old.ObjectMeta, metadataPath)
	}
	return append(errs, validateNetworkPolicySpec(&np.Spec, opts, field.NewPath("spec"))...)
}

func appendCIDRs(out []string, peers []networkingv1.NetworkPolicyPeer) []string {
	for _, peer := range peers {
		if peer.IPBlock != nil {
			out = append(out, peer.IPBlock.CIDR)
			out = append(out, peer.IPBlock.Except...)
		}
	}
	return out
}

func validateNetworkPolicySpec(spec *networkingv1.NetworkPolicySpec, opts networkPolicyOptions, p *field.Path) field.ErrorList {
	selOpts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: opts.allowInvalidLabelValue}
	errs := metav1validation.ValidateLabelSelector(&spec.PodSelector, selOpts, p.Child("podSelector"))
	for i, rule := range spec.Ingress {
		rp := p.Child("ingress").Index(i)
		for j := range rule.Ports {
			errs = append(errs, validateNetworkPolicyPort(&rule.Ports[j], rp.Child("ports").Index(j))...)
		}
		for j := range rule.From {
			errs = append(errs, validateNetworkPolicyPeer(&rule.From[j], opts, rp.Child("from").Index(j))...)
		}
	}
	for i, rule := range spec.Egress {
		rp := p.Child("egress").Index(i)
		for j := range rule.Ports {
			errs = append(errs, validateNetworkPolicyPort(&rule.Ports[j], rp.Child("ports").Index(j))...)
		}
		for j := range rule.To {
			errs = append(errs, validateNetworkPolicyPeer(&rule.To[j], opts, rp.Child("to").Index(j))...)
		}
	}
	allowed := []string{string(networkingv1.PolicyTypeIngress), string(networkingv1.PolicyTypeEgress)}
	if len(spec.PolicyTypes) > len(allowed) {
		return append(errs, field.Invalid(p.Child("policyTypes"), &spec.PolicyTypes, "may not specify more than two policyTypes"))
	}
	for i, t := range spec.PolicyTypes {
		if t != networkingv1.PolicyTypeIngress && t != networkingv1.PolicyTypeEgress {
			errs = append(errs, field.NotSupported(p.Child("policyTypes").Index(i), t, allowed))
		}
	}
	return errs
}

func validateNetworkPolicyPort(port *networkingv1.NetworkPolicyPort, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if port.Protocol != nil && *port.Protocol != corev1.ProtocolTCP && *port.Protocol != corev1.ProtocolUDP && *port.Protocol != corev1.ProtocolSCTP {
		errs = append(errs, field.NotSupported(p.Child("protocol"), *port.Protocol, []string{string(corev1.ProtocolTCP), string(corev1.ProtocolUDP), string(corev1.ProtocolSCTP)}))
	}
	switch {
	case port.Port == nil:
		if port.EndPort != nil {
			errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, "may not be specified when `port` is not specified"))
		}
	case port.Port.Type == intstr.Int:
		for _, msg := range validation.IsValidPortNum(int(port.Port.IntVal)) {
			errs = append(errs, field.Invalid(p.Child("port"), port.Port.IntVal, msg))
		}
		if port.EndPort != nil {
			if *port.EndPort < port.Port.IntVal {
				errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, "must be greater than or equal to `port`"))
			}
			for _, msg := range validation.IsValidPortNum(int(*port.EndPort)) {
				errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, msg))
			}
		}
	default:
		if port.EndPort != nil {
			errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, "may not be specified when `port` is non-numeric"))
		}
		for _, msg := range validation.IsValidPortName(port.Port.StrVal) {
			errs = append(errs, field.Invalid(p.Child("port"), port.Port.StrVal, msg))
		}
	}
	return errs
}

func validateNetworkPolicyPeer(peer *networkingv1.NetworkPolicyPeer, opts networkPolicyOptions, p *field.Path) field.ErrorList {
	selOpts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: opts.allowInvalidLabelValue}
	var errs field.ErrorList
	n := 0
	if peer.PodSelector != nil {
		n++
		errs = append(errs, metav1validation.ValidateLabelSelector(peer.PodSelector, selOpts, p.Child("podSelector"))...)
	}
	if peer.NamespaceSelector != nil {
		n++
		errs = append(errs, metav1validation.ValidateLabelSelector(peer.NamespaceSelector, selOpts, p.Child("namespaceSelector"))...)
	}
	if peer.IPBlock != nil {
		n++
		errs = append(errs, validateIPBlock(peer.IPBlock, p.Child("ipBlock"), opts)...)
	}
	if n == 0 {
		errs = append(errs, field.Required(p, "must specify a peer"))
	} else if n > 1 && peer.IPBlock != nil {
		errs = append(errs, field.Forbidden(p, "may not specify both ipBlock and another peer"))
	}
	return errs
}

func validateIPBlock(b *networkingv1.IPBlock, p *field.Path, opts networkPolicyOptions) field.ErrorList {
	if b.CIDR == "" {
		return field.ErrorList{field.Required(p.Child("cidr"), "").MarkBeta()}
	}
	errs := legacyCIDR(p.Child("cidr"), b.CIDR, opts.existingCIDRs)
	_, cidr, err := netutils.ParseCIDRSloppy(b.CIDR)
	if err != nil {
		return errs
	}
	for i, s := range b.Except {
		ep := p.Child("except").Index(i)
		errs = append(errs, legacyCIDR(ep, s, opts.existingCIDRs)...)
		_, except, err := netutils.ParseCIDRSloppy(s)
		if err != nil {
			continue
		}
		cidrLen, _ := cidr.Mask.Size()
		exceptLen, _ := except.Mask.Size()
		if !cidr.Contains(except.IP) || cidrLen >= exceptLen {
			errs = append(errs, field.Invalid(ep, s, "must be a strict subset of `cidr`"))
		}
	}
	return errs
}

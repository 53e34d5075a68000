package validation

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// maxSecretSize bounds the data of Secrets and ConfigMaps.
const maxSecretSize = 1 * 1024 * 1024

func init() {
	register(true, validatePod, validatePodUpdate, validatePodStatusUpdate)
	register(true, validatePodTemplate, validatePodTemplateUpdate, nil)
	register(true, validateServiceCreate, validateServiceUpdate, validateServiceStatusUpdate)
	register(true, func(e *corev1.Endpoints) field.ErrorList { return validateEndpoints(e, nil) }, validateEndpointsUpdate, nil)
	register(true, validateConfigMap, validateConfigMapUpdate, nil)
	register(true, validateSecret, validateSecretUpdate, nil)
	register(true, validateServiceAccount, validateServiceAccountUpdate, nil)
	register(true, validateEvent, validateEventUpdate, nil)
	register(false, validateNode, validateNodeUpdateAll, validateNodeUpdate)
	register(false, validateNamespace, validateNamespaceUpdate, validateNamespaceStatusUpdate)
	register(true, validateLimitRange, func(l, _ *corev1.LimitRange) field.ErrorList { return validateLimitRange(l) }, nil)
	register(true, validateResourceQuota, validateResourceQuotaUpdate, validateResourceQuotaStatusUpdate)
	register(true, validatePVC, validatePVCUpdate, validatePVCStatusUpdate)
}

// --- PodTemplate ---

func validatePodTemplate(t *corev1.PodTemplate) field.ErrorList {
	errs := objectMeta(&t.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	return append(errs, validatePodTemplateSpec(&t.Template, field.NewPath("template"), podOptions{})...)
}

func validatePodTemplateUpdate(t, old *corev1.PodTemplate) field.ErrorList {
	errs := objectMetaUpdate(&t.ObjectMeta, &old.ObjectMeta, metadataPath)
	return append(errs, validatePodTemplateSpec(&t.Template, field.NewPath("template"), podOptions{})...)
}

// --- Service ---

var (
	supportedSessionAffinity   = sets.New(corev1.ServiceAffinityClientIP, corev1.ServiceAffinityNone)
	supportedServiceTypes      = sets.New(corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName)
	supportedInternalTraffic   = sets.New(corev1.ServiceInternalTrafficPolicyCluster, corev1.ServiceInternalTrafficPolicyLocal)
	supportedExternalTraffic   = sets.New(corev1.ServiceExternalTrafficPolicyCluster, corev1.ServiceExternalTrafficPolicyLocal)
	supportedIPFamilies        = sets.New(corev1.IPv4Protocol, corev1.IPv6Protocol)
	supportedIPFamilyPolicies  = sets.New(corev1.IPFamilyPolicySingleStack, corev1.IPFamilyPolicyPreferDualStack, corev1.IPFamilyPolicyRequireDualStack)
	supportedLoadBalancerModes = sets.New(corev1.LoadBalancerIPModeVIP, corev1.LoadBalancerIPModeProxy)
	trafficDistributions       = []string{corev1.ServiceTrafficDistributionPreferClose, corev1.ServiceTrafficDistributionPreferSameZone, corev1.ServiceTrafficDistributionPreferSameNode}
)

const maxClientIPServiceAffinitySeconds = 86400

func isHeadless(s *corev1.Service) bool {
	return len(s.Spec.ClusterIPs) == 1 && s.Spec.ClusterIPs[0] == corev1.ClusterIPNone
}

// validateServiceCreate uses RFC 1123 labels for names: RelaxedServiceNameValidation
// is GA in v1.37, so names no longer need to start with a letter.
func validateServiceCreate(s *corev1.Service) field.ErrorList {
	errs := objectMeta(&s.ObjectMeta, true, apimachineryvalidation.NameIsDNSLabel, metadataPath)
	return append(errs, validateService(s, nil)...)
}

func validateServiceUpdate(s, old *corev1.Service) field.ErrorList {
	errs := objectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta, metadataPath)
	errs = append(errs, validateUpgradeDowngradeClusterIPs(old, s)...)
	errs = append(errs, validateUpgradeDowngradeIPFamilies(old, s)...)
	errs = append(errs, validateLoadBalancerClass(old, s)...)
	if needsHealthCheck(old) && needsHealthCheck(s) && s.Spec.HealthCheckNodePort != old.Spec.HealthCheckNodePort {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "healthCheckNodePort"), "field is immutable"))
	}
	return append(errs, validateService(s, old)...)
}

func validateServiceStatusUpdate(s, old *corev1.Service) field.ErrorList {
	errs := objectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta, metadataPath)
	p := field.NewPath("status", "loadBalancer", "ingress")
	if s.Spec.Type != corev1.ServiceTypeLoadBalancer && len(s.Status.LoadBalancer.Ingress) != 0 {
		return append(errs, field.Forbidden(p, "may only be used when `spec.type` is 'LoadBalancer'"))
	}
	existing := []string{}
	for _, in := range old.Status.LoadBalancer.Ingress {
		if in.IP != "" {
			existing = append(existing, in.IP)
		}
	}
	for i, in := range s.Status.LoadBalancer.Ingress {
		ip := p.Index(i)
		if in.IP != "" {
			errs = append(errs, legacyIP(ip.Child("ip"), in.IP, existing)...)
		}
		switch {
		case in.IPMode == nil:
			if in.IP != "" {
				errs = append(errs, field.Required(ip.Child("ipMode"), "must be specified when `ip` is set"))
			}
		case in.IP == "":
			errs = append(errs, field.Forbidden(ip.Child("ipMode"), "may not be specified when `ip` is not set"))
		case !supportedLoadBalancerModes.Has(*in.IPMode):
			errs = append(errs, field.NotSupported(ip.Child("ipMode"), in.IPMode, sets.List(supportedLoadBalancerModes)))
		}
		if in.Hostname != "" {
			errs = append(errs, dns1123Subdomain(in.Hostname, ip.Child("hostname"))...)
			if netutils.ParseIPSloppy(in.Hostname) != nil {
				errs = append(errs, field.Invalid(ip.Child("hostname"), in.Hostname, "must be a DNS name, not an IP address"))
			}
		}
	}
	return errs
}

func externallyAccessible(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer || s.Spec.Type == corev1.ServiceTypeNodePort ||
		(s.Spec.Type == corev1.ServiceTypeClusterIP && len(s.Spec.ExternalIPs) > 0)
}

func needsHealthCheck(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

func validateService(s, old *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	hints, hintsSet := s.Annotations[corev1.DeprecatedAnnotationTopologyAwareHints]
	mode, modeSet := s.Annotations[corev1.AnnotationTopologyMode]
	if hintsSet && modeSet && hints != mode {
		errs = append(errs, field.Invalid(metadataPath.Child("annotations").Key(corev1.AnnotationTopologyMode), mode,
			fmt.Sprintf("must match annotations[%s] when both are specified", corev1.DeprecatedAnnotationTopologyAwareHints)))
	}
	if len(s.Spec.Ports) == 0 && !isHeadless(s) && s.Spec.Type != corev1.ServiceTypeExternalName {
		errs = append(errs, field.Required(spec.Child("ports"), ""))
	}
	switch s.Spec.Type {
	case corev1.ServiceTypeLoadBalancer:
		if isHeadless(s) {
			errs = append(errs, field.Invalid(spec.Child("clusterIPs").Index(0), s.Spec.ClusterIPs[0], "may not be set to 'None' for LoadBalancer services"))
		}
	case corev1.ServiceTypeNodePort:
		if isHeadless(s) {
			errs = append(errs, field.Invalid(spec.Child("clusterIPs").Index(0), s.Spec.ClusterIPs[0], "may not be set to 'None' for NodePort services"))
		}
	case corev1.ServiceTypeExternalName:
		if len(s.Spec.ClusterIPs) > 0 {
			errs = append(errs, field.Forbidden(spec.Child("clusterIPs"), "may not be set for ExternalName services"))
		}
		if len(s.Spec.IPFamilies) > 0 {
			errs = append(errs, field.Forbidden(spec.Child("ipFamilies"), "may not be set for ExternalName services"))
		}
		if s.Spec.IPFamilyPolicy != nil {
			errs = append(errs, field.Forbidden(spec.Child("ipFamilyPolicy"), "may not be set for ExternalName services"))
		}
		// A trailing dot marks the name fully qualified.
		if cname := strings.TrimSuffix(s.Spec.ExternalName, "."); cname != "" {
			errs = append(errs, dns1123Subdomain(cname, spec.Child("externalName"))...)
		} else {
			errs = append(errs, field.Required(spec.Child("externalName"), ""))
		}
	}

	portNames := sets.New[string]()
	for i := range s.Spec.Ports {
		errs = append(errs, validateServicePort(&s.Spec.Ports[i], len(s.Spec.Ports) > 1, portNames, spec.Child("ports").Index(i))...)
	}
	if s.Spec.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabels(s.Spec.Selector, spec.Child("selector"))...)
	}
	if s.Spec.SessionAffinity == "" {
		errs = append(errs, field.Required(spec.Child("sessionAffinity"), ""))
	} else if !supportedSessionAffinity.Has(s.Spec.SessionAffinity) {
		errs = append(errs, field.NotSupported(spec.Child("sessionAffinity"), s.Spec.SessionAffinity, sets.List(supportedSessionAffinity)))
	}
	switch s.Spec.SessionAffinity {
	case corev1.ServiceAffinityClientIP:
		errs = append(errs, validateClientIPAffinity(s.Spec.SessionAffinityConfig, spec.Child("sessionAffinityConfig"))...)
	case corev1.ServiceAffinityNone:
		if s.Spec.SessionAffinityConfig != nil {
			errs = append(errs, field.Forbidden(spec.Child("sessionAffinityConfig"), fmt.Sprintf("must not be set when session affinity is %s", corev1.ServiceAffinityNone)))
		}
	}
	errs = append(errs, validateClusterIPsRelatedFields(s, old)...)

	var oldExternalIPs []string
	if old != nil {
		oldExternalIPs = old.Spec.ExternalIPs
	}
	for i, ip := range s.Spec.ExternalIPs {
		ipPath := spec.Child("externalIPs").Index(i)
		if e := legacyIP(ipPath, ip, oldExternalIPs); len(e) != 0 {
			errs = append(errs, e...)
		} else {
			errs = append(errs, validateEndpointIP(ip, ipPath)...)
		}
	}
	if s.Spec.Type == "" {
		errs = append(errs, field.Required(spec.Child("type"), ""))
	} else if !supportedServiceTypes.Has(s.Spec.Type) {
		errs = append(errs, field.NotSupported(spec.Child("type"), s.Spec.Type, sets.List(supportedServiceTypes)))
	}
	if s.Spec.Type == corev1.ServiceTypeClusterIP {
		for i, port := range s.Spec.Ports {
			if port.NodePort != 0 {
				errs = append(errs, field.Forbidden(spec.Child("ports").Index(i).Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
			}
		}
	}
	type protoPort struct {
		proto corev1.Protocol
		port  int32
	}
	nodePorts := sets.New[protoPort]()
	for i, port := range s.Spec.Ports {
		if port.NodePort == 0 {
			continue
		}
		key := protoPort{port.Protocol, port.NodePort}
		if nodePorts.Has(key) {
			errs = append(errs, field.Duplicate(spec.Child("ports").Index(i).Child("nodePort"), port.NodePort))
		}
		nodePorts.Insert(key)
	}
	ports := sets.New[protoPort]()
	for i, port := range s.Spec.Ports {
		key := protoPort{port.Protocol, port.Port}
		if ports.Has(key) {
			// kube shows a ServicePort with only these two fields set.
			errs = append(errs, field.Duplicate(spec.Child("ports").Index(i), internal{corev1.ServicePort{Protocol: port.Protocol, Port: port.Port}}))
		}
		ports.Insert(key)
	}

	if len(s.Spec.LoadBalancerSourceRanges) > 0 {
		fp := spec.Child("LoadBalancerSourceRanges")
		if s.Spec.Type != corev1.ServiceTypeLoadBalancer {
			errs = append(errs, field.Forbidden(fp, "may only be used when `type` is 'LoadBalancer'"))
		}
		var existing []string
		if old != nil {
			for _, v := range old.Spec.LoadBalancerSourceRanges {
				existing = append(existing, strings.TrimSpace(v))
			}
		}
		for i, v := range s.Spec.LoadBalancerSourceRanges {
			errs = append(errs, legacyCIDR(fp.Index(i), strings.TrimSpace(v), existing)...)
		}
	} else if v, ok := s.Annotations[corev1.AnnotationLoadBalancerSourceRangesKey]; ok {
		fp := metadataPath.Child("annotations").Key(corev1.AnnotationLoadBalancerSourceRangesKey)
		if s.Spec.Type != corev1.ServiceTypeLoadBalancer {
			errs = append(errs, field.Forbidden(fp, "may only be used when `type` is 'LoadBalancer'"))
		}
		if old == nil || old.Annotations[corev1.AnnotationLoadBalancerSourceRangesKey] != v {
			if v = strings.TrimSpace(v); v != "" {
				for _, cidr := range strings.Split(v, ",") {
					errs = append(errs, legacyCIDR(fp, strings.TrimSpace(cidr), nil)...)
				}
			}
		}
	}
	if s.Spec.AllocateLoadBalancerNodePorts != nil && s.Spec.Type != corev1.ServiceTypeLoadBalancer {
		errs = append(errs, field.Forbidden(spec.Child("allocateLoadBalancerNodePorts"), "may only be used when `type` is 'LoadBalancer'"))
	}
	if s.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.AllocateLoadBalancerNodePorts == nil {
		// kube leaves "spec" out of this path.
		errs = append(errs, field.Required(field.NewPath("allocateLoadBalancerNodePorts"), ""))
	}
	errs = append(errs, validateLoadBalancerClass(nil, s)...)

	if !externallyAccessible(s) {
		if s.Spec.ExternalTrafficPolicy != "" {
			errs = append(errs, field.Invalid(spec.Child("externalTrafficPolicy"), s.Spec.ExternalTrafficPolicy, "may only be set for externally-accessible services"))
		}
	} else if s.Spec.ExternalTrafficPolicy == "" {
		errs = append(errs, field.Required(spec.Child("externalTrafficPolicy"), ""))
	} else if !supportedExternalTraffic.Has(s.Spec.ExternalTrafficPolicy) {
		errs = append(errs, field.NotSupported(spec.Child("externalTrafficPolicy"), s.Spec.ExternalTrafficPolicy, sets.List(supportedExternalTraffic)))
	}
	if !needsHealthCheck(s) {
		if s.Spec.HealthCheckNodePort != 0 {
			errs = append(errs, field.Invalid(spec.Child("healthCheckNodePort"), s.Spec.HealthCheckNodePort, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
		}
	} else if s.Spec.HealthCheckNodePort != 0 {
		// Unset is no error: the services allocator fills it in before the
		// service is stored. kube allocates before it validates, so its
		// "healthCheckNodePort: Required value" is never seen.
		for _, msg := range validation.IsValidPortNum(int(s.Spec.HealthCheckNodePort)) {
			errs = append(errs, field.Invalid(spec.Child("healthCheckNodePort"), s.Spec.HealthCheckNodePort, msg))
		}
	}
	if s.Spec.InternalTrafficPolicy == nil {
		// Only these types for history's sake.
		if s.Spec.Type == corev1.ServiceTypeNodePort || s.Spec.Type == corev1.ServiceTypeLoadBalancer || s.Spec.Type == corev1.ServiceTypeClusterIP {
			errs = append(errs, field.Required(spec.Child("internalTrafficPolicy"), ""))
		}
	} else if !supportedInternalTraffic.Has(*s.Spec.InternalTrafficPolicy) {
		errs = append(errs, field.NotSupported(spec.Child("internalTrafficPolicy"), *s.Spec.InternalTrafficPolicy, sets.List(supportedInternalTraffic)))
	}
	if td := s.Spec.TrafficDistribution; td != nil && !slices.Contains(trafficDistributions, *td) {
		errs = append(errs, field.NotSupported(spec.Child("trafficDistribution"), *td, trafficDistributions))
	}
	return errs
}

func validateServicePort(sp *corev1.ServicePort, requireName bool, names sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if requireName && sp.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else if sp.Name != "" {
		errs = append(errs, dns1123Label(sp.Name, p.Child("name"))...)
		if names.Has(sp.Name) {
			errs = append(errs, field.Duplicate(p.Child("name"), sp.Name))
		} else {
			names.Insert(sp.Name)
		}
	}
	for _, msg := range validation.IsValidPortNum(int(sp.Port)) {
		errs = append(errs, field.Invalid(p.Child("port"), sp.Port, msg))
	}
	if sp.Protocol == "" {
		errs = append(errs, field.Required(p.Child("protocol"), ""))
	} else if !supportedPortProtocols.Has(sp.Protocol) {
		errs = append(errs, field.NotSupported(p.Child("protocol"), sp.Protocol, sets.List(supportedPortProtocols)))
	}
	errs = append(errs, validatePortNumOrName(sp.TargetPort, p.Child("targetPort"))...)
	if sp.AppProtocol != nil {
		errs = append(errs, qualifiedName(*sp.AppProtocol, p.Child("appProtocol"))...)
	}
	return errs
}

func validateClientIPAffinity(c *corev1.SessionAffinityConfig, p *field.Path) field.ErrorList {
	msg := fmt.Sprintf("when session affinity type is %s", corev1.ServiceAffinityClientIP)
	switch {
	case c == nil:
		return field.ErrorList{field.Required(p, msg)}
	case c.ClientIP == nil:
		return field.ErrorList{field.Required(p.Child("clientIP"), msg)}
	case c.ClientIP.TimeoutSeconds == nil:
		return field.ErrorList{field.Required(p.Child("clientIP", "timeoutSeconds"), msg)}
	}
	if t := *c.ClientIP.TimeoutSeconds; t <= 0 || t > maxClientIPServiceAffinitySeconds {
		return field.ErrorList{field.Invalid(p.Child("clientIP", "timeoutSeconds"), t, fmt.Sprintf("must be greater than 0 and less than %d", maxClientIPServiceAffinitySeconds))}
	}
	return nil
}

func validateClusterIPsRelatedFields(s, old *corev1.Service) field.ErrorList {
	if s.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	var errs field.ErrorList
	spec := field.NewPath("spec")
	ipsPath := spec.Child("clusterIPs")
	if s.Spec.ClusterIP != "" {
		if len(s.Spec.ClusterIPs) == 0 {
			errs = append(errs, field.Required(ipsPath, ""))
		} else if s.Spec.ClusterIPs[0] != s.Spec.ClusterIP {
			errs = append(errs, field.Invalid(ipsPath, s.Spec.ClusterIPs, "first value must match `clusterIP`"))
		}
	} else if len(s.Spec.ClusterIPs) != 0 {
		errs = append(errs, field.Invalid(ipsPath, s.Spec.ClusterIPs, "must be empty when `clusterIP` is not specified"))
	}
	seen := sets.New[corev1.IPFamily]()
	for i, f := range s.Spec.IPFamilies {
		if !supportedIPFamilies.Has(f) {
			errs = append(errs, field.NotSupported(spec.Child("ipFamilies").Index(i), f, sets.List(supportedIPFamilies)))
		}
		if seen.Has(f) {
			errs = append(errs, field.Duplicate(spec.Child("ipFamilies").Index(i), f))
		}
		seen.Insert(f)
	}
	if s.Spec.IPFamilyPolicy != nil && !supportedIPFamilyPolicies.Has(*s.Spec.IPFamilyPolicy) {
		errs = append(errs, field.NotSupported(spec.Child("ipFamilyPolicy"), s.Spec.IPFamilyPolicy, sets.List(supportedIPFamilyPolicies)))
	}
	var oldIPs []string
	if old != nil {
		oldIPs = old.Spec.ClusterIPs
	}
	invalid := false
	for i, ip := range s.Spec.ClusterIPs {
		if i == 0 && ip == corev1.ClusterIPNone {
			if len(s.Spec.ClusterIPs) > 1 {
				invalid = true
				errs = append(errs, field.Invalid(ipsPath, s.Spec.ClusterIPs, "'None' must be the first and only value"))
			}
			continue
		}
		e := legacyIP(ipsPath.Index(i), ip, oldIPs)
		invalid = invalid || len(e) != 0
		errs = append(errs, e...)
	}
	if len(s.Spec.ClusterIPs) > 2 {
		errs = append(errs, field.Invalid(ipsPath, s.Spec.ClusterIPs, "may only hold up to 2 values"))
	}
	// Bad addresses would make the family checks below misleading.
	if invalid {
		return errs
	}
	if len(s.Spec.ClusterIPs) > 1 {
		dual, err := netutils.IsDualStackIPStrings(s.Spec.ClusterIPs)
		if err != nil {
			errs = append(errs, field.InternalError(ipsPath, fmt.Errorf("failed to check for dual stack with error:%v", err)))
		}
		if !dual {
			errs = append(errs, field.Invalid(ipsPath, s.Spec.ClusterIPs, "may specify no more than one IP for each IP family"))
		}
	}
	if !isHeadless(s) && len(s.Spec.ClusterIPs) > 0 && len(s.Spec.IPFamilies) > 0 {
		for i, ip := range s.Spec.ClusterIPs {
			if i > len(s.Spec.IPFamilies)-1 {
				break
			}
			if s.Spec.IPFamilies[i] == corev1.IPv4Protocol && netutils.IsIPv6String(ip) {
				errs = append(errs, field.Invalid(ipsPath.Index(i), ip, fmt.Sprintf("expected an IPv4 value as indicated by `ipFamilies[%v]`", i)))
			}
			if s.Spec.IPFamilies[i] == corev1.IPv6Protocol && !netutils.IsIPv6String(ip) {
				errs = append(errs, field.Invalid(ipsPath.Index(i), ip, fmt.Sprintf("expected an IPv6 value as indicated by `ipFamilies[%v]`", i)))
			}
		}
	}
	return errs
}

// validateUpgradeDowngradeClusterIPs keeps allocated cluster IPs immutable,
// except for adding or releasing the secondary one.
func validateUpgradeDowngradeClusterIPs(old, s *corev1.Service) field.ErrorList {
	if s.Spec.Type == corev1.ServiceTypeExternalName || old.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if isHeadless(old) && isHeadless(s) {
		return nil
	}
	var errs field.ErrorList
	p := field.NewPath("spec", "clusterIPs")
	newIPs, oldIPs := s.Spec.ClusterIPs, old.Spec.ClusterIPs
	switch {
	case len(oldIPs) == len(newIPs):
		for i, ip := range oldIPs {
			if ip != newIPs[i] {
				errs = append(errs, field.Invalid(p.Index(i), newIPs, "may not change once set"))
			}
		}
	case len(oldIPs) > len(newIPs):
		if len(newIPs) == 0 {
			errs = append(errs, field.Invalid(p.Index(0), newIPs, "primary clusterIP can not be unset"))
		}
		if len(oldIPs) > 0 && len(newIPs) > 0 && newIPs[0] != oldIPs[0] {
			errs = append(errs, field.Invalid(p.Index(0), newIPs, "may not change once set"))
		}
		if len(newIPs) == 1 && (s.Spec.IPFamilyPolicy == nil || *s.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack) {
			errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), s.Spec.IPFamilyPolicy, "must be set to 'SingleStack' when releasing the secondary clusterIP"))
		}
	default:
		if len(oldIPs) > 0 && newIPs[0] != oldIPs[0] {
			errs = append(errs, field.Invalid(p.Index(0), newIPs, "may not change once set"))
		}
	}
	return errs
}

func validateUpgradeDowngradeIPFamilies(old, s *corev1.Service) field.ErrorList {
	if s.Spec.Type == corev1.ServiceTypeExternalName || old.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if isHeadless(old) != isHeadless(s) || isHeadless(s) {
		return nil
	}
	var errs field.ErrorList
	p := field.NewPath("spec", "ipFamilies")
	nf, of := s.Spec.IPFamilies, old.Spec.IPFamilies
	switch {
	case len(of) == len(nf):
		for i, f := range of {
			if f != nf[i] {
				errs = append(errs, field.Invalid(p.Index(0), nf, "may not change once set"))
			}
		}
	case len(of) > len(nf):
		if len(s.Spec.ClusterIPs) == 0 {
			errs = append(errs, field.Invalid(p.Index(0), nf, "primary ipFamily can not be unset"))
		}
		if len(nf) > 0 && nf[0] != of[0] {
			errs = append(errs, field.Invalid(p.Index(0), s.Spec.ClusterIPs, "may not change once set"))
		}
		if len(nf) == 1 && (s.Spec.IPFamilyPolicy == nil || *s.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack) {
			errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), s.Spec.IPFamilyPolicy, "must be set to 'SingleStack' when releasing the secondary ipFamily"))
		}
	default:
		if len(of) > 0 && len(nf) > 0 && nf[0] != of[0] {
			errs = append(errs, field.Invalid(p.Index(0), s.Spec.ClusterIPs, "may not change once set"))
		}
	}
	return errs
}

func validateLoadBalancerClass(old, s *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec", "loadBalancerClass")
	isLB := s.Spec.Type == corev1.ServiceTypeLoadBalancer
	if old != nil && old.Spec.Type == corev1.ServiceTypeLoadBalancer && isLB &&
		!apiequality.Semantic.DeepEqual(old.Spec.LoadBalancerClass, s.Spec.LoadBalancerClass) {
		errs = append(errs, field.Invalid(p, s.Spec.LoadBalancerClass, "may not change once set"))
	}
	switch {
	case isLB && s.Spec.LoadBalancerClass != nil:
		errs = append(errs, qualifiedName(*s.Spec.LoadBalancerClass, p)...)
	case !isLB && s.Spec.LoadBalancerClass != nil:
		errs = append(errs, field.Forbidden(p, "may only be used when `type` is 'LoadBalancer'"))
	}
	return errs
}

// validateEndpointIP rejects addresses that cannot be endpoints; kube also
// uses it for external IPs.
func validateEndpointIP(addr string, p *field.Path) field.ErrorList {
	ip := netutils.ParseIPSloppy(addr)
	if ip == nil {
		return field.ErrorList{field.Invalid(p, addr, "must be a valid IP address")}
	}
	var errs field.ErrorList
	if ip.IsUnspecified() {
		errs = append(errs, field.Invalid(p, addr, fmt.Sprintf("may not be unspecified (%v)", addr)))
	}
	if ip.IsLoopback() {
		errs = append(errs, field.Invalid(p, addr, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if ip.IsLinkLocalUnicast() {
		errs = append(errs, field.Invalid(p, addr, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if ip.IsLinkLocalMulticast() {
		errs = append(errs, field.Invalid(p, addr, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return errs
}

// --- Endpoints ---

func validateEndpoints(e, old *corev1.Endpoints) field.ErrorList {
	errs := objectMeta(&e.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	sub := validateEndpointSubsets(e.Subsets, field.NewPath("subsets"))
	// Unchanged subsets passed older, looser rules; keep accepting them.
	if len(sub) != 0 && old != nil && apiequality.Semantic.DeepEqual(old.Subsets, e.Subsets) {
		sub = nil
	}
	return append(errs, sub...)
}

func validateEndpointsUpdate(e, old *corev1.Endpoints) field.ErrorList {
	errs := objectMetaUpdate(&e.ObjectMeta, &old.ObjectMeta, metadataPath)
	return append(errs, validateEndpoints(e, old)...)
}

func validateEndpointSubsets(subsets []corev1.EndpointSubset, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range subsets {
		ss := &subsets[i]
		ip := p.Index(i)
		if len(ss.Addresses) == 0 && len(ss.NotReadyAddresses) == 0 {
			errs = append(errs, field.Required(ip, "must specify `addresses` or `notReadyAddresses`"))
		}
		for j := range ss.Addresses {
			errs = append(errs, validateEndpointAddress(&ss.Addresses[j], ip.Child("addresses").Index(j))...)
		}
		for j := range ss.NotReadyAddresses {
			errs = append(errs, validateEndpointAddress(&ss.NotReadyAddresses[j], ip.Child("notReadyAddresses").Index(j))...)
		}
		for j := range ss.Ports {
			errs = append(errs, validateEndpointPort(&ss.Ports[j], len(ss.Ports) > 1, ip.Child("ports").Index(j))...)
		}
	}
	return errs
}

func validateEndpointAddress(a *corev1.EndpointAddress, p *field.Path) field.ErrorList {
	errs := legacyIP(p.Child("ip"), a.IP, nil)
	if a.Hostname != "" {
		errs = append(errs, dns1123Label(a.Hostname, p.Child("hostname"))...)
	}
	if a.NodeName != nil {
		errs = append(errs, nameErrs(apimachineryvalidation.NameIsDNSSubdomain, *a.NodeName, p.Child("nodeName"))...)
	}
	return append(errs, validateEndpointIP(a.IP, p.Child("ip"))...)
}

func validateEndpointPort(port *corev1.EndpointPort, requireName bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if requireName && port.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else if port.Name != "" {
		errs = append(errs, dns1123Label(port.Name, p.Child("name"))...)
	}
	for _, msg := range validation.IsValidPortNum(int(port.Port)) {
		errs = append(errs, field.Invalid(p.Child("port"), port.Port, msg))
	}
	if port.Protocol == "" {
		errs = append(errs, field.Required(p.Child("protocol"), ""))
	} else if !supportedPortProtocols.Has(port.Protocol) {
		errs = append(errs, field.NotSupported(p.Child("protocol"), port.Protocol, sets.List(supportedPortProtocols)))
	}
	if port.AppProtocol != nil {
		errs = append(errs, qualifiedName(*port.AppProtocol, p.Child("appProtocol"))...)
	}
	return errs
}

// --- ConfigMap and Secret ---

func validateConfigMap(c *corev1.ConfigMap) field.ErrorList {
	errs := objectMeta(&c.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	total := 0
	for _, k := range sortedStrings(c.Data) {
		for _, msg := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(field.NewPath("data").Key(k), k, msg))
		}
		if _, dup := c.BinaryData[k]; dup {
			errs = append(errs, field.Invalid(field.NewPath("data").Key(k), k, "duplicate of key present in binaryData"))
		}
		total += len(c.Data[k])
	}
	for _, k := range sortedStrings(c.BinaryData) {
		for _, msg := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(field.NewPath("binaryData").Key(k), k, msg))
		}
		total += len(c.BinaryData[k])
	}
	if total > maxSecretSize {
		// kube reports this on the empty path, which renders as "[]".
		errs = append(errs, field.TooLong(field.NewPath(""), "", maxSecretSize))
	}
	return errs
}

func validateConfigMapUpdate(c, old *corev1.ConfigMap) field.ErrorList {
	errs := objectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta, metadataPath)
	if old.Immutable != nil && *old.Immutable {
		if c.Immutable == nil || !*c.Immutable {
			errs = append(errs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
		}
		if !apiequality.Semantic.DeepEqual(c.Data, old.Data) {
			errs = append(errs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
		}
		if !apiequality.Semantic.DeepEqual(c.BinaryData, old.BinaryData) {
			errs = append(errs, field.Forbidden(field.NewPath("binaryData"), "field is immutable when `immutable` is set"))
		}
	}
	return append(errs, validateConfigMap(c)...)
}

func sortedStrings[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func validateSecret(s *corev1.Secret) field.ErrorList {
	errs := objectMeta(&s.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	data := field.NewPath("data")
	total := 0
	for _, k := range sortedStrings(s.Data) {
		for _, msg := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(data.Key(k), k, msg))
		}
		total += len(s.Data[k])
	}
	if total > maxSecretSize {
		errs = append(errs, field.TooLong(data, "", maxSecretSize))
	}
	switch s.Type {
	case corev1.SecretTypeServiceAccountToken:
		// The token itself is filled in later by a controller.
		if s.Annotations[corev1.ServiceAccountNameKey] == "" {
			errs = append(errs, field.Required(metadataPath.Child("annotations").Key(corev1.ServiceAccountNameKey), ""))
		}
	case corev1.SecretTypeDockercfg:
		errs = append(errs, validateJSONKey(s.Data, corev1.DockerConfigKey, data)...)
	case corev1.SecretTypeDockerConfigJson:
		errs = append(errs, validateJSONKey(s.Data, corev1.DockerConfigJsonKey, data)...)
	case corev1.SecretTypeBasicAuth:
		_, user := s.Data[corev1.BasicAuthUsernameKey]
		_, pass := s.Data[corev1.BasicAuthPasswordKey]
		if !user && !pass {
			errs = append(errs, field.Required(data.Key(corev1.BasicAuthUsernameKey), ""), field.Required(data.Key(corev1.BasicAuthPasswordKey), ""))
		}
	case corev1.SecretTypeSSHAuth:
		if len(s.Data[corev1.SSHAuthPrivateKey]) == 0 {
			errs = append(errs, field.Required(data.Key(corev1.SSHAuthPrivateKey), ""))
		}
	case corev1.SecretTypeTLS:
		if _, ok := s.Data[corev1.TLSCertKey]; !ok {
			errs = append(errs, field.Required(data.Key(corev1.TLSCertKey), ""))
		}
		if _, ok := s.Data[corev1.TLSPrivateKeyKey]; !ok {
			errs = append(errs, field.Required(data.Key(corev1.TLSPrivateKeyKey), ""))
		}
	}
	return errs
}

// validateJSONKey requires key to hold a JSON object, never echoing the secret.
func validateJSONKey(data map[string][]byte, key string, p *field.Path) field.ErrorList {
	b, ok := data[key]
	if !ok {
		return field.ErrorList{field.Required(p.Key(key), "")}
	}
	if err := json.Unmarshal(b, &map[string]any{}); err != nil {
		return field.ErrorList{field.Invalid(p.Key(key), "<secret contents redacted>", err.Error())}
	}
	return nil
}

func validateSecretUpdate(s, old *corev1.Secret) field.ErrorList {
	errs := objectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta, metadataPath)
	errs = append(errs, apimachineryvalidation.ValidateImmutableField(s.Type, old.Type, field.NewPath("type"))...)
	if old.Immutable != nil && *old.Immutable {
		if s.Immutable == nil || !*s.Immutable {
			errs = append(errs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
		}
		if !apiequality.Semantic.DeepEqual(s.Data, old.Data) {
			errs = append(errs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
		}
	}
	return append(errs, validateSecret(s)...)
}

// --- ServiceAccount ---

func validateServiceAccount(sa *corev1.ServiceAccount) field.ErrorList {
	return objectMeta(&sa.ObjectMeta, true, apimachineryvalidation.ValidateServiceAccountName, metadataPath)
}

func validateServiceAccountUpdate(sa, old *corev1.ServiceAccount) field.ErrorList {
	errs := objectMetaUpdate(&sa.ObjectMeta, &old.ObjectMeta, metadataPath)
	return append(errs, validateServiceAccount(sa)...)
}

// --- Event ---

// Limits kube applies to events with an eventTime.
const (
	reportingInstanceLengthLimit = 128
	actionLengthLimit            = 128
	reasonLengthLimit            = 128
	noteLengthLimit              = 1024
)

// validateEvent is kube's legacy event validation, which is all core/v1
// applies; metadata falls to the generic check run after it.
func validateEvent(e *corev1.Event) field.ErrorList {
	var errs field.ErrorList
	ioNS := field.NewPath("involvedObject", "namespace")
	if e.EventTime.IsZero() {
		// Old-style events: the namespaces must agree, with "default"
		// tolerated for old clients reporting cluster-scoped objects.
		if e.InvolvedObject.Namespace == "" {
			if e.Namespace != metav1.NamespaceNone && e.Namespace != metav1.NamespaceDefault {
				errs = append(errs, field.Invalid(ioNS, e.InvolvedObject.Namespace, "does not match event.namespace"))
			}
		} else if e.Namespace != e.InvolvedObject.Namespace {
			errs = append(errs, field.Invalid(ioNS, e.InvolvedObject.Namespace, "does not match event.namespace"))
		}
		return errs
	}
	if e.InvolvedObject.Namespace == "" && e.Namespace != metav1.NamespaceDefault && e.Namespace != metav1.NamespaceSystem {
		errs = append(errs, field.Invalid(ioNS, e.InvolvedObject.Namespace, "does not match event.namespace"))
	}
	// core/v1 calls reportingController reportingComponent.
	rc := field.NewPath("reportingComponent")
	if e.ReportingController == "" {
		errs = append(errs, field.Required(rc, ""))
	}
	errs = append(errs, qualifiedName(e.ReportingController, rc)...)
	if e.ReportingInstance == "" {
		errs = append(errs, field.Required(field.NewPath("reportingInstance"), ""))
	}
	if len(e.ReportingInstance) > reportingInstanceLengthLimit {
		errs = append(errs, field.Invalid(field.NewPath("reportingInstance"), "", fmt.Sprintf("can have at most %v characters", reportingInstanceLengthLimit)))
	}
	if e.Action == "" {
		errs = append(errs, field.Required(field.NewPath("action"), ""))
	}
	if len(e.Action) > actionLengthLimit {
		errs = append(errs, field.Invalid(field.NewPath("action"), "", fmt.Sprintf("can have at most %v characters", actionLengthLimit)))
	}
	if e.Reason == "" {
		errs = append(errs, field.Required(field.NewPath("reason"), ""))
	}
	if len(e.Reason) > reasonLengthLimit {
		errs = append(errs, field.Invalid(field.NewPath("reason"), "", fmt.Sprintf("can have at most %v characters", reasonLengthLimit)))
	}
	if len(e.Message) > noteLengthLimit {
		errs = append(errs, field.Invalid(field.NewPath("message"), "", fmt.Sprintf("can have at most %v characters", noteLengthLimit)))
	}
	return errs
}

// validateEventUpdate: core/v1 updates get the legacy rules only, no
// immutability (that is events.k8s.io/v1's).
func validateEventUpdate(e, _ *corev1.Event) field.ErrorList {
	return validateEvent(e)
}

// --- Node ---

func validateNode(n *corev1.Node) field.ErrorList {
	errs := objectMeta(&n.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	if len(n.Spec.Taints) > 0 {
		// kube reports spec taints under metadata.
		errs = append(errs, validateNodeTaints(n.Spec.Taints, metadataPath.Child("taints"))...)
	}
	errs = append(errs, validateNodeResources(n)...)
	errs = append(errs, validateDeclaredFeatures(n.Status.DeclaredFeatures, field.NewPath("status", "declaredFeatures"))...)
	if len(n.Spec.PodCIDRs) > 0 {
		p := field.NewPath("spec", "podCIDRs")
		for i, c := range n.Spec.PodCIDRs {
			errs = append(errs, legacyCIDR(p.Index(i), c, nil)...)
		}
		if len(n.Spec.PodCIDRs) > 1 {
			dual, err := netutils.IsDualStackCIDRStrings(n.Spec.PodCIDRs)
			if err != nil {
				errs = append(errs, field.InternalError(p, fmt.Errorf("invalid PodCIDRs. failed to check with dual stack with error:%v", err)))
			}
			if !dual || len(n.Spec.PodCIDRs) > 2 {
				errs = append(errs, field.Invalid(p, n.Spec.PodCIDRs, "may specify no more than one CIDR for each IP family"))
			}
		}
	}
	return errs
}

func validateNodeTaints(taints []corev1.Taint, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[corev1.TaintEffect]sets.Set[string]{}
	for i, t := range taints {
		ip := p.Index(i)
		errs = append(errs, metav1validation.ValidateLabelName(t.Key, ip.Child("key"))...)
		if msgs := validation.IsValidLabelValue(t.Value); len(msgs) != 0 {
			errs = append(errs, field.Invalid(ip.Child("value"), t.Value, strings.Join(msgs, ";")))
		}
		errs = append(errs, validateTaintEffect(t.Effect, false, ip.Child("effect"))...)
		if seen[t.Effect].Has(t.Key) {
			e := field.Duplicate(ip, internal{t})
			e.Detail = "taints must be unique by key and effect pair"
			errs = append(errs, e)
			continue
		}
		if seen[t.Effect] == nil {
			seen[t.Effect] = sets.New[string]()
		}
		seen[t.Effect].Insert(t.Key)
	}
	return errs
}

func validateNodeResources(n *corev1.Node) field.ErrorList {
	var errs field.ErrorList
	for _, k := range sortedKeys(n.Status.Capacity) {
		errs = append(errs, validateResourceQuantityValue(k, n.Status.Capacity[k], field.NewPath("status", "capacity", string(k)))...)
	}
	for _, k := range sortedKeys(n.Status.Allocatable) {
		errs = append(errs, validateResourceQuantityValue(k, n.Status.Allocatable[k], field.NewPath("status", "allocatable", string(k)))...)
	}
	return errs
}

func validateDeclaredFeatures(fs []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, f := range fs {
		if len(f) > validation.DNS1123SubdomainMaxLength {
			errs = append(errs, field.Invalid(p.Index(i), f, fmt.Sprintf("invalid feature name %q: must be no more than %d characters", f, validation.DNS1123SubdomainMaxLength)))
		} else if !isDeclaredFeatureName(f) {
			errs = append(errs, field.Invalid(p.Index(i), f, fmt.Sprintf("invalid feature name %q: must start with an UpperCamelCase segment, with subsequent segments separated by '/' (e.g., MyFeature or MyFeature/mySubFeature), and contain only alphanumeric characters and slashes", f)))
		}
		if i+1 < len(fs) {
			switch next := fs[i+1]; {
			case f == next:
				errs = append(errs, field.Duplicate(p.Index(i+1), next))
			case f > next:
				errs = append(errs, field.Invalid(p.Index(i+1), next, "list must be sorted alphabetically"))
			}
		}
	}
	return errs
}

// isDeclaredFeatureName matches ^[A-Z][a-zA-Z0-9]*(/[a-zA-Z][a-zA-Z0-9]*)*$.
func isDeclaredFeatureName(s string) bool {
	for i, seg := range strings.Split(s, "/") {
		if seg == "" {
			return false
		}
		for j, r := range seg {
			upper, lower, digit := r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z', r >= '0' && r <= '9'
			switch {
			case j == 0 && i == 0 && !upper:
				return false
			case j == 0 && !upper && !lower:
				return false
			case !upper && !lower && !digit:
				return false
			}
		}
	}
	return true
}

// validateNodeUpdateAll is the main update: kube runs create rules and the
// update rules.
func validateNodeUpdateAll(n, old *corev1.Node) field.ErrorList {
	return append(validateNode(n), validateNodeUpdate(n, old)...)
}

func validateNodeUpdate(n, old *corev1.Node) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &old.ObjectMeta, metadataPath)
	errs = append(errs, validateNodeResources(n)...)
	errs = append(errs, validateDeclaredFeatures(n.Status.DeclaredFeatures, field.NewPath("status", "declaredFeatures"))...)
	addrs := map[corev1.NodeAddress]bool{}
	for i, a := range n.Status.Addresses {
		if addrs[a] {
			errs = append(errs, field.Duplicate(field.NewPath("status", "addresses").Index(i), internal{a}))
		}
		addrs[a] = true
	}
	// A pod CIDR may be assigned once, never changed.
	if len(old.Spec.PodCIDRs) > 0 {
		msg := "node updates may not change podCIDR except from \"\" to valid"
		if len(old.Spec.PodCIDRs) != len(n.Spec.PodCIDRs) {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "podCIDRs"), msg))
		} else {
			for i, c := range old.Spec.PodCIDRs {
				if c != n.Spec.PodCIDRs[i] {
					errs = append(errs, field.Forbidden(field.NewPath("spec", "podCIDRs"), msg))
				}
			}
		}
	}
	if old.Spec.ProviderID != "" && n.Spec.ProviderID != "" && old.Spec.ProviderID != n.Spec.ProviderID {
		errs = append(errs, field.Invalid(field.NewPath("spec", "providerID"), nil, "field cannot be modified once set"))
	}
	if old.Spec.ProviderID != "" && n.Spec.ProviderID == "" {
		errs = append(errs, field.Invalid(field.NewPath("spec", "providerID"), nil, "field cannot be cleared once set"))
	}
	if len(n.Spec.Taints) > 0 {
		errs = append(errs, validateNodeTaints(n.Spec.Taints, metadataPath.Child("taints"))...)
	}
	if n.Spec.DoNotUseExternalID != old.Spec.DoNotUseExternalID {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "externalID"), "may not be updated"))
	}
	return errs
}

// --- Namespace ---

func validateNamespace(ns *corev1.Namespace) field.ErrorList {
	errs := objectMeta(&ns.ObjectMeta, false, apimachineryvalidation.ValidateNamespaceName, metadataPath)
	for _, f := range ns.Spec.Finalizers {
		// kube does not index this path.
		p := field.NewPath("spec", "finalizers")
		errs = append(errs, apimachineryvalidation.ValidateFinalizerName(string(f), p)...)
		errs = append(errs, kubeFinalizerName(string(f), p)...)
	}
	return errs
}

func validateNamespaceUpdate(ns, old *corev1.Namespace) field.ErrorList {
	return append(validateNamespace(ns), objectMetaUpdate(&ns.ObjectMeta, &old.ObjectMeta, metadataPath)...)
}

func validateNamespaceStatusUpdate(ns, old *corev1.Namespace) field.ErrorList {
	errs := objectMetaUpdate(&ns.ObjectMeta, &old.ObjectMeta, metadataPath)
	p := field.NewPath("status", "Phase")
	if ns.DeletionTimestamp.IsZero() {
		if ns.Status.Phase != corev1.NamespaceActive {
			errs = append(errs, field.Invalid(p, ns.Status.Phase, "may only be 'Active' if `deletionTimestamp` is empty"))
		}
	} else if ns.Status.Phase != corev1.NamespaceTerminating {
		errs = append(errs, field.Invalid(p, ns.Status.Phase, "may only be 'Terminating' if `deletionTimestamp` is not empty"))
	}
	return errs
}

// --- LimitRange ---

var standardLimitTypes = sets.New(corev1.LimitTypePod, corev1.LimitTypeContainer, corev1.LimitTypePersistentVolumeClaim)

func validateLimitRange(l *corev1.LimitRange) field.ErrorList {
	errs := objectMeta(&l.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	types := sets.New[corev1.LimitType]()
	lp := field.NewPath("spec", "limits")
	for i := range l.Spec.Limits {
		ip := lp.Index(i)
		item := &l.Spec.Limits[i]
		errs = append(errs, validateLimitType(item.Type, ip.Child("type"))...)
		if types.Has(item.Type) {
			errs = append(errs, field.Duplicate(ip.Child("type"), item.Type))
		}
		types.Insert(item.Type)
		nameFn := validateResourceName
		if item.Type == corev1.LimitTypePod || item.Type == corev1.LimitTypeContainer {
			nameFn = containerResourceName
		}
		keys := sets.New[corev1.ResourceName]()
		check := func(list corev1.ResourceList, name string) {
			for _, k := range sortedKeys(list) {
				errs = append(errs, nameFn(k, ip.Child(name).Key(string(k)))...)
				keys.Insert(k)
			}
		}
		check(item.Max, "max")
		check(item.Min, "min")
		if item.Type == corev1.LimitTypePod {
			if len(item.Default) > 0 {
				errs = append(errs, field.Forbidden(ip.Child("default"), "may not be specified when `type` is 'Pod'"))
			}
			if len(item.DefaultRequest) > 0 {
				errs = append(errs, field.Forbidden(ip.Child("defaultRequest"), "may not be specified when `type` is 'Pod'"))
			}
		} else {
			check(item.Default, "default")
			check(item.DefaultRequest, "defaultRequest")
		}
		if item.Type == corev1.LimitTypePersistentVolumeClaim {
			_, minOK := item.Min[corev1.ResourceStorage]
			_, maxOK := item.Max[corev1.ResourceStorage]
			if !minOK && !maxOK {
				errs = append(errs, field.Required(ip.Child("limits"), "either minimum or maximum storage value is required, but neither was provided"))
			}
		}
		check(item.MaxLimitRequestRatio, "maxLimitRequestRatio")
		for _, k := range sets.List(keys) {
			errs = append(errs, validateLimitBounds(item, k, ip)...)
		}
	}
	return errs
}

func validateLimitType(t corev1.LimitType, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(t)) {
		errs = append(errs, field.Invalid(p, t, msg))
	}
	if len(errs) == 0 && !strings.Contains(string(t), "/") && !standardLimitTypes.Has(t) {
		errs = append(errs, field.Invalid(p, t, "must be a standard limit type or fully qualified"))
	}
	return errs
}

func validateLimitBounds(item *corev1.LimitRangeItem, k corev1.ResourceName, ip *field.Path) field.ErrorList {
	var errs field.ErrorList
	minQ, minOK := item.Min[k]
	maxQ, maxOK := item.Max[k]
	defQ, defOK := item.Default[k]
	reqQ, reqOK := item.DefaultRequest[k]
	ratio, ratioOK := item.MaxLimitRequestRatio[k]
	key := string(k)
	if item.Type == corev1.LimitTypePod {
		defOK, reqOK = false, false
	}
	if minOK && maxOK && minQ.Cmp(maxQ) > 0 {
		errs = append(errs, field.Invalid(ip.Child("min").Key(key), minQ, fmt.Sprintf("min value %s is greater than max value %s", minQ.String(), maxQ.String())))
	}
	if reqOK && minOK && minQ.Cmp(reqQ) > 0 {
		errs = append(errs, field.Invalid(ip.Child("defaultRequest").Key(key), reqQ, fmt.Sprintf("min value %s is greater than default request value %s", minQ.String(), reqQ.String())))
	}
	if reqOK && maxOK && reqQ.Cmp(maxQ) > 0 {
		errs = append(errs, field.Invalid(ip.Child("defaultRequest").Key(key), reqQ, fmt.Sprintf("default request value %s is greater than max value %s", reqQ.String(), maxQ.String())))
	}
	if reqOK && defOK && reqQ.Cmp(defQ) > 0 {
		errs = append(errs, field.Invalid(ip.Child("defaultRequest").Key(key), reqQ, fmt.Sprintf("default request value %s is greater than default limit value %s", reqQ.String(), defQ.String())))
	}
	if defOK && minOK && minQ.Cmp(defQ) > 0 {
		errs = append(errs, field.Invalid(ip.Child("default").Key(key), minQ, fmt.Sprintf("min value %s is greater than default value %s", minQ.String(), defQ.String())))
	}
	if defOK && maxOK && defQ.Cmp(maxQ) > 0 {
		errs = append(errs, field.Invalid(ip.Child("default").Key(key), maxQ, fmt.Sprintf("default value %s is greater than max value %s", defQ.String(), maxQ.String())))
	}
	if ratioOK && ratio.Cmp(*resource.NewQuantity(1, resource.DecimalSI)) < 0 {
		errs = append(errs, field.Invalid(ip.Child("maxLimitRequestRatio").Key(key), ratio, fmt.Sprintf("ratio %s is less than 1", ratio.String())))
	}
	if ratioOK && minOK && maxOK {
		r, lo, hi := float64(ratio.Value()), minQ.Value(), maxQ.Value()
		if ratio.Value() < resource.MaxMilliValue && lo < resource.MaxMilliValue && hi < resource.MaxMilliValue {
			r, lo, hi = float64(ratio.MilliValue())/1000, minQ.MilliValue(), maxQ.MilliValue()
		}
		if limit := float64(hi) / float64(lo); r > limit {
			errs = append(errs, field.Invalid(ip.Child("maxLimitRequestRatio").Key(key), ratio, fmt.Sprintf("ratio %s is greater than max/min = %f", ratio.String(), limit)))
		}
	}
	if !isOvercommitAllowed(k) && defOK && reqOK && defQ.Cmp(reqQ) != 0 {
		errs = append(errs, field.Invalid(ip.Child("defaultRequest").Key(key), reqQ, fmt.Sprintf("default value %s must equal to defaultRequest value %s in %s", defQ.String(), reqQ.String(), k)))
	}
	return errs
}

// --- ResourceQuota ---

var (
	standardQuotaResources = sets.New(corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
		corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsStorage, corev1.ResourceRequestsEphemeralStorage,
		corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
		corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
		corev1.ResourceSecrets, corev1.ResourcePersistentVolumeClaims, corev1.ResourceConfigMaps,
		corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers)
	standardQuotaScopes = sets.New(corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating,
		corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopePriorityClass,
		corev1.ResourceQuotaScopeVolumeAttributesClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity)
	podComputeQuota = sets.New(corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory,
		corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory)
	pvcQuota = sets.New(corev1.ResourcePersistentVolumeClaims, corev1.ResourceRequestsStorage)
)

func isStandardQuotaResource(n corev1.ResourceName) bool {
	return standardQuotaResources.Has(n) || isQuotaHugePages(n)
}

func scopeFitsResource(s corev1.ResourceQuotaScope, n corev1.ResourceName) bool {
	switch s {
	case corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeNotBestEffort,
		corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return n == corev1.ResourcePods || podComputeQuota.Has(n)
	case corev1.ResourceQuotaScopeBestEffort:
		return n == corev1.ResourcePods
	case corev1.ResourceQuotaScopeVolumeAttributesClass:
		return pvcQuota.Has(n)
	}
	return true
}

func quotaResourceName(n corev1.ResourceName, p *field.Path) field.ErrorList {
	errs := validateResourceName(n, p)
	if !strings.Contains(string(n), "/") && !isStandardQuotaResource(n) {
		errs = append(errs, field.Invalid(p, n, "must be a standard resource for quota"))
	}
	return errs
}

func validateQuotaList(list corev1.ResourceList, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range sortedKeys(list) {
		errs = append(errs, quotaResourceName(k, p.Key(string(k)))...)
		errs = append(errs, validateResourceQuantityValue(k, list[k], p.Key(string(k)))...)
	}
	return errs
}

func validateResourceQuota(q *corev1.ResourceQuota) field.ErrorList {
	errs := objectMeta(&q.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	errs = append(errs, validateQuotaSpec(&q.Spec, field.NewPath("spec"))...)
	errs = append(errs, validateQuotaList(q.Status.Hard, field.NewPath("status", "hard"))...)
	return append(errs, validateQuotaList(q.Status.Used, field.NewPath("status", "used"))...)
}

func validateQuotaSpec(s *corev1.ResourceQuotaSpec, p *field.Path) field.ErrorList {
	errs := validateQuotaList(s.Hard, p.Child("hard"))
	hard := sortedKeys(s.Hard)
	conflicting := [][2]corev1.ResourceQuotaScope{
		{corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort},
		{corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating},
	}
	if len(s.Scopes) > 0 {
		sp := p.Child("scopes")
		scopes := sets.New[corev1.ResourceQuotaScope]()
		for _, sc := range s.Scopes {
			if !standardQuotaScopes.Has(sc) {
				errs = append(errs, field.Invalid(sp, s.Scopes, "unsupported scope"))
			}
			for _, k := range hard {
				if isStandardQuotaResource(k) && !scopeFitsResource(sc, k) {
					errs = append(errs, field.Invalid(sp, s.Scopes, "unsupported scope applied to resource"))
				}
			}
			scopes.Insert(sc)
		}
		for _, pair := range conflicting {
			if scopes.HasAll(pair[0], pair[1]) {
				errs = append(errs, field.Invalid(sp, s.Scopes, "conflicting scopes"))
			}
		}
	}
	if s.ScopeSelector != nil {
		mp := p.Child("scopeSelector", "matchExpressions")
		scopes := sets.New[corev1.ResourceQuotaScope]()
		for _, r := range s.ScopeSelector.MatchExpressions {
			if !standardQuotaScopes.Has(r.ScopeName) {
				errs = append(errs, field.Invalid(mp.Child("scopeName"), r.ScopeName, "unsupported scope"))
			}
			for _, k := range hard {
				if isStandardQuotaResource(k) && !scopeFitsResource(r.ScopeName, k) {
					errs = append(errs, field.Invalid(mp, internal{s.ScopeSelector}, "unsupported scope applied to resource"))
				}
			}
			switch r.ScopeName {
			case corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopeTerminating,
				corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
				if r.Operator != corev1.ScopeSelectorOpExists {
					errs = append(errs, field.Invalid(mp.Child("operator"), r.Operator,
						"must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"))
				}
			}
			switch r.Operator {
			case corev1.ScopeSelectorOpIn, corev1.ScopeSelectorOpNotIn:
				if len(r.Values) == 0 {
					errs = append(errs, field.Required(mp.Child("values"), "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"))
				}
			case corev1.ScopeSelectorOpExists, corev1.ScopeSelectorOpDoesNotExist:
				if len(r.Values) != 0 {
					errs = append(errs, field.Invalid(mp.Child("values"), r.Values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"))
				}
			default:
				errs = append(errs, field.Invalid(mp.Child("operator"), r.Operator, "not a valid selector operator"))
			}
			scopes.Insert(r.ScopeName)
		}
		for _, pair := range conflicting {
			if scopes.HasAll(pair[0], pair[1]) {
				errs = append(errs, field.Invalid(mp, s.Scopes, "conflicting scopes"))
			}
		}
	}
	return errs
}

func validateResourceQuotaUpdate(q, old *corev1.ResourceQuota) field.ErrorList {
	errs := objectMetaUpdate(&q.ObjectMeta, &old.ObjectMeta, metadataPath)
	errs = append(errs, validateQuotaSpec(&q.Spec, field.NewPath("spec"))...)
	oldScopes, newScopes := sets.New[corev1.ResourceQuotaScope](old.Spec.Scopes...), sets.New[corev1.ResourceQuotaScope](q.Spec.Scopes...)
	if !oldScopes.Equal(newScopes) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "scopes"), q.Spec.Scopes, apimachineryvalidation.FieldImmutableErrorMsg))
	}
	return errs
}

func validateResourceQuotaStatusUpdate(q, old *corev1.ResourceQuota) field.ErrorList {
	errs := objectMetaUpdate(&q.ObjectMeta, &old.ObjectMeta, metadataPath)
	if q.ResourceVersion == "" {
		errs = append(errs, field.Required(field.NewPath("resourceVersion"), ""))
	}
	errs = append(errs, validateQuotaList(q.Status.Hard, field.NewPath("status", "hard"))...)
	return append(errs, validateQuotaList(q.Status.Used, field.NewPath("status", "used"))...)
}

// --- PersistentVolumeClaim ---

var (
	supportedAccessModes = sets.New(corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOncePod)
	supportedVolumeModes = sets.New(corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem)
)

func validatePVC(c *corev1.PersistentVolumeClaim) field.ErrorList {
	errs := objectMeta(&c.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	return append(errs, validatePVCSpec(&c.Spec, field.NewPath("spec"))...)
}

func validatePVCSpec(s *corev1.PersistentVolumeClaimSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(s.AccessModes) == 0 {
		errs = append(errs, field.Required(p.Child("accessModes"), "at least 1 access mode is required"))
	}
	if s.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(s.Selector, metav1validation.LabelSelectorValidationOptions{}, p.Child("selector"))...)
	}
	rwop, other := false, false
	for _, m := range s.AccessModes {
		if !supportedAccessModes.Has(m) {
			errs = append(errs, field.NotSupported(p.Child("accessModes"), m, sets.List(supportedAccessModes)))
		}
		if m == corev1.ReadWriteOncePod {
			rwop = true
		} else if supportedAccessModes.Has(m) {
			other = true
		}
	}
	if rwop && other {
		errs = append(errs, field.Forbidden(p.Child("accessModes"), "may not use ReadWriteOncePod with other access modes"))
	}
	// kube keys this on resources, not resources.requests.
	sp := p.Child("resources").Key(string(corev1.ResourceStorage))
	if q, ok := s.Resources.Requests[corev1.ResourceStorage]; !ok {
		errs = append(errs, field.Required(sp, ""))
	} else if q.Sign() <= 0 {
		errs = append(errs, field.Invalid(sp, q.String(), isNotPositiveErrorMsg))
	} else {
		errs = append(errs, validateResourceQuantityValue(corev1.ResourceStorage, q, sp)...)
	}
	if s.StorageClassName != nil && *s.StorageClassName != "" {
		errs = append(errs, nameErrs(apimachineryvalidation.NameIsDNSSubdomain, *s.StorageClassName, p.Child("storageClassName"))...)
	}
	if s.VolumeMode != nil && !supportedVolumeModes.Has(*s.VolumeMode) {
		errs = append(errs, field.NotSupported(p.Child("volumeMode"), *s.VolumeMode, sets.List(supportedVolumeModes)))
	}
	if d := s.DataSource; d != nil {
		errs = append(errs, validateDataSource(d.Name, d.Kind, d.APIGroup, nil, p.Child("dataSource"))...)
	}
	if d := s.DataSourceRef; d != nil {
		errs = append(errs, validateDataSource(d.Name, d.Kind, d.APIGroup, d.Namespace, p.Child("dataSourceRef"))...)
	}
	if s.DataSourceRef != nil && s.DataSourceRef.Namespace != nil && *s.DataSourceRef.Namespace != "" {
		if s.DataSource != nil {
			errs = append(errs, field.Invalid(p, p.Child("dataSource"), "may not be specified when dataSourceRef.namespace is specified"))
		}
	} else if s.DataSource != nil && s.DataSourceRef != nil {
		if !apiequality.Semantic.DeepEqual(s.DataSource.APIGroup, s.DataSourceRef.APIGroup) || s.DataSource.Kind != s.DataSourceRef.Kind || s.DataSource.Name != s.DataSourceRef.Name {
			errs = append(errs, field.Invalid(p, p.Child("dataSource"), "must match dataSourceRef"))
		}
	}
	if s.VolumeAttributesClassName != nil && *s.VolumeAttributesClassName != "" {
		errs = append(errs, nameErrs(apimachineryvalidation.NameIsDNSSubdomain, *s.VolumeAttributesClassName, p.Child("volumeAttributesClassName"))...)
	}
	return errs
}

func validateDataSource(name, kind string, apiGroup, namespace *string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	if kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	}
	group := ""
	if apiGroup != nil {
		group = *apiGroup
	}
	if group == "" && kind != "PersistentVolumeClaim" {
		errs = append(errs, field.Invalid(p, kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup"))
	}
	if group != "" {
		for _, msg := range validation.IsDNS1123Subdomain(group) {
			errs = append(errs, field.Invalid(p.Child("apiGroup"), group, msg))
		}
	}
	if namespace != nil && *namespace != "" {
		errs = append(errs, nameErrs(apimachineryvalidation.ValidateNamespaceName, *namespace, p.Child("namespace"))...)
	}
	return errs
}

const betaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class"

// validatePVCUpdate keeps the spec immutable except for volumeName once,
// the storage request of bound claims, and the storage class upgrade paths.
func validatePVCUpdate(c, old *corev1.PersistentVolumeClaim) field.ErrorList {
	errs := objectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta, metadataPath)
	errs = append(errs, validatePVC(c)...)
	newSpec, oldSpec := c.Spec.DeepCopy(), old.Spec.DeepCopy()
	if old.Spec.VolumeName == "" {
		oldSpec.VolumeName = newSpec.VolumeName
	}
	oldSC, oldAnn := old.Annotations[betaStorageClassAnnotation]
	newAnnSC, newAnn := c.Annotations[betaStorageClassAnnotation]
	if oldAnn && old.Spec.StorageClassName == nil && c.Spec.StorageClassName != nil && *c.Spec.StorageClassName == oldSC && (!newAnn || newAnnSC == oldSC) {
		newSpec.StorageClassName = nil
	} else {
		if newAnnSC != oldSC {
			errs = append(errs, field.Invalid(metadataPath.Child("annotations", betaStorageClassAnnotation), newAnnSC, apimachineryvalidation.FieldImmutableErrorMsg))
		}
		if c.Spec.StorageClassName != nil && old.Spec.StorageClassName == nil && (!oldAnn || *c.Spec.StorageClassName == oldSC) {
			newSpec.StorageClassName = oldSpec.StorageClassName
		}
	}
	if c.Status.Phase == corev1.ClaimBound {
		if newSpec.Resources.Requests != nil {
			newSpec.Resources.Requests[corev1.ResourceStorage] = old.Spec.Resources.Requests[corev1.ResourceStorage]
		}
		newSpec.VolumeAttributesClassName = oldSpec.VolumeAttributesClassName
	}
	if !apiequality.Semantic.DeepEqual(*newSpec, *oldSpec) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"), fmt.Sprintf("spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n%v", diff.Diff(internal{*oldSpec}, internal{*newSpec}))))
	}
	oldSize, newSize := old.Spec.Resources.Requests[corev1.ResourceStorage], c.Spec.Resources.Requests[corev1.ResourceStorage]
	// RecoverVolumeExpansionFailure is on: shrinking is allowed down to the
	// recorded capacity.
	if newSize.Cmp(oldSize) < 0 {
		status := old.Status.Capacity[corev1.ResourceStorage]
		if newSize.Cmp(status) <= 0 {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "resources", "requests", "storage"), "field can not be less than status.capacity"))
		}
	}
	errs = append(errs, apimachineryvalidation.ValidateImmutableField(c.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	if !apiequality.Semantic.DeepEqual(old.Spec.VolumeAttributesClassName, c.Spec.VolumeAttributesClassName) && old.Status.CurrentVolumeAttributesClassName != nil {
		vp := field.NewPath("spec", "volumeAttributesClassName")
		if c.Spec.VolumeAttributesClassName == nil {
			errs = append(errs, field.Forbidden(vp, "update to nil is forbidden when status.currentVolumeAttributesClassName is not nil"))
		} else if *c.Spec.VolumeAttributesClassName == "" {
			errs = append(errs, field.Forbidden(vp, "update to empty string is forbidden when status.currentVolumeAttributesClassName is not nil"))
		}
	}
	return errs
}

func validatePVCStatusUpdate(c, old *corev1.PersistentVolumeClaim) field.ErrorList {
	errs := objectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta, metadataPath)
	if c.ResourceVersion == "" {
		errs = append(errs, field.Required(field.NewPath("resourceVersion"), ""))
	}
	if len(c.Spec.AccessModes) == 0 {
		errs = append(errs, field.Required(field.NewPath("Spec", "accessModes"), ""))
	}
	for _, k := range sortedKeys(c.Status.Capacity) {
		if q := c.Status.Capacity[k]; q.Value() < 0 {
			errs = append(errs, field.Invalid(field.NewPath("status", "capacity").Key(string(k)), q.Value(), "must be a valid resource quantity"))
		}
	}
	return errs
}

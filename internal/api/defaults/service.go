package defaults

import (
	"net"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func service(s *corev1.Service) {
	spec := &s.Spec
	if spec.SessionAffinity == "" {
		spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	switch spec.SessionAffinity {
	case corev1.ServiceAffinityNone:
		// A config only means something for ClientIP affinity.
		spec.SessionAffinityConfig = nil
	case corev1.ServiceAffinityClientIP:
		if c := spec.SessionAffinityConfig; c == nil || c.ClientIP == nil || c.ClientIP.TimeoutSeconds == nil {
			spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{
				ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To(corev1.DefaultClientIPServiceAffinitySeconds)},
			}
		}
	}
	if spec.Type == "" {
		spec.Type = corev1.ServiceTypeClusterIP
	}
	for i := range spec.Ports {
		p := &spec.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		// An unset target port (0 or "") is the service port.
		if p.TargetPort == intstr.FromInt32(0) || p.TargetPort == intstr.FromString("") {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
	if externallyAccessible(s) && spec.ExternalTrafficPolicy == "" {
		spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	if spec.InternalTrafficPolicy == nil {
		switch spec.Type {
		case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
			spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyCluster)
		}
	}
	if spec.Type == corev1.ServiceTypeLoadBalancer {
		if spec.AllocateLoadBalancerNodePorts == nil {
			spec.AllocateLoadBalancerNodePorts = ptr.To(true)
		}
		for i := range s.Status.LoadBalancer.Ingress {
			if ing := &s.Status.LoadBalancer.Ingress[i]; ing.IP != "" && ing.IPMode == nil {
				ing.IPMode = ptr.To(corev1.LoadBalancerIPModeVIP)
			}
		}
	}
	serviceIPFamilies(s)
}

// externallyAccessible is true for services reachable from outside the
// cluster: node ports, load balancers and ClusterIP with external IPs.
func externallyAccessible(s *corev1.Service) bool {
	switch s.Spec.Type {
	case corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort:
		return true
	case corev1.ServiceTypeClusterIP:
		return len(s.Spec.ExternalIPs) > 0
	}
	return false
}

// serviceIPFamilies sets clusterIPs, ipFamilyPolicy and ipFamilies the way
// kube's service storage does on create, before it allocates addresses,
// on a single-stack IPv4 cluster (kpipe's service network). It is not
// scheme defaulting in kube, but every stored service carries these
// fields, so they are filled here with the rest.
//
// Only unset fields are filled. On an update kube would take an unset
// ipFamilyPolicy from the old object instead; for kpipe's single-stack
// services that is SingleStack too, except for a selectorless headless
// service, whose policy a client that drops it would see reset.
func serviceIPFamilies(s *corev1.Service) {
	spec := &s.Spec
	if spec.Type == corev1.ServiceTypeExternalName {
		return
	}
	// Old clients send only the singular clusterIP.
	if spec.ClusterIP != "" && len(spec.ClusterIPs) == 0 {
		spec.ClusterIPs = []string{spec.ClusterIP}
	}
	// Headless without a selector: its endpoints are managed by hand and
	// may be of either family, so kube requires both.
	selectorlessHeadless := spec.ClusterIP == corev1.ClusterIPNone && len(spec.Selector) == 0
	if spec.IPFamilyPolicy == nil {
		if selectorlessHeadless {
			spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyRequireDualStack)
		} else {
			spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicySingleStack)
		}
	}
	// Families the user left out follow the cluster IPs given.
	for i, ip := range spec.ClusterIPs {
		if ip == corev1.ClusterIPNone {
			break
		}
		if i < len(spec.IPFamilies) {
			continue
		}
		fam, ok := ipFamilyOf(ip)
		if !ok {
			break // validation rejects the address
		}
		spec.IPFamilies = append(spec.IPFamilies, fam)
	}
	if len(spec.IPFamilies) == 0 {
		spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	}
	if selectorlessHeadless && len(spec.IPFamilies) == 1 && *spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack {
		spec.IPFamilies = append(spec.IPFamilies, otherIPFamily(spec.IPFamilies[0]))
	}
}

// ipFamilyOf classifies an address as kube does: one with an IPv4 form
// (including IPv4-mapped IPv6) is IPv4.
func ipFamilyOf(ip string) (corev1.IPFamily, bool) {
	a := net.ParseIP(ip)
	switch {
	case a == nil:
		return "", false
	case a.To4() != nil:
		return corev1.IPv4Protocol, true
	default:
		return corev1.IPv6Protocol, true
	}
}

func otherIPFamily(f corev1.IPFamily) corev1.IPFamily {
	if f == corev1.IPv4Protocol {
		return corev1.IPv6Protocol
	}
	return corev1.IPv4Protocol
}

package api

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kpipe/kpipe/internal/api/servicealloc"
)

// updateService keeps what a service was allocated when the client left
// it out, and drops what the new type no longer uses, as kube's service
// storage and strategy do before validating an update.
func updateService(obj, oldObj runtime.Object) {
	s, old := obj.(*corev1.Service), oldObj.(*corev1.Service)
	patchAllocated(s, old)
	dropTypeDependent(s, old)
}

func patchAllocated(s, old *corev1.Service) {
	if servicealloc.NeedsClusterIP(old) && servicealloc.NeedsClusterIP(s) {
		if s.Spec.ClusterIP == "" {
			s.Spec.ClusterIP = old.Spec.ClusterIP
		}
		if len(s.Spec.ClusterIPs) == 0 && len(old.Spec.ClusterIPs) > 0 {
			s.Spec.ClusterIPs = old.Spec.ClusterIPs
		}
	}
	if servicealloc.NeedsNodePorts(old) && servicealloc.NeedsNodePorts(s) {
		used := map[int32]bool{}
		for _, p := range s.Spec.Ports {
			if p.NodePort != 0 {
				used[p.NodePort] = true
			}
		}
		byName := map[string]int32{}
		for _, p := range old.Spec.Ports {
			byName[p.Name] = p.NodePort
		}
		for i := range s.Spec.Ports {
			p := &s.Spec.Ports[i]
			if np := byName[p.Name]; p.NodePort == 0 && !used[np] {
				p.NodePort = np
			}
		}
	}
	if servicealloc.NeedsHealthCheckNodePort(old) && servicealloc.NeedsHealthCheckNodePort(s) && s.Spec.HealthCheckNodePort == 0 {
		s.Spec.HealthCheckNodePort = old.Spec.HealthCheckNodePort
	}
}

func dropTypeDependent(s, old *corev1.Service) {
	if servicealloc.NeedsClusterIP(old) && !servicealloc.NeedsClusterIP(s) && s.Spec.Type == corev1.ServiceTypeExternalName {
		if s.Spec.ClusterIP == old.Spec.ClusterIP && equalStrings(s.Spec.ClusterIPs, old.Spec.ClusterIPs) {
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil
		}
		s.Spec.IPFamilies, s.Spec.IPFamilyPolicy = nil, nil
	}
	if servicealloc.NeedsNodePorts(old) && !servicealloc.NeedsNodePorts(s) && sameNodePorts(s, old) {
		for i := range s.Spec.Ports {
			s.Spec.Ports[i].NodePort = 0
		}
	}
	if servicealloc.NeedsHealthCheckNodePort(old) && !servicealloc.NeedsHealthCheckNodePort(s) && s.Spec.HealthCheckNodePort == old.Spec.HealthCheckNodePort {
		s.Spec.HealthCheckNodePort = 0
	}
	if old.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.Type != corev1.ServiceTypeLoadBalancer {
		if a, b := old.Spec.AllocateLoadBalancerNodePorts, s.Spec.AllocateLoadBalancerNodePorts; a != nil && b != nil && *a == *b {
			s.Spec.AllocateLoadBalancerNodePorts = nil
		}
		if a, b := old.Spec.LoadBalancerClass, s.Spec.LoadBalancerClass; a == nil && b == nil || a != nil && b != nil && *a == *b {
			s.Spec.LoadBalancerClass = nil
		}
	}
	if externallyAccessible(old) && !externallyAccessible(s) && s.Spec.ExternalTrafficPolicy == old.Spec.ExternalTrafficPolicy {
		s.Spec.ExternalTrafficPolicy = ""
	}
	if s.Spec.Type != corev1.ServiceTypeLoadBalancer {
		s.Status.LoadBalancer = corev1.LoadBalancerStatus{}
	}
}

// externallyAccessible reports a service that takes traffic from outside
// the cluster, which is what externalTrafficPolicy applies to.
func externallyAccessible(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer || s.Spec.Type == corev1.ServiceTypeNodePort ||
		(s.Spec.Type == corev1.ServiceTypeClusterIP && len(s.Spec.ExternalIPs) > 0)
}

func sameNodePorts(s, old *corev1.Service) bool {
	oldPorts := map[int32]bool{}
	for _, p := range old.Spec.Ports {
		oldPorts[p.NodePort] = true
	}
	for _, p := range s.Spec.Ports {
		if p.NodePort != 0 && !oldPorts[p.NodePort] {
			return false
		}
	}
	return true
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

package defaults

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// networkPolicy is kube's networking/v1 SetObjectDefaults_NetworkPolicy:
// policyTypes Ingress, plus Egress when there are egress rules, and TCP
// on every port without a protocol.
func networkPolicy(np *networkingv1.NetworkPolicy) {
	if len(np.Spec.PolicyTypes) == 0 {
		np.Spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		if len(np.Spec.Egress) != 0 {
			np.Spec.PolicyTypes = append(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
		}
	}
	for i := range np.Spec.Ingress {
		networkPolicyPorts(np.Spec.Ingress[i].Ports)
	}
	for i := range np.Spec.Egress {
		networkPolicyPorts(np.Spec.Egress[i].Ports)
	}
}

func networkPolicyPorts(ports []networkingv1.NetworkPolicyPort) {
	for i := range ports {
		if ports[i].Protocol == nil {
			tcp := corev1.ProtocolTCP
			ports[i].Protocol = &tcp
		}
	}
}

// ingressClass scopes parameters to the cluster when they name no scope.
// Ingresses have no defaults in networking/v1: not even pathType.
func ingressClass(ic *networkingv1.IngressClass) {
	if p := ic.Spec.Parameters; p != nil && p.Scope == nil {
		scope := networkingv1.IngressClassParametersReferenceScopeCluster
		p.Scope = &scope
	}
}

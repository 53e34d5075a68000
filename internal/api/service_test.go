package api

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestUpdateServiceDropsTypeDependentFields(t *testing.T) {
	nodePort := func() *corev1.Service {
		return &corev1.Service{Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeNodePort, ClusterIP: "10.96.0.9", ClusterIPs: []string{"10.96.0.9"},
			ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyCluster,
			Ports:                 []corev1.ServicePort{{Port: 80, NodePort: 30080}},
		}}
	}
	loadBalancer := func() *corev1.Service {
		s := nodePort()
		s.Spec.Type = corev1.ServiceTypeLoadBalancer
		s.Spec.AllocateLoadBalancerNodePorts = ptr.To(true)
		s.Spec.LoadBalancerClass = ptr.To("example.com/lb")
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.1"}}
		return s
	}
	toClusterIP := func(s *corev1.Service) *corev1.Service {
		s.Spec.Type = corev1.ServiceTypeClusterIP
		return s
	}
	for _, tc := range []struct {
		name     string
		old, s   *corev1.Service
		wantSpec corev1.ServiceSpec
	}{
		{
			name: "NodePort to ClusterIP drops node ports and externalTrafficPolicy",
			old:  nodePort(), s: toClusterIP(nodePort()),
			wantSpec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.9", ClusterIPs: []string{"10.96.0.9"}, Ports: []corev1.ServicePort{{Port: 80}}},
		},
		{
			name: "a changed externalTrafficPolicy is left for validation",
			old:  nodePort(), s: func() *corev1.Service {
				s := toClusterIP(nodePort())
				s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
				return s
			}(),
			wantSpec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.9", ClusterIPs: []string{"10.96.0.9"}, Ports: []corev1.ServicePort{{Port: 80}},
				ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal},
		},
		{
			name: "LoadBalancer to ClusterIP drops the load balancer's fields and status",
			old:  loadBalancer(), s: toClusterIP(loadBalancer()),
			wantSpec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.9", ClusterIPs: []string{"10.96.0.9"}, Ports: []corev1.ServicePort{{Port: 80}}},
		},
		{
			name: "LoadBalancer to NodePort keeps node ports and externalTrafficPolicy",
			old:  loadBalancer(), s: func() *corev1.Service {
				s := loadBalancer()
				s.Spec.Type = corev1.ServiceTypeNodePort
				return s
			}(),
			wantSpec: nodePort().Spec,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			updateService(tc.s, tc.old)
			if !reflect.DeepEqual(tc.s.Spec, tc.wantSpec) {
				t.Errorf("spec\n%+v\nwant\n%+v", tc.s.Spec, tc.wantSpec)
			}
			if len(tc.s.Status.LoadBalancer.Ingress) != 0 {
				t.Errorf("load balancer status kept: %v", tc.s.Status.LoadBalancer)
			}
		})
	}
}

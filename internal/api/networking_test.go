package api

import (
	"reflect"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestNetworkingWarnings(t *testing.T) {
	class := "nginx"
	annotated := metav1.ObjectMeta{Annotations: map[string]string{"kubernetes.io/ingress.class": "nginx"}}
	peer := func(cidr string, except ...string) networkingv1.NetworkPolicyPeer {
		return networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: cidr, Except: except}}
	}
	np := &networkingv1.NetworkPolicy{Spec: networkingv1.NetworkPolicySpec{
		Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{peer("10.0.0.0/8"), peer("10.0.0.1/8", "010.1.0.0/16")}}},
		Egress:  []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}, peer("::ffff:10.0.0.0/104")}}},
	}}
	withStatus := &networkingv1.Ingress{Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{
		Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.1"}, {Hostname: "lb.example.com"}, {IP: "2001:DB8::1"}},
	}}}
	for _, tc := range []struct {
		name   string
		create bool
		w      Warner
		obj    runtime.Object
		want   []string
	}{
		{name: "ingress class annotation alone", create: true, w: ingressStrategy{}, obj: &networkingv1.Ingress{ObjectMeta: annotated},
			want: []string{`annotation "kubernetes.io/ingress.class" is deprecated, please use 'spec.ingressClassName' instead`}},
		{name: "ingress class annotation with the field", create: true, w: ingressStrategy{},
			obj: &networkingv1.Ingress{ObjectMeta: annotated, Spec: networkingv1.IngressSpec{IngressClassName: &class}}},
		{name: "ingress update does not warn", w: ingressStrategy{}, obj: &networkingv1.Ingress{ObjectMeta: annotated}},
		{name: "ingress status IPs, at the entry as kube says", w: ingressStatusStrategy{}, obj: withStatus,
			want: []string{`status.loadBalancer.ingress[2]: IPv6 address "2001:DB8::1" should be in RFC 5952 canonical format ("2001:db8::1")`}},
		{name: "network policy CIDRs", create: true, w: networkPolicyStrategy{}, obj: np, want: []string{
			`spec.ingress[0].from[1].ipBlock.cidr: CIDR value "10.0.0.1/8" is ambiguous in this context (should be "10.0.0.0/8" or "10.0.0.1/32"?)`,
			`spec.ingress[0].from[1].ipBlock.except[0]: non-standard CIDR value "010.1.0.0/16" is invalid: use "10.1.0.0/16"`,
			`spec.egress[0].to[1].ipBlock.cidr: non-standard CIDR value "::ffff:10.0.0.0/104" is invalid: use "10.0.0.0/8"`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			if tc.create {
				got = tc.w.WarningsOnCreate(tc.obj)
			} else {
				got = tc.w.WarningsOnUpdate(tc.obj, tc.obj)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("warnings:\n%q\nwant:\n%q", got, tc.want)
			}
		})
	}
}

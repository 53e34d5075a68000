package api

import (
	"fmt"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var networkingV1 = schema.GroupVersion{Group: "networking.k8s.io", Version: "v1"}

// annotationIngressClass is the class annotation spec.ingressClassName
// replaced.
const annotationIngressClass = "kubernetes.io/ingress.class"

// ingressStrategy is kube's Ingress strategy: Generic, with the deprecated
// class annotation's warning on create.
type ingressStrategy struct{ Generic }

var _ Warner = ingressStrategy{}

// WarningsOnCreate implements Warner.
func (ingressStrategy) WarningsOnCreate(obj runtime.Object) []string {
	ing := obj.(*networkingv1.Ingress)
	if _, set := ing.Annotations[annotationIngressClass]; set && ing.Spec.IngressClassName == nil {
		return []string{fmt.Sprintf("annotation %q is deprecated, please use 'spec.ingressClassName' instead", annotationIngressClass)}
	}
	return nil
}

// WarningsOnUpdate implements Warner: kube warns only on create.
func (ingressStrategy) WarningsOnUpdate(_, _ runtime.Object) []string { return nil }

// ingressStatus is /status of ingresses: GenericStatus, with kube's
// warnings on load balancer IPs.
func ingressStatus() *Subresource {
	return &Subresource{Name: "status", Kind: "Ingress", GroupVersion: networkingV1, Verbs: []string{"get", "patch", "update"}, Strategy: ingressStatusStrategy{}}
}

type ingressStatusStrategy struct{ GenericStatus }

var _ Warner = ingressStatusStrategy{}

// WarningsOnCreate implements Warner; /status has no create.
func (ingressStatusStrategy) WarningsOnCreate(runtime.Object) []string { return nil }

// WarningsOnUpdate implements Warner: IPs that are valid but ambiguous.
func (ingressStatusStrategy) WarningsOnUpdate(obj, _ runtime.Object) []string {
	var out []string
	p := field.NewPath("status", "loadBalancer", "ingress")
	for i, in := range obj.(*networkingv1.Ingress).Status.LoadBalancer.Ingress {
		if in.IP != "" {
			out = append(out, utilvalidation.GetWarningsForIP(p.Index(i), in.IP)...)
		}
	}
	return out
}

// networkPolicyStrategy is kube's NetworkPolicy strategy: Generic, with
// warnings on ipBlock CIDRs that are valid but ambiguous.
type networkPolicyStrategy struct{ Generic }

var _ Warner = networkPolicyStrategy{}

// WarningsOnCreate implements Warner.
func (networkPolicyStrategy) WarningsOnCreate(obj runtime.Object) []string {
	return networkPolicyWarnings(obj.(*networkingv1.NetworkPolicy))
}

// WarningsOnUpdate implements Warner.
func (networkPolicyStrategy) WarningsOnUpdate(obj, _ runtime.Object) []string {
	return networkPolicyWarnings(obj.(*networkingv1.NetworkPolicy))
}

func networkPolicyWarnings(np *networkingv1.NetworkPolicy) []string {
	var out []string
	block := func(b *networkingv1.IPBlock, p *field.Path) {
		if b == nil {
			return
		}
		out = append(out, utilvalidation.GetWarningsForCIDR(p.Child("cidr"), b.CIDR)...)
		for k, e := range b.Except {
			out = append(out, utilvalidation.GetWarningsForCIDR(p.Child("except").Index(k), e)...)
		}
	}
	spec := field.NewPath("spec")
	for i, rule := range np.Spec.Ingress {
		for j := range rule.From {
			block(rule.From[j].IPBlock, spec.Child("ingress").Index(i).Child("from").Index(j).Child("ipBlock"))
		}
	}
	for i, rule := range np.Spec.Egress {
		for j := range rule.To {
			block(rule.To[j].IPBlock, spec.Child("egress").Index(i).Child("to").Index(j).Child("ipBlock"))
		}
	}
	return out
}

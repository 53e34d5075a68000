package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func networkingGK(kind string) schema.GroupKind {
	return schema.GroupKind{Group: "networking.k8s.io", Kind: kind}
}

func ingress(mut ...func(*networkingv1.Ingress)) *networkingv1.Ingress {
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{
			Host: "web.example.com",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: ptr(networkingv1.PathTypePrefix),
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}},
			}}}},
		}}},
	}
	for _, m := range mut {
		m(ing)
	}
	return ing
}

func firstPath(ing *networkingv1.Ingress) *networkingv1.HTTPIngressPath {
	return &ing.Spec.Rules[0].HTTP.Paths[0]
}

const (
	ingInvalid   = `Ingress.networking.k8s.io "web" is invalid: `
	wildcardMsg  = `a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	portRangeMsg = `must be between 1 and 65535, inclusive`
)

func TestIngress(t *testing.T) {
	gk := networkingGK("Ingress")
	p0 := ingInvalid + "spec.rules[0].http.paths[0]."
	check(t, []testCase{
		{name: "valid", gk: gk, obj: ingress()},
		{name: "valid wildcard host, TLS and resource backend", gk: gk, obj: ingress(func(i *networkingv1.Ingress) {
			i.Spec.Rules[0].Host = "*.example.com"
			i.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"*.example.com", "web.example.com"}, SecretName: "tls"}}
			firstPath(i).Backend = networkingv1.IngressBackend{Resource: &corev1.TypedLocalObjectReference{APIGroup: ptr("k8s.example.com"), Kind: "StorageBucket", Name: "static"}}
		})},
		{name: "ImplementationSpecific may have no path", gk: gk, obj: ingress(func(i *networkingv1.Ingress) {
			firstPath(i).Path, firstPath(i).PathType = "", ptr(networkingv1.PathTypeImplementationSpecific)
		})},
		{name: "service name is a DNS label, digits first allowed", gk: gk, obj: ingress(func(i *networkingv1.Ingress) { firstPath(i).Backend.Service.Name = "1web" })},
		{name: "no rules nor default backend", gk: gk, obj: ingress(func(i *networkingv1.Ingress) { i.Spec.Rules = nil }),
			want: ingInvalid + "spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"},
		{name: "empty rules", gk: gk, obj: ingress(func(i *networkingv1.Ingress) { i.Spec.Rules = []networkingv1.IngressRule{} }),
			want: ingInvalid + "spec: Invalid value: []: either `defaultBackend` or `rules` must be specified"},
		{name: "relative Prefix path", gk: gk, obj: ingress(func(i *networkingv1.Ingress) { firstPath(i).Path = "api" }),
			want: p0 + `path: Invalid value: "api": must be an absolute path`},
		{name: "Exact path with bad sequences", gk: gk, obj: ingress(func(i *networkingv1.Ingress) {
			firstPath(i).Path, firstPath(i).PathType = "/a//b/..", ptr(networkingv1.PathTypeExact)
		}),
			want: ingInvalid + `[spec.rules[0].http.paths[0].path: Invalid value: "/a//b/..": must not contain '//', spec.rules[0].http.paths[0].path: Invalid value: "/a//b/..": cannot end with '/..']`},
		{name: "ImplementationSpecific relative path", gk: gk, obj: ingress(func(i *networkingv1.Ingress) {
			firstPath(i).Path, firstPath(i).PathType = "x//y", ptr(networkingv1.PathTypeImplementationSpecific)
		}),
			want: p0 + `path: Invalid value: "x//y": must be an absolute path`},
		{name: "pathType missing", gk: gk, obj: ingress(func(i *networkingv1.Ingress) { firstPath(i).PathType = nil }),
			want: p0 + `pathType: Required value: pathType must be specified`},
		{name: "pathType unknown", gk: gk, obj: ingress(func(i *networkingv1.Ingress) { firstPath(i).PathType = ptr(networkingv1.PathType("Regex")) }),
			want: p0 + `pathType: Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix"`},
		{name: "no paths", gk: gk, obj: ingress(func(i *networkingv1.Ingress) { i.Spec.Rules[0].HTTP.Paths = nil }),
			want: ingInvalid + `spec.rules[0].http.paths: Required value`},
		{name: "host is an IP", gk: gk, obj: ingress(func(i *networkingv1.Ingress) { i.Spec.Rules[0].Host = "10.0.0.1" }),
			want: ingInvalid + `spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address`},
		{name: "host not a subdomain", gk: gk, obj: ingress(func(i *networkingv1.Ingress) { i.Spec.Rules[0].Host = "Web.Example.com" }),
			want: ingInvalid + `spec.rules[0].host: Invalid value: "Web.Example.com": ` + subdomainMsg},
		{name: "bad wildcard host", gk: gk, obj: ingress(func(i *networkingv1.Ingress) { i.Spec.Rules[0].Host = "foo.*.example.com" }),
			want: ingInvalid + `spec.rules[0].host: Invalid value: "foo.*.example.com": ` + wildcardMsg},
		{name: "no backend", gk: gk, obj: ingress(func(i *networkingv1.Ingress) { firstPath(i).Backend = networkingv1.IngressBackend{} }),
			want: p0 + `backend: Invalid value: "": resource or service backend is required`},
		{name: "both backends", gk: gk, obj: ingress(func(i *networkingv1.Ingress) {
			firstPath(i).Backend.Resource = &corev1.TypedLocalObjectReference{Kind: "Bucket", Name: "b"}
		}),
			want: p0 + `backend: Invalid value: "": cannot set both resource and service backends`},
		{name: "service without name or port", gk: gk, obj: ingress(func(i *networkingv1.Ingress) { firstPath(i).Backend.Service = &networkingv1.IngressServiceBackend{} }),
			want: ingInvalid + `[spec.rules[0].http.paths[0].backend.service.name: Required value, spec.rules[0].http.paths[0].backend: Required value: port name or number is required]`},
		{name: "port name and number", gk: gk, obj: ingress(func(i *networkingv1.Ingress) { firstPath(i).Backend.Service.Port.Name = "http" }),
			want: p0 + `backend: Invalid value: "": cannot set both port name & port number`},
		{name: "bad service name and port", gk: gk, obj: ingress(func(i *networkingv1.Ingress) {
			firstPath(i).Backend.Service = &networkingv1.IngressServiceBackend{Name: "web.svc", Port: networkingv1.ServiceBackendPort{Number: 70000}}
		}),
			want: ingInvalid + `[spec.rules[0].http.paths[0].backend.service.name: Invalid value: "web.svc": must not contain dots, spec.rules[0].http.paths[0].backend.service.port.number: Invalid value: 70000: ` + portRangeMsg + `]`},
		{name: "resource backend without kind and name", gk: gk, obj: ingress(func(i *networkingv1.Ingress) {
			firstPath(i).Backend = networkingv1.IngressBackend{Resource: &corev1.TypedLocalObjectReference{APIGroup: ptr("Bad_Group")}}
		}),
			want: ingInvalid + `[spec.rules[0].http.paths[0].backend.resource.apiGroup: Invalid value: "Bad_Group": ` + subdomainMsg + `, spec.rules[0].http.paths[0].backend.resource.kind: Required value, spec.rules[0].http.paths[0].backend.resource.name: Required value]`},
		{name: "default backend only", gk: gk, obj: ingress(func(i *networkingv1.Ingress) {
			i.Spec.Rules = nil
			i.Spec.DefaultBackend = &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Name: "Bad_Port"}}}
		}),
			prefix: ingInvalid + `spec.defaultBackend.service.port.name: Invalid value: "Bad_Port": `},
		{name: "TLS host and secret", gk: gk, obj: ingress(func(i *networkingv1.Ingress) {
			i.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"*"}, SecretName: "Bad"}}
		}),
			want: ingInvalid + `[spec.tls[0].hosts[0]: Invalid value: "*": ` + wildcardMsg + `, spec.tls[0].secretName: Invalid value: "Bad": ` + subdomainMsg + `]`},
		{name: "ingressClassName", gk: gk, obj: ingress(func(i *networkingv1.Ingress) { i.Spec.IngressClassName = ptr("Nginx") }),
			want: ingInvalid + `spec.ingressClassName: Invalid value: "Nginx": ` + subdomainMsg},
		{name: "class annotation and field differ", gk: gk, obj: ingress(func(i *networkingv1.Ingress) {
			i.Annotations = map[string]string{"kubernetes.io/ingress.class": "nginx"}
			i.Spec.IngressClassName = ptr("traefik")
		}),
			want: ingInvalid + "annotations.kubernetes.io/ingress.class: Invalid value: \"nginx\": must match `ingressClassName` when both are specified"},
		{name: "class annotation and field agree", gk: gk, obj: ingress(func(i *networkingv1.Ingress) {
			i.Annotations = map[string]string{"kubernetes.io/ingress.class": "nginx"}
			i.Spec.IngressClassName = ptr("nginx")
		})},
		{name: "update may keep differing class annotation", gk: gk, op: update,
			obj: ingress(func(i *networkingv1.Ingress) {
				i.ResourceVersion = "2"
				i.Annotations = map[string]string{"kubernetes.io/ingress.class": "nginx"}
				i.Spec.IngressClassName = ptr("traefik")
			}),
			old: ingress(func(i *networkingv1.Ingress) { i.ResourceVersion = "1" })},
		{name: "update keeps an invalid TLS secret name", gk: gk, op: update,
			obj: ingress(func(i *networkingv1.Ingress) {
				i.ResourceVersion = "2"
				i.Spec.TLS = []networkingv1.IngressTLS{{SecretName: "Bad"}}
			}),
			old: ingress(func(i *networkingv1.Ingress) {
				i.ResourceVersion = "1"
				i.Spec.TLS = []networkingv1.IngressTLS{{SecretName: "Bad"}}
			})},
		{name: "update checks the spec", gk: gk, op: update,
			obj:  ingress(func(i *networkingv1.Ingress) { i.ResourceVersion = "2"; firstPath(i).Path = "api" }),
			old:  ingress(func(i *networkingv1.Ingress) { i.ResourceVersion = "1" }),
			want: p0 + `path: Invalid value: "api": must be an absolute path`},
		{name: "status with a bad IP and an IP hostname", gk: gk, op: status,
			obj: ingress(func(i *networkingv1.Ingress) {
				i.ResourceVersion = "2"
				i.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "300.0.0.1"}, {Hostname: "10.0.0.1"}}
			}),
			old:  ingress(func(i *networkingv1.Ingress) { i.ResourceVersion = "1" }),
			want: ingInvalid + `[status.loadBalancer.ingress[0].ip: Invalid value: "300.0.0.1": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff), status.loadBalancer.ingress[1].hostname: Invalid value: "10.0.0.1": must be a DNS name, not an IP address]`},
		{name: "status valid", gk: gk, op: status,
			obj: ingress(func(i *networkingv1.Ingress) {
				i.ResourceVersion = "2"
				i.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.1"}, {Hostname: "lb.example.com"}}
			}),
			old: ingress(func(i *networkingv1.Ingress) { i.ResourceVersion = "1" })},
	})
}

func ingressClass(mut ...func(*networkingv1.IngressClass)) *networkingv1.IngressClass {
	ic := &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx"},
		Spec:       networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"},
	}
	for _, m := range mut {
		m(ic)
	}
	return ic
}

func TestIngressClass(t *testing.T) {
	gk := networkingGK("IngressClass")
	const inv = `IngressClass.networking.k8s.io "nginx" is invalid: `
	params := func(p networkingv1.IngressClassParametersReference) func(*networkingv1.IngressClass) {
		return func(ic *networkingv1.IngressClass) { ic.Spec.Parameters = &p }
	}
	check(t, []testCase{
		{name: "valid", gk: gk, obj: ingressClass()},
		{name: "valid namespaced parameters", gk: gk, obj: ingressClass(params(networkingv1.IngressClassParametersReference{
			Kind: "Params", Name: "p", Scope: ptr("Namespace"), Namespace: ptr("ingress"),
		}))},
		{name: "controller without domain", gk: gk, obj: ingressClass(func(ic *networkingv1.IngressClass) { ic.Spec.Controller = "nginx" }),
			want: inv + `spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")`},
		{name: "controller missing", gk: gk, obj: ingressClass(func(ic *networkingv1.IngressClass) { ic.Spec.Controller = "" }),
			want: inv + `spec.controller: Required value`},
		{name: "parameters: kind and name required last, scope required", gk: gk, obj: ingressClass(params(networkingv1.IngressClassParametersReference{APIGroup: ptr("Bad")})),
			want: inv + `[spec.parameters.apiGroup: Invalid value: "Bad": ` + subdomainMsg + `, spec.parameters.scope: Required value, spec.parameters.kind: Required value, spec.parameters.name: Required value]`},
		{name: "parameters scope unknown", gk: gk, obj: ingressClass(params(networkingv1.IngressClassParametersReference{Kind: "K", Name: "n", Scope: ptr("Global")})),
			want: inv + `spec.parameters.scope: Unsupported value: "Global": supported values: "Cluster", "Namespace"`},
		{name: "Namespace scope needs a namespace", gk: gk, obj: ingressClass(params(networkingv1.IngressClassParametersReference{Kind: "K", Name: "n", Scope: ptr("Namespace")})),
			want: inv + "spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'"},
		{name: "Cluster scope forbids a namespace", gk: gk, obj: ingressClass(params(networkingv1.IngressClassParametersReference{Kind: "K", Name: "n", Scope: ptr("Cluster"), Namespace: ptr("x")})),
			want: inv + "spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'"},
		{name: "kind with a slash", gk: gk, obj: ingressClass(params(networkingv1.IngressClassParametersReference{Kind: "a/b", Name: "n", Scope: ptr("Cluster")})),
			want: inv + `spec.parameters.kind: Invalid value: "a/b": may not contain '/'`},
		{name: "controller is immutable", gk: gk, op: update,
			obj: ingressClass(func(ic *networkingv1.IngressClass) {
				ic.ResourceVersion = "2"
				ic.Spec.Controller = "example.com/other"
			}),
			old:  ingressClass(func(ic *networkingv1.IngressClass) { ic.ResourceVersion = "1" }),
			want: inv + `spec.controller: Invalid value: "example.com/other": field is immutable`},
	})
}

func netpol(mut ...func(*networkingv1.NetworkPolicy)) *networkingv1.NetworkPolicy {
	np := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "np", Namespace: "default"},
		Spec:       networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}},
	}
	for _, m := range mut {
		m(np)
	}
	return np
}

func from(peers ...networkingv1.NetworkPolicyPeer) func(*networkingv1.NetworkPolicy) {
	return func(np *networkingv1.NetworkPolicy) {
		np.Spec.Ingress = append(np.Spec.Ingress, networkingv1.NetworkPolicyIngressRule{From: peers})
	}
}

func ports(ps ...networkingv1.NetworkPolicyPort) func(*networkingv1.NetworkPolicy) {
	return func(np *networkingv1.NetworkPolicy) {
		np.Spec.Ingress = append(np.Spec.Ingress, networkingv1.NetworkPolicyIngressRule{Ports: ps})
	}
}

func TestNetworkPolicy(t *testing.T) {
	gk := networkingGK("NetworkPolicy")
	const inv = `NetworkPolicy.networking.k8s.io "np" is invalid: `
	tcp := ptr(corev1.ProtocolTCP)
	port := func(p intstr.IntOrString) *intstr.IntOrString { return &p }
	block := func(cidr string, except ...string) networkingv1.NetworkPolicyPeer {
		return networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: cidr, Except: except}}
	}
	check(t, []testCase{
		{name: "valid", gk: gk, obj: netpol(from(block("10.0.0.0/16", "10.0.1.0/24")), ports(networkingv1.NetworkPolicyPort{Protocol: tcp, Port: port(intstr.FromInt32(5432)), EndPort: ptr(int32(5440))}))},
		{name: "invalid CIDR", gk: gk, obj: netpol(from(block("10.0.0.0/33"))),
			want: inv + `spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)`},
		{name: "CIDR with host bits", gk: gk, obj: netpol(from(block("10.0.0.1/16"))),
			prefix: inv + `spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "10.0.0.1/16": `},
		{name: "except not a subset", gk: gk, obj: netpol(from(block("10.0.0.0/16", "10.1.0.0/24", "10.0.0.0/16"))),
			want: inv + "[spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: \"10.1.0.0/24\": must be a strict subset of `cidr`, spec.ingress[0].from[0].ipBlock.except[1]: Invalid value: \"10.0.0.0/16\": must be a strict subset of `cidr`]"},
		{name: "update keeps an existing bad CIDR", gk: gk, op: update,
			obj: netpol(func(np *networkingv1.NetworkPolicy) { np.ResourceVersion = "2" }, from(block("010.0.0.0/16")), from(block("10.0.0.0/8"))),
			old: netpol(func(np *networkingv1.NetworkPolicy) { np.ResourceVersion = "1" }, from(block("010.0.0.0/16")))},
		{name: "cidr required, after the other errors", gk: gk, obj: netpol(from(block(""), networkingv1.NetworkPolicyPeer{})),
			want: inv + `[spec.ingress[0].from[1]: Required value: must specify a peer, spec.ingress[0].from[0].ipBlock.cidr: Required value]`},
		{name: "ipBlock with a selector", gk: gk, obj: netpol(from(networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8"}, PodSelector: &metav1.LabelSelector{}})),
			want: inv + `spec.ingress[0].from[0]: Forbidden: may not specify both ipBlock and another peer`},
		{name: "ports", gk: gk, obj: netpol(ports(
			networkingv1.NetworkPolicyPort{Protocol: ptr(corev1.Protocol("ICMP"))},
			networkingv1.NetworkPolicyPort{Port: port(intstr.FromInt32(100)), EndPort: ptr(int32(90))},
			networkingv1.NetworkPolicyPort{Port: port(intstr.FromString("http")), EndPort: ptr(int32(90))},
			networkingv1.NetworkPolicyPort{EndPort: ptr(int32(90))},
			networkingv1.NetworkPolicyPort{Port: port(intstr.FromInt32(0))},
		)),
			want: inv + "[spec.ingress[0].ports[0].protocol: Unsupported value: \"ICMP\": supported values: \"TCP\", \"UDP\", \"SCTP\", " +
				"spec.ingress[0].ports[1].endPort: Invalid value: 90: must be greater than or equal to `port`, " +
				"spec.ingress[0].ports[2].endPort: Invalid value: 90: may not be specified when `port` is non-numeric, " +
				"spec.ingress[0].ports[3].endPort: Invalid value: 90: may not be specified when `port` is not specified, " +
				"spec.ingress[0].ports[4].port: Invalid value: 0: " + portRangeMsg + "]"},
		{name: "policyTypes", gk: gk, obj: netpol(func(np *networkingv1.NetworkPolicy) {
			np.Spec.PolicyTypes = []networkingv1.PolicyType{"Ingress", "Both"}
		}),
			want: inv + `spec.policyTypes[1]: Unsupported value: "Both": supported values: "Ingress", "Egress"`},
		{name: "too many policyTypes", gk: gk, obj: netpol(func(np *networkingv1.NetworkPolicy) {
			np.Spec.PolicyTypes = []networkingv1.PolicyType{"Ingress", "Egress", "Ingress"}
		}),
			want: inv + `spec.policyTypes: Invalid value: ["Ingress","Egress","Ingress"]: may not specify more than two policyTypes`},
		{name: "pod selector label value", gk: gk, obj: netpol(func(np *networkingv1.NetworkPolicy) {
			np.Spec.PodSelector = metav1.LabelSelector{MatchLabels: map[string]string{"app": "bad value"}}
		}),
			prefix: inv + `spec.podSelector.matchLabels: Invalid value: "bad value": `},
	})
}

// FuzzValidateNetworking feeds arbitrary hosts, paths, path types,
// backends and CIDRs through the Ingress and NetworkPolicy rules and the
// rendering of their errors, none of which may panic.
func FuzzValidateNetworking(f *testing.F) {
	f.Add("web.example.com", "/", "Prefix", "web", int32(80), "10.0.0.0/16", "10.0.1.0/24", "TCP")
	f.Add("*.example.com", "a//b/..", "Exact", "", int32(0), "010.0.0.0/8", "::ffff:1.2.3.0/120", "")
	f.Add("10.0.0.1", "", "Regex", "Bad.Name", int32(70000), "", "1.2.3.4/33", "ICMP")
	f.Fuzz(func(t *testing.T, host, path, pathType, svc string, port int32, cidr, except, proto string) {
		pt := networkingv1.PathType(pathType)
		ing := ingress(func(i *networkingv1.Ingress) {
			i.ResourceVersion = "1"
			i.Spec.Rules[0].Host = host
			i.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{host}, SecretName: svc}}
			p := firstPath(i)
			p.Path, p.PathType = path, &pt
			p.Backend.Service = &networkingv1.IngressServiceBackend{Name: svc, Port: networkingv1.ServiceBackendPort{Number: port, Name: svc}}
			i.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: cidr, Hostname: host}}
		})
		old := ingress(func(i *networkingv1.Ingress) { i.ResourceVersion = "1"; i.Spec.Rules[0].Host = "*." + host })
		p := ptr(corev1.Protocol(proto))
		portVal := intstr.FromInt32(port)
		np := netpol(func(np *networkingv1.NetworkPolicy) { np.ResourceVersion = "1" },
			from(networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: cidr, Except: []string{except}}}),
			ports(networkingv1.NetworkPolicyPort{Protocol: p, Port: &portVal, EndPort: &port}))
		oldNP := np.DeepCopy()
		oldNP.Spec.Ingress[0].From[0].IPBlock.CIDR = except
		for _, errs := range []field.ErrorList{
			ValidateCreate(ing), ValidateUpdate(ing, old), ValidateStatusUpdate(ing, old),
			ValidateCreate(np), ValidateUpdate(np, oldNP),
		} {
			if len(errs) > 0 {
				_ = apierrors.NewInvalid(networkingGK("Ingress"), "x", errs).Error()
			}
		}
	})
}

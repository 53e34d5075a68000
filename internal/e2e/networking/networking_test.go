package networking

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

// prefix is this package's etcd prefix, so keys can be read back.
const prefix = "/networkinge2e/registry"

const classYAML = `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: nginx
  annotations:
    ingressclass.kubernetes.io/is-default-class: "true"
spec:
  controller: k8s.io/ingress-nginx
  parameters:
    apiGroup: k8s.example.com
    kind: IngressParameters
    name: external-lb
`

// appYAML is what a Helm chart renders: an Ingress naming no class, and
// a NetworkPolicy without policyTypes.
const appYAML = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: shop
spec:
  tls:
  - hosts: [web.example.com]
    secretName: web-tls
  rules:
  - host: web.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: web
            port:
              name: http
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: web
  namespace: shop
spec:
  podSelector:
    matchLabels: {app: web}
  ingress:
  - from:
    - ipBlock:
        cidr: 10.0.0.0/16
        except: [10.0.1.0/24]
    ports:
    - port: 8080
  egress:
  - to:
    - namespaceSelector: {}
`

// denyYAML goes through server-side apply.
const denyYAML = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: deny-all
  namespace: shop
spec:
  podSelector: {}
`

// TestKubectl applies chart-style manifests and reads them back with
// kubectl's tables, describe and explain, then deletes them.
func TestKubectl(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	dir := t.TempDir()
	class, app := filepath.Join(dir, "class.yaml"), filepath.Join(dir, "app.yaml")
	if err := os.WriteFile(class, []byte(classYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(app, []byte(appYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	deny := filepath.Join(dir, "deny.yaml")
	if err := os.WriteFile(deny, []byte(denyYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		args []string
		want []string
	}{
		{[]string{"create", "namespace", "shop"}, []string{"namespace/shop created"}},
		{[]string{"api-resources", "--api-group=networking.k8s.io"}, []string{"ingressclasses", "ingresses", "ing", "networkpolicies", "netpol", "networking.k8s.io/v1", "IngressClass", "NetworkPolicy"}},
		{[]string{"apply", "-f", class}, []string{"ingressclass.networking.k8s.io/nginx created"}},
		{[]string{"apply", "-f", app}, []string{"ingress.networking.k8s.io/web created", "networkpolicy.networking.k8s.io/web created"}},
		// kubectl's three-way patch replaces the atomic ingress list,
		// whose port the server gave protocol TCP, as against kube: the
		// policy is "configured" with no change (generation stays 1).
		{[]string{"apply", "-f", app}, []string{"ingress.networking.k8s.io/web unchanged", "networkpolicy.networking.k8s.io/web configured"}},
		{[]string{"-n", "shop", "create", "ingress", "simple", "--rule=foo.com/bar=svc1:8080,tls=my-cert", "--class=other"}, []string{"ingress.networking.k8s.io/simple created"}},
		{[]string{"-n", "shop", "get", "ing"}, []string{"NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE", "web", "nginx", "web.example.com", "80, 443", "simple", "other", "foo.com"}},
		{[]string{"-n", "shop", "get", "ing,ingressclass,netpol"}, []string{
			"ingress.networking.k8s.io/web", "ingressclass.networking.k8s.io/nginx (default)", "k8s.io/ingress-nginx", "IngressParameters.k8s.example.com/external-lb",
			"CONTROLLER", "PARAMETERS", "POD-SELECTOR", "networkpolicy.networking.k8s.io/web", "app=web"}},
		// Status is written through /status only.
		{[]string{"-n", "shop", "patch", "ingress", "web", "--type=merge", "-p", `{"status":{"loadBalancer":{"ingress":[{"ip":"192.0.2.7"}]}}}`}, []string{"ingress.networking.k8s.io/web patched (no change)"}},
		{[]string{"-n", "shop", "patch", "ingress", "web", "--subresource=status", "--type=merge", "-p", `{"status":{"loadBalancer":{"ingress":[{"ip":"192.0.2.7"},{"hostname":"lb.example.com"}]}}}`}, []string{"ingress.networking.k8s.io/web patched"}},
		{[]string{"-n", "shop", "get", "ing", "web"}, []string{"ADDRESS", "192.0.2.7,lb.example.com", "80, 443"}},
		{[]string{"-n", "shop", "get", "ingress", "simple", "-o", "yaml"}, []string{"pathType: Exact", "path: /bar", "number: 8080", "secretName: my-cert", "generation: 1"}},
		{[]string{"-n", "shop", "get", "netpol", "web", "-o", "yaml"}, []string{"- Ingress\n  - Egress", "protocol: TCP", "generation: 1"}},
		{[]string{"-n", "shop", "describe", "ingress", "web"}, []string{"Name:", "web", "Namespace:", "shop", "Ingress Class:", "nginx", "TLS:", "web-tls terminates web.example.com", "Rules:", "web.example.com", "web:http"}},
		{[]string{"describe", "ingressclass", "nginx"}, []string{"Name:", "nginx", "Controller:", "k8s.io/ingress-nginx", "Kind:", "IngressParameters", "Name:", "external-lb"}},
		{[]string{"-n", "shop", "describe", "netpol", "web"}, []string{"PodSelector:", "app=web", "Allowing ingress traffic:", "8080/TCP", "IPBlock:", "CIDR: 10.0.0.0/16", "Except: 10.0.1.0/24", "Policy Types: Ingress, Egress"}},
		{[]string{"apply", "--server-side", "--dry-run=server", "-f", deny}, []string{"networkpolicy.networking.k8s.io/deny-all serverside-applied (server dry run)"}},
		{[]string{"apply", "--server-side", "-f", deny}, []string{"networkpolicy.networking.k8s.io/deny-all serverside-applied"}},
		{[]string{"-n", "shop", "get", "netpol", "deny-all", "-o", "jsonpath={.spec.policyTypes} {.metadata.managedFields[0].manager} {.metadata.managedFields[0].operation}"}, []string{`["Ingress"] kubectl Apply`}},
		{[]string{"-n", "shop", "delete", "netpol", "deny-all"}, []string{`networkpolicy.networking.k8s.io "deny-all" deleted`}},
		{[]string{"explain", "ingress.spec"}, []string{"KIND:", "Ingress", "FIELD: spec <IngressSpec>", "ingressClassName", "defaultBackend"}},
		{[]string{"explain", "networkpolicy.spec.policyTypes"}, []string{"NetworkPolicy", "policyTypes"}},
		{[]string{"delete", "-f", app}, []string{`ingress.networking.k8s.io "web" deleted`, `networkpolicy.networking.k8s.io "web" deleted`}},
		{[]string{"-n", "shop", "delete", "ing", "simple"}, []string{`ingress.networking.k8s.io "simple" deleted`}},
		{[]string{"delete", "ingressclass", "nginx"}, []string{`ingressclass.networking.k8s.io "nginx" deleted`}},
		{[]string{"-n", "shop", "get", "ing,netpol"}, []string{"No resources found in shop namespace."}},
	}
	for _, s := range steps {
		out, err := e2eutil.Kubectl(t, ts, s.args...)
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(s.args, " "), err, out)
		}
		e2eutil.MustContain(t, "kubectl "+strings.Join(s.args, " "), out, s.want...)
	}
}

func ingress(name string, mut ...func(*networkingv1.Ingress)) *networkingv1.Ingress {
	prefix := networkingv1.PathTypePrefix
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{
			Host: "web.example.com",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: &prefix,
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}},
			}}}},
		}}},
	}
	for _, m := range mut {
		m(ing)
	}
	return ing
}

// TestClientGo: kube's 422s, defaults, the status subresource, the
// generation, the class annotation's warning and the default class.
func TestClientGo(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{Configure: func(c *config.Config) { c.Storage.Prefix = prefix }})
	warnings := &e2eutil.Warnings{}
	cfg := rest.CopyConfig(ts.Config)
	cfg.WarningHandler = warnings
	cs := e2eutil.Clientset(t, cfg)
	ctx := context.Background()
	const ns = "net"
	e2eutil.Namespace(t, cs, ns)
	ings := cs.NetworkingV1().Ingresses(ns)

	t.Run("invalid ingress", func(t *testing.T) {
		_, err := ings.Create(ctx, ingress("bad", func(i *networkingv1.Ingress) {
			i.Spec.Rules[0].Host = "10.0.0.1"
			p := &i.Spec.Rules[0].HTTP.Paths[0]
			p.Path = "api"
			p.Backend.Resource = &corev1.TypedLocalObjectReference{Kind: "StorageBucket", Name: "static"}
		}), metav1.CreateOptions{})
		e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, `Ingress.networking.k8s.io "bad" is invalid: [`+
			`spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address, `+
			`spec.rules[0].http.paths[0].path: Invalid value: "api": must be an absolute path, `+
			`spec.rules[0].http.paths[0].backend: Invalid value: "": cannot set both resource and service backends]`)
		wantCauses(t, err, "spec.rules[0].host", "spec.rules[0].http.paths[0].path", "spec.rules[0].http.paths[0].backend")
	})

	t.Run("invalid wildcard host and missing backend", func(t *testing.T) {
		_, err := ings.Create(ctx, ingress("bad", func(i *networkingv1.Ingress) {
			i.Spec.Rules[0].Host = "foo.*.example.com"
			i.Spec.Rules[0].HTTP.Paths[0].Backend = networkingv1.IngressBackend{}
		}), metav1.CreateOptions{})
		e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, `Ingress.networking.k8s.io "bad" is invalid: [`+
			`spec.rules[0].host: Invalid value: "foo.*.example.com": a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), `+
			`spec.rules[0].http.paths[0].backend: Invalid value: "": resource or service backend is required]`)
	})

	t.Run("class annotation and field differ", func(t *testing.T) {
		_, err := ings.Create(ctx, ingress("bad", func(i *networkingv1.Ingress) {
			i.Annotations = map[string]string{"kubernetes.io/ingress.class": "nginx"}
			i.Spec.IngressClassName = ptr("traefik")
		}), metav1.CreateOptions{})
		e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid,
			"Ingress.networking.k8s.io \"bad\" is invalid: annotations.kubernetes.io/ingress.class: Invalid value: \"nginx\": must match `ingressClassName` when both are specified")
	})

	t.Run("class annotation alone warns and gets no default class", func(t *testing.T) {
		createDefaultClass(t, cs, "annotated-default")
		warnings.Take()
		got, err := ings.Create(ctx, ingress("annotated", func(i *networkingv1.Ingress) {
			i.Annotations = map[string]string{"kubernetes.io/ingress.class": "nginx"}
		}), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{`annotation "kubernetes.io/ingress.class" is deprecated, please use 'spec.ingressClassName' instead`}
		if w := warnings.Take(); !reflect.DeepEqual(w, want) {
			t.Errorf("warnings %q, want %q", w, want)
		}
		if got.Spec.IngressClassName != nil {
			t.Errorf("ingressClassName %q, want none: the annotation names the class", *got.Spec.IngressClassName)
		}
		deleteClass(t, cs, "annotated-default")
	})

	t.Run("status only through /status, generation on spec changes", func(t *testing.T) {
		lb := networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.10"}}}}
		created, err := ings.Create(ctx, ingress("status", func(i *networkingv1.Ingress) {
			i.Spec.IngressClassName = ptr("nginx")
			i.Status = lb
		}), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(created.Status.LoadBalancer.Ingress) != 0 || created.Generation != 1 {
			t.Fatalf("created with status %+v generation %d; want no status, generation 1", created.Status, created.Generation)
		}
		// A write of the main resource keeps the status it had.
		created.Status = lb
		created.Labels = map[string]string{"tier": "edge"}
		updated, err := ings.Update(ctx, created, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(updated.Status.LoadBalancer.Ingress) != 0 || updated.Generation != 1 {
			t.Fatalf("update set status %+v generation %d; want no status, generation 1", updated.Status, updated.Generation)
		}
		// /status sets the status and nothing else.
		updated.Status = lb
		updated.Spec.Rules[0].Host = "changed.example.com"
		st, err := ings.UpdateStatus(ctx, updated, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(st.Status, lb) || st.Spec.Rules[0].Host != "web.example.com" || st.Generation != 1 {
			t.Fatalf("after /status: status %+v host %q generation %d", st.Status, st.Spec.Rules[0].Host, st.Generation)
		}
		// A bad address is kube's 422 on /status.
		st.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "300.1.2.3"}}
		_, err = ings.UpdateStatus(ctx, st, metav1.UpdateOptions{})
		e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, `Ingress.networking.k8s.io "status" is invalid: status.loadBalancer.ingress[0].ip: Invalid value: "300.1.2.3": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`)
		// A spec change bumps the generation and keeps the status.
		st, err = ings.Get(ctx, "status", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		st.Spec.Rules[0].Host = "changed.example.com"
		st.Status = networkingv1.IngressStatus{}
		st, err = ings.Update(ctx, st, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if st.Generation != 2 || !reflect.DeepEqual(st.Status, lb) {
			t.Fatalf("after a spec change: generation %d status %+v; want 2 and the status kept", st.Generation, st.Status)
		}
	})

	t.Run("default class", func(t *testing.T) {
		got, err := ings.Create(ctx, ingress("no-default"), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.IngressClassName != nil {
			t.Fatalf("ingressClassName %q with no default class", *got.Spec.IngressClassName)
		}
		createDefaultClass(t, cs, "public")
		e2eutil.Eventually(t, 5e9, "the default class on a new Ingress", func() bool {
			got, err := ings.Create(ctx, ingress("", func(i *networkingv1.Ingress) { i.GenerateName = "defaulted-" }), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return got.Spec.IngressClassName != nil && *got.Spec.IngressClassName == "public"
		})
		// An explicit class is kept.
		got, err = ings.Create(ctx, ingress("explicit", func(i *networkingv1.Ingress) { i.Spec.IngressClassName = ptr("internal") }), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if *got.Spec.IngressClassName != "internal" {
			t.Errorf("ingressClassName %q, want internal", *got.Spec.IngressClassName)
		}
		// Updates are left alone.
		got, err = ings.Get(ctx, "no-default", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got.Labels = map[string]string{"x": "y"}
		if got, err = ings.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if got.Spec.IngressClassName != nil {
			t.Errorf("update set ingressClassName %q", *got.Spec.IngressClassName)
		}
		deleteClass(t, cs, "public")
	})

	t.Run("ingressclass", func(t *testing.T) {
		ics := cs.NetworkingV1().IngressClasses()
		_, err := ics.Create(ctx, &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Spec: networkingv1.IngressClassSpec{
			Controller: "nginx",
			Parameters: &networkingv1.IngressClassParametersReference{Scope: ptr("Namespace")},
		}}, metav1.CreateOptions{})
		e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, `IngressClass.networking.k8s.io "bad" is invalid: [`+
			`spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo"), `+
			"spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace', "+
			`spec.parameters.kind: Required value, spec.parameters.name: Required value]`)
		ic, err := ics.Create(ctx, &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "lb"}, Spec: networkingv1.IngressClassSpec{
			Controller: "example.com/lb",
			Parameters: &networkingv1.IngressClassParametersReference{Kind: "Params", Name: "p"},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ic.Spec.Parameters.Scope == nil || *ic.Spec.Parameters.Scope != "Cluster" || ic.Generation != 1 {
			t.Errorf("parameters.scope %v generation %d, want Cluster and 1", ic.Spec.Parameters.Scope, ic.Generation)
		}
		ic.Spec.Controller = "example.com/other"
		_, err = ics.Update(ctx, ic, metav1.UpdateOptions{})
		e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, `IngressClass.networking.k8s.io "lb" is invalid: spec.controller: Invalid value: "example.com/other": field is immutable`)
		deleteClass(t, cs, "lb")
	})

	t.Run("networkpolicy", func(t *testing.T) {
		nps := cs.NetworkingV1().NetworkPolicies(ns)
		port := intstr.FromInt32(5432)
		np := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Spec: networkingv1.NetworkPolicySpec{
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From:  []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/33"}}},
				Ports: []networkingv1.NetworkPolicyPort{{Port: &port}},
			}},
		}}
		_, err := nps.Create(ctx, np, metav1.CreateOptions{})
		e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, `NetworkPolicy.networking.k8s.io "bad" is invalid: spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)`)

		np.Spec.Ingress[0].From[0].IPBlock = &networkingv1.IPBlock{CIDR: "10.0.0.0/16", Except: []string{"10.1.0.0/24"}}
		np.Spec.Ingress[0].Ports[0].EndPort = ptr(int32(5000))
		_, err = nps.Create(ctx, np, metav1.CreateOptions{})
		e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, "NetworkPolicy.networking.k8s.io \"bad\" is invalid: ["+
			"spec.ingress[0].ports[0].endPort: Invalid value: 5000: must be greater than or equal to `port`, "+
			"spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: \"10.1.0.0/24\": must be a strict subset of `cidr`]")

		np.Name = "db"
		np.Spec.Ingress[0].From[0].IPBlock.Except = []string{"10.0.1.0/24"}
		np.Spec.Ingress[0].Ports[0].EndPort = ptr(int32(5440))
		np.Spec.Egress = []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{}}}}}
		got, err := nps.Create(ctx, np, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wantTypes := []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}
		if !reflect.DeepEqual(got.Spec.PolicyTypes, wantTypes) || got.Spec.Ingress[0].Ports[0].Protocol == nil || *got.Spec.Ingress[0].Ports[0].Protocol != corev1.ProtocolTCP || got.Generation != 1 {
			t.Errorf("defaults: policyTypes %v, protocol %v, generation %d", got.Spec.PolicyTypes, got.Spec.Ingress[0].Ports[0].Protocol, got.Generation)
		}
	})

	// kube's etcd layout: ingresses under /registry/ingress/.
	t.Run("storage keys", func(t *testing.T) {
		if _, err := cs.NetworkingV1().IngressClasses().Create(ctx, &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "stored"}, Spec: networkingv1.IngressClassSpec{Controller: "example.com/stored"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for dir, want := range map[string]string{
			"ingress/net/status":     "/ingress/net/status",
			"networkpolicies/net/db": "/networkpolicies/net/db",
			"ingressclasses/stored":  "/ingressclasses/stored",
			"ingresses/":             "",
		} {
			got := strings.Join(etcdKeys(t, ts, dir), ",")
			if got != want {
				t.Errorf("etcd keys under %s: %q, want %q", dir, got, want)
			}
		}
	})
}

// etcdKeys lists the keys under prefix+"/"+dir.
func etcdKeys(t *testing.T, ts *testserver.TestServer, dir string) []string {
	t.Helper()
	resp, err := ts.Backend().Client.Get(context.Background(), prefix+"/"+dir, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, kv := range resp.Kvs {
		keys = append(keys, strings.TrimPrefix(string(kv.Key), prefix))
	}
	return keys
}

func ptr[T any](v T) *T { return &v }

func wantCauses(t *testing.T, err error, fields ...string) {
	t.Helper()
	se, ok := err.(apierrors.APIStatus)
	if !ok || se.Status().Details == nil {
		t.Fatalf("no Status details in %v", err)
	}
	var got []string
	for _, c := range se.Status().Details.Causes {
		got = append(got, c.Field)
	}
	if !reflect.DeepEqual(got, fields) {
		t.Errorf("causes %q, want %q", got, fields)
	}
}

func createDefaultClass(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	_, err := cs.NetworkingV1().IngressClasses().Create(context.Background(), &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}},
		Spec:       networkingv1.IngressClassSpec{Controller: "example.com/" + name},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func deleteClass(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	if err := cs.NetworkingV1().IngressClasses().Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

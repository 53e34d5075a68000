package podsecurity

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/admission"
	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
)

// fakeNamespaces serves namespaces from a map.
type fakeNamespaces map[string]*corev1.Namespace

func (f fakeNamespaces) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	if ns, ok := f[name]; ok {
		return ns, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
}

type fakePods []*corev1.Pod

func (f fakePods) ListPods(context.Context, string) ([]*corev1.Pod, error) {
	return append([]*corev1.Pod(nil), f...), nil
}

func ns(name string, labels ...string) *corev1.Namespace {
	n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	for i := 0; i+1 < len(labels); i += 2 {
		n.Labels["pod-security.kubernetes.io/"+labels[i]] = labels[i+1]
	}
	return n
}

func pod(name string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func privileged(p *corev1.Pod) {
	p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
}

// compliant makes a pod pass restricted.
func compliant(p *corev1.Pod) {
	p.Spec.SecurityContext = &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	for i := range p.Spec.Containers {
		p.Spec.Containers[i].SecurityContext = &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		}
	}
}

// restrictedDetail is kube's ForbiddenDetail for a plain pod with one
// container "app" under restricted.
const restrictedDetail = `allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false), ` +
	`unrestricted capabilities (container "app" must set securityContext.capabilities.drop=["ALL"]), ` +
	`runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true), ` +
	`seccompProfile (pod or container "app" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`

var resources = map[string]*api.Resource{
	"pods":        {GroupVersion: schema.GroupVersion{Version: "v1"}, Name: "pods", Kind: "Pod", Namespaced: true},
	"namespaces":  {GroupVersion: schema.GroupVersion{Version: "v1"}, Name: "namespaces", Kind: "Namespace"},
	"deployments": {GroupVersion: schema.GroupVersion{Group: "apps", Version: "v1"}, Name: "deployments", Kind: "Deployment", Namespaced: true},
	"configmaps":  {GroupVersion: schema.GroupVersion{Version: "v1"}, Name: "configmaps", Kind: "ConfigMap", Namespaced: true},
}

// call is one admission request.
type call struct {
	op          string
	resource    string
	subresource string
	namespace   string
	user        string
	obj, old    runtime.Object
}

func (c call) run(t *testing.T, p *Plugin) (*request.Operation, error) {
	t.Helper()
	op := &request.Operation{Resource: resources[c.resource], Subresource: c.subresource, Namespace: c.namespace, Object: c.obj, Old: c.old}
	if m, ok := c.obj.(metav1.Object); ok && c.op == admission.Update {
		op.Name = m.GetName()
	}
	if c.op == "" {
		c.op = admission.Create
	}
	user := c.user
	if user == "" {
		user = "alice"
	}
	ctx := request.WithScope(context.Background(), &request.Scope{User: &request.User{Name: user}})
	a := &admission.Attributes{Operation: c.op, Info: &request.RequestInfo{Namespace: c.namespace}, Op: op}
	return op, p.Validate(ctx, a)
}

func newPlugin(t *testing.T, cfg map[string]any, namespaces ...*corev1.Namespace) (*Plugin, *prometheus.Registry) {
	t.Helper()
	c := newConfig()
	if err := config.Decode(cfg, c, "config"); err != nil {
		t.Fatal(err)
	}
	p, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	nss := fakeNamespaces{}
	for _, n := range namespaces {
		nss[n.Name] = n
	}
	p.Namespaces = nss
	reg := prometheus.NewPedanticRegistry()
	p.metrics = newMetrics(serverVersion(), func(c prometheus.Collector) prometheus.Collector { reg.MustRegister(c); return c })
	return p, reg
}

func TestPods(t *testing.T) {
	restricted := ns("r", "enforce", "restricted")
	for _, tt := range []struct {
		name        string
		cfg         map[string]any
		call        call
		err         string // "" allowed
		warnings    []string
		annotations map[string]string
	}{
		{
			name: "enforce refuses a privileged pod with kube's message",
			call: call{resource: "pods", namespace: "r", obj: pod("x", privileged)},
			err:  `pods "x" is forbidden: violates PodSecurity "restricted:latest": privileged (container "app" must not set securityContext.privileged=true), ` + restrictedDetail,
			annotations: map[string]string{
				"pod-security.kubernetes.io/enforce-policy": "restricted:latest",
			},
		},
		{
			name:        "enforce admits a compliant pod",
			call:        call{resource: "pods", namespace: "r", obj: pod("x", compliant)},
			annotations: map[string]string{"pod-security.kubernetes.io/enforce-policy": "restricted:latest"},
		},
		{
			name:     "warn gives kube's warning and admits",
			call:     call{resource: "pods", namespace: "w", obj: pod("x")},
			warnings: []string{`would violate PodSecurity "restricted:latest": ` + restrictedDetail},
			annotations: map[string]string{
				"pod-security.kubernetes.io/enforce-policy": "privileged:latest",
			},
		},
		{
			name: "audit annotates",
			call: call{resource: "pods", namespace: "a", obj: pod("x", privileged)},
			annotations: map[string]string{
				"pod-security.kubernetes.io/enforce-policy":   "privileged:latest",
				"pod-security.kubernetes.io/audit-violations": `would violate PodSecurity "baseline:v1.30": privileged (container "app" must not set securityContext.privileged=true)`,
			},
		},
		{
			name:        "a fully privileged namespace is allowed with kube's annotation",
			call:        call{resource: "pods", namespace: "p", obj: pod("x", privileged)},
			annotations: map[string]string{"pod-security.kubernetes.io/enforce-policy": "privileged:latest"},
		},
		{
			name: "config defaults apply to unlabeled namespaces",
			cfg:  map[string]any{"defaults": map[string]any{"enforce": "baseline"}},
			call: call{resource: "pods", namespace: "p", obj: pod("x", privileged)},
			err:  `pods "x" is forbidden: violates PodSecurity "baseline:latest": privileged (container "app" must not set securityContext.privileged=true)`,
			annotations: map[string]string{
				"pod-security.kubernetes.io/enforce-policy": "baseline:latest",
			},
		},
		{
			name:        "exempt namespace",
			cfg:         map[string]any{"exemptions": map[string]any{"namespaces": []any{"r"}}},
			call:        call{resource: "pods", namespace: "r", obj: pod("x", privileged)},
			annotations: map[string]string{"pod-security.kubernetes.io/exempt": "namespace"},
		},
		{
			name:        "exempt user",
			cfg:         map[string]any{"exemptions": map[string]any{"usernames": []any{"ci"}}},
			call:        call{resource: "pods", namespace: "r", user: "ci", obj: pod("x", privileged)},
			annotations: map[string]string{"pod-security.kubernetes.io/exempt": "user"},
		},
		{
			name: "exempt runtime class",
			cfg:  map[string]any{"exemptions": map[string]any{"runtimeClasses": []any{"kata"}}},
			call: call{resource: "pods", namespace: "r", obj: pod("x", privileged, func(p *corev1.Pod) {
				p.Spec.RuntimeClassName = ptr.To("kata")
			})},
			annotations: map[string]string{"pod-security.kubernetes.io/exempt": "runtimeClass"},
		},
		{
			name: "an update changing only labels is not evaluated",
			call: call{op: admission.Update, resource: "pods", namespace: "r",
				obj: pod("x", privileged, func(p *corev1.Pod) { p.Labels = map[string]string{"a": "b"} }), old: pod("x", privileged)},
		},
		{
			name: "an update changing an image is evaluated",
			call: call{op: admission.Update, resource: "pods", namespace: "r",
				obj: pod("x", privileged, func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:2" }), old: pod("x", privileged)},
			err:         `pods "x" is forbidden: violates PodSecurity "restricted:latest"`,
			annotations: map[string]string{"pod-security.kubernetes.io/enforce-policy": "restricted:latest"},
		},
		{
			name: "an ephemeral container added is evaluated",
			call: call{op: admission.Update, resource: "pods", subresource: "ephemeralcontainers", namespace: "r",
				obj: pod("x", compliant, func(p *corev1.Pod) {
					p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "busybox"}}}
				}), old: pod("x", compliant)},
			err:         `pods "x" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "debug" must set`,
			annotations: map[string]string{"pod-security.kubernetes.io/enforce-policy": "restricted:latest"},
		},
		{
			name:        "an update that creates (no live object) is evaluated as a create",
			call:        call{op: admission.Update, resource: "pods", namespace: "r", obj: pod("x", privileged)},
			err:         `pods "x" is forbidden: violates PodSecurity "restricted:latest"`,
			annotations: map[string]string{"pod-security.kubernetes.io/enforce-policy": "restricted:latest"},
		},
		{
			name: "the status subresource is ignored",
			call: call{op: admission.Update, resource: "pods", subresource: "status", namespace: "r", obj: pod("x", privileged), old: pod("x")},
		},
		{
			name: "invalid namespace labels fall back to restricted with an error annotation",
			call: call{resource: "pods", namespace: "bad", obj: pod("x", privileged)},
			err:  `pods "x" is forbidden: violates PodSecurity "restricted:latest"`,
			annotations: map[string]string{
				"pod-security.kubernetes.io/enforce-policy": "restricted:latest",
				"pod-security.kubernetes.io/error":          `Failed to parse policy: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "bogus": must be one of privileged, baseline, restricted`,
			},
		},
		{
			name: "a missing namespace is an internal error",
			call: call{resource: "pods", namespace: "gone", obj: pod("x")},
			err:  `Internal error occurred: failed to lookup namespace "gone"`,
			annotations: map[string]string{
				"pod-security.kubernetes.io/error": `Internal error occurred: failed to lookup namespace "gone": namespaces "gone" not found`,
			},
		},
		{
			name: "a deployment in an enforcing namespace is warned about, never refused",
			call: call{resource: "deployments", namespace: "r", obj: &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: "d"},
				Spec:       appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: pod("", privileged).Spec}},
			}},
			warnings: []string{`would violate PodSecurity "restricted:latest": privileged (container "app" must not set securityContext.privileged=true), ` + restrictedDetail},
		},
		{
			name: "other resources are not looked at",
			call: call{resource: "configmaps", namespace: "r", obj: &corev1.ConfigMap{}},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newPlugin(t, tt.cfg, restricted, ns("w", "warn", "restricted"), ns("a", "audit", "baseline", "audit-version", "v1.30"), ns("p"),
				ns("bad", "enforce", "bogus"))
			op, err := tt.call.run(t, p)
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("want allowed, got %v", err)
			case tt.err != "" && err == nil:
				t.Fatalf("want %q, got allowed", tt.err)
			case tt.err != "" && !strings.HasPrefix(err.Error(), tt.err):
				t.Fatalf("error\n got %q\nwant %q", err.Error(), tt.err)
			}
			if strings.Contains(tt.err, "forbidden") && !apierrors.IsForbidden(err) {
				t.Errorf("want 403 Forbidden, got %#v", err)
			}
			if !reflect.DeepEqual(op.Warnings, tt.warnings) {
				t.Errorf("warnings\n got %q\nwant %q", op.Warnings, tt.warnings)
			}
			if len(op.AuditAnnotations) != 0 || len(tt.annotations) != 0 {
				if !reflect.DeepEqual(op.AuditAnnotations, tt.annotations) {
					t.Errorf("annotations\n got %q\nwant %q", op.AuditAnnotations, tt.annotations)
				}
			}
		})
	}
}

func TestNamespaces(t *testing.T) {
	owner := func(uid string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: types.UID(uid), Controller: ptr.To(true)}}
		}
	}
	existing := fakePods{
		pod("web-b", privileged, owner("1")), pod("web-a", privileged, owner("1")), pod("web-c", privileged, owner("1")),
		pod("solo", func(p *corev1.Pod) { p.Spec.HostNetwork = true }),
		pod("good", compliant),
		pod("kata", privileged, func(p *corev1.Pod) { p.Spec.RuntimeClassName = ptr.To("kata") }),
	}
	for _, tt := range []struct {
		name     string
		cfg      map[string]any
		call     call
		max      int
		err      string
		warnings []string
	}{
		{
			name: "an invalid label value is refused on create",
			call: call{resource: "namespaces", obj: ns("x", "enforce", "bogus")},
			err:  `Namespace "x" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "bogus": must be one of privileged, baseline, restricted`,
		},
		{
			name: "an invalid version is refused on update",
			call: call{op: admission.Update, resource: "namespaces", namespace: "x", obj: ns("x", "warn-version", "1.30"), old: ns("x")},
			err:  `Namespace "x" is invalid: metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: "1.30": must be "latest" or "v1.x"`,
		},
		{
			name: "an unchanged invalid label is let through",
			call: call{op: admission.Update, resource: "namespaces", namespace: "x", obj: ns("x", "enforce", "bogus", "a", "b"), old: ns("x", "enforce", "bogus")},
		},
		{
			name: "tightening enforce warns about the existing pods",
			cfg:  map[string]any{"exemptions": map[string]any{"runtimeClasses": []any{"kata"}}},
			call: call{op: admission.Update, resource: "namespaces", namespace: "x", obj: ns("x", "enforce", "baseline"), old: ns("x")},
			warnings: []string{
				`existing pods in namespace "x" violate the new PodSecurity enforce level "baseline:latest"`,
				`solo: host namespaces`,
				`web-a (and 2 other pods): privileged`,
			},
		},
		{
			name: "the check stops at the pod limit",
			max:  2,
			call: call{op: admission.Update, resource: "namespaces", namespace: "x", obj: ns("x", "enforce", "baseline"), old: ns("x")},
			warnings: []string{
				`new PodSecurity enforce level only checked against the first 2 of 6 existing pods`,
				`existing pods in namespace "x" violate the new PodSecurity enforce level "baseline:latest"`,
				`solo: host namespaces`,
				`web-b: privileged`,
			},
		},
		{
			name: "relaxing enforce checks nothing",
			call: call{op: admission.Update, resource: "namespaces", namespace: "x", obj: ns("x", "enforce", "baseline"), old: ns("x", "enforce", "restricted")},
		},
		{
			name:     "an exempt namespace is told its labels are ignored",
			cfg:      map[string]any{"exemptions": map[string]any{"namespaces": []any{"x"}}},
			call:     call{op: admission.Update, resource: "namespaces", namespace: "x", obj: ns("x", "enforce", "baseline"), old: ns("x")},
			warnings: []string{`namespace "x" is exempt from Pod Security, and the policy (enforce=baseline:latest) will be ignored`},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newPlugin(t, tt.cfg)
			p.Pods = existing
			if tt.max > 0 {
				p.maxPodsToCheck = tt.max
			}
			op, err := tt.call.run(t, p)
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("want allowed, got %v", err)
			case tt.err != "" && (err == nil || err.Error() != tt.err):
				t.Fatalf("error\n got %v\nwant %q", err, tt.err)
			case tt.err != "" && !apierrors.IsInvalid(err):
				t.Errorf("want 422 Invalid, got %#v", err)
			}
			if !reflect.DeepEqual(op.Warnings, tt.warnings) {
				t.Errorf("warnings\n got %q\nwant %q", op.Warnings, tt.warnings)
			}
		})
	}
}

func TestMetrics(t *testing.T) {
	p, reg := newPlugin(t, map[string]any{"exemptions": map[string]any{"usernames": []any{"ci"}}},
		ns("r", "enforce", "restricted", "warn", "baseline", "warn-version", "v1.99"), ns("p"))
	for _, c := range []call{
		{resource: "pods", namespace: "r", obj: pod("x", privileged)},
		{resource: "pods", namespace: "r", obj: pod("y", compliant)},
		{resource: "pods", namespace: "p", obj: pod("z")},
		{resource: "pods", namespace: "r", user: "ci", obj: pod("z")},
		{resource: "pods", namespace: "gone", obj: pod("z")},
		{resource: "deployments", namespace: "r", obj: &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: pod("", privileged).Spec}}}},
	} {
		c.run(t, p)
	}
	want := []string{
		`pod_security_errors_total{fatal="true",request_operation="create",resource="pod",subresource=""} 1`,
		`pod_security_evaluations_total{decision="allow",mode="enforce",policy_level="privileged",policy_version="latest",request_operation="create",resource="pod",subresource=""} 1`,
		`pod_security_evaluations_total{decision="allow",mode="enforce",policy_level="restricted",policy_version="latest",request_operation="create",resource="pod",subresource=""} 1`,
		`pod_security_evaluations_total{decision="deny",mode="enforce",policy_level="restricted",policy_version="latest",request_operation="create",resource="pod",subresource=""} 1`,
		`pod_security_evaluations_total{decision="deny",mode="warn",policy_level="baseline",policy_version="future",request_operation="create",resource="controller",subresource=""} 1`,
		`pod_security_exemptions_total{request_operation="create",resource="pod",subresource=""} 1`,
	}
	if got := counters(t, reg); !reflect.DeepEqual(got, want) {
		t.Errorf("metrics\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

// counters renders every counter as `name{label="value",...} n`, sorted.
func counters(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			out = append(out, fmt.Sprintf("%s{%s} %g", f.GetName(), strings.Join(labels, ","), m.GetCounter().GetValue()))
		}
	}
	sort.Strings(out)
	return out
}

func TestConfig(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   map[string]any
		err  string
	}{
		{name: "empty is all privileged", in: nil},
		{name: "kube's shape", in: map[string]any{
			"defaults":   map[string]any{"enforce": "baseline", "enforce-version": "v1.30", "audit": "restricted", "audit-version": "latest", "warn": "restricted", "warn-version": "latest"},
			"exemptions": map[string]any{"usernames": []any{"system:serviceaccount:kube-system:replicaset-controller"}, "namespaces": []any{"kube-system"}, "runtimeClasses": []any{"kata"}},
		}},
		{name: "bad level", in: map[string]any{"defaults": map[string]any{"warn": "strict"}},
			err: `defaults.warn: invalid value "strict": must be one of privileged, baseline, restricted`},
		{name: "bad version", in: map[string]any{"defaults": map[string]any{"audit-version": "1.30"}},
			err: `defaults.audit-version: invalid value "1.30": must be "latest" or "v1.x"`},
		{name: "bad namespace", in: map[string]any{"exemptions": map[string]any{"namespaces": []any{"ok", "Not_OK"}}},
			err: `exemptions.namespaces[1]: invalid value "Not_OK": a lowercase RFC 1123 label must consist of`},
		{name: "duplicate runtime class", in: map[string]any{"exemptions": map[string]any{"runtimeClasses": []any{"kata", "kata"}}},
			err: `exemptions.runtimeClasses[1]: duplicate value "kata"`},
		{name: "empty username", in: map[string]any{"exemptions": map[string]any{"usernames": []any{""}}},
			err: `exemptions.usernames[0]: invalid value "": username must not be empty`},
		{name: "unknown key", in: map[string]any{"exemptions": map[string]any{"users": []any{"a"}}},
			err: `config.exemptions.users: unknown key`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newConfig()
			err := config.Decode(tt.in, c, "config")
			if err == nil {
				err = c.Validate()
			}
			var fe *config.FieldError
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("want valid, got %v", err)
			case tt.err == "":
				return
			case err == nil:
				t.Fatalf("want %q, got valid", tt.err)
			case !errors.As(err, &fe):
				t.Fatalf("want a FieldError, got %T %v", err, err)
			case !strings.HasPrefix(err.Error(), tt.err):
				t.Fatalf("error\n got %q\nwant %q", err.Error(), tt.err)
			}
		})
	}
	c := newConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(c.policy.Enforce, c.policy.Audit, c.policy.Warn); got != "privileged:latest privileged:latest privileged:latest" {
		t.Errorf("defaults %s", got)
	}
}

// BenchmarkValidatePod is the evaluation's cost per pod create, the
// namespace read aside: a compliant pod in a namespace enforcing
// restricted, auditing baseline and warning at restricted v1.30 (three
// evaluations), and a privileged one refused.
func BenchmarkValidatePod(b *testing.B) {
	p, err := New(newConfig())
	if err != nil {
		b.Fatal(err)
	}
	p.Namespaces = fakeNamespaces{"r": ns("r", "enforce", "restricted", "audit", "baseline", "warn", "restricted", "warn-version", "v1.30")}
	ctx := request.WithScope(context.Background(), &request.Scope{User: &request.User{Name: "alice"}})
	for _, c := range []struct {
		name   string
		mutate func(*corev1.Pod)
		denied bool
	}{
		{"compliant", compliant, false},
		{"privileged", privileged, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				op := &request.Operation{Resource: resources["pods"], Namespace: "r", Object: pod("x", c.mutate)}
				err := p.Validate(ctx, &admission.Attributes{Operation: admission.Create, Info: &request.RequestInfo{}, Op: op})
				if (err != nil) != c.denied {
					b.Fatal(err)
				}
			}
		})
	}
}

// A reload builds the plugin again: its counters are the ones already
// registered, and keep counting.
func TestMetricsSurviveRebuild(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	env := &pipeline.Env{Metrics: reg}
	register := func(c prometheus.Collector) prometheus.Collector { return pipeline.Register(env, c) }
	first := newMetrics(serverVersion(), register)
	second := newMetrics(serverVersion(), register)
	r := &req{operation: admission.Create, resource: podsResource}
	first.exemption(r)
	second.exemption(r)
	want := []string{`pod_security_exemptions_total{request_operation="create",resource="pod",subresource=""} 2`}
	if got := counters(t, reg); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

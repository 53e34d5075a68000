package validatingadmissionpolicy_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kpipe/kpipe/internal/admission"
	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/internal/testserver"
	vap "github.com/kpipe/kpipe/plugins/admission/validatingadmissionpolicy"
)

func TestMain(m *testing.M) { testserver.Main(m) }

const benchConfig = `
policies:
- metadata: {name: pods}
  spec:
    matchConstraints:
      resourceRules:
      - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
    variables:
    - {name: images, expression: "object.spec.containers.map(c, c.image)"}
    validations:
    - expression: "variables.images.all(i, !i.endsWith(':latest'))"
      messageExpression: "'no latest images: ' + variables.images.join(', ')"
    - expression: "namespaceObject.metadata.name == request.namespace"
    - expression: "size(object.spec.containers) <= 10"
bindings:
- metadata: {name: pods}
  spec: {policyName: pods, validationActions: [Deny]}
`

// BenchmarkValidate measures the plugin's admission cost on a pod create
// with one policy of three validations and a variable, bound to every
// namespace, against the real embedded etcd behind the watch caches (the
// namespace is read from its cache for
// namespaceObject). ns/op is the plugin's cost per request.
func BenchmarkValidate(b *testing.B) {
	client := testserver.DialSharedEtcd(b)
	prefix := fmt.Sprintf("/vapbench%d/registry", time.Now().UnixNano())
	reg := api.NewRegistry(api.Resources(api.Options{EventTTL: time.Hour}))
	// Watch caches on, as the server has them by default.
	reg.AttachStorage(client, prefix, prometheus.NewRegistry(), zap.NewNop(), api.StorageOptions{Cache: func(schema.GroupResource) bool { return true }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	nsRes, _ := reg.Lookup("", "v1", "namespaces")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
	if err := nsRes.Store.Create(ctx, nsRes.Key(prefix, "", "bench"), ns, nsRes.New(), 0); err != nil {
		b.Fatal(err)
	}
	pods, _ := reg.Lookup("", "v1", "pods")
	for deadline := time.Now().Add(10 * time.Second); !nsRes.Store.(interface{ Ready() bool }).Ready(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("the namespace cache never filled")
		}
	}

	var raw map[string]any
	if err := yaml.Unmarshal([]byte(benchConfig), &raw); err != nil {
		b.Fatal(err)
	}
	cfg := &vap.Config{}
	for _, p := range raw["policies"].([]any) {
		cfg.Policies = append(cfg.Policies, p.(map[string]any))
	}
	for _, p := range raw["bindings"].([]any) {
		cfg.Bindings = append(cfg.Bindings, p.(map[string]any))
	}
	r := pipeline.NewRegistry()
	vap.Register(r)
	p, _ := r.Lookup(pipeline.KindValidatingAdmission, vap.Name)
	v, err := p.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	env := &pipeline.Env{Log: zap.NewNop(), Metrics: prometheus.NewRegistry(), Context: ctx,
		Shared: &pipeline.Shared{Resources: reg, StoragePrefix: prefix}}
	if err := v.(pipeline.Provisioner).Provision(env); err != nil {
		b.Fatal(err)
	}
	plugin := v.(admission.Validator)
	info := &request.RequestInfo{IsResourceRequest: true, Verb: "create", Resource: "pods", APIVersion: "v1", Namespace: "bench"}
	attrs := func(image string) *admission.Attributes {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "bench"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: image}, {Name: "b", Image: "busybox:1"}}}}
		op := &request.Operation{Resource: pods, Namespace: "bench", Name: "p", Object: pod, DryRun: true}
		return &admission.Attributes{Operation: admission.Create, Info: info, Op: op}
	}
	// The policy works: a latest image is refused.
	if err := plugin.Validate(ctx, attrs("nginx:latest")); err == nil {
		b.Fatal("nginx:latest admitted")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := plugin.Validate(ctx, attrs("nginx:1.27")); err != nil {
			b.Fatal(err)
		}
	}
}

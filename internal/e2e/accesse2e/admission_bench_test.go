package accesse2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kpipe/kpipe/internal/admission"
	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/internal/testserver"
	"github.com/kpipe/kpipe/plugins"
)

// BenchmarkAdmissionPlugin measures each built-in plugin's cost on a pod
// create, alone, against the real embedded etcd (plugins read namespaces,
// accounts, limit ranges, quotas and classes from storage). ns/op is the
// plugin's admission cost per request.
func BenchmarkAdmissionPlugin(b *testing.B) {
	client := testserver.DialSharedEtcd(b)
	prefix := fmt.Sprintf("/bench%d/registry", time.Now().UnixNano())
	reg := api.NewRegistry(api.Resources(api.Options{EventTTL: time.Hour}))
	// Watch caches on, as the server has them by default.
	reg.AttachStorage(client, prefix, prometheus.NewRegistry(), zap.NewNop(), api.StorageOptions{Cache: func(schema.GroupResource) bool { return true }})
	ctx := context.Background()
	put := func(group, resource, ns string, obj runtime.Object) {
		res, _ := reg.Lookup(group, "v1", resource)
		m := obj.(metav1.Object)
		if err := res.Store.Create(ctx, res.Key(prefix, ns, m.GetName()), obj, res.New(), 0); err != nil {
			b.Fatal(err)
		}
	}
	put("", "namespaces", "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}})
	put("", "serviceaccounts", "bench", &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "bench"}})
	put("", "limitranges", "bench", &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "l", Namespace: "bench"}})
	pods, _ := reg.Lookup("", "v1", "pods")
	// The plugins read through the caches: let them fill.
	for _, r := range []string{"namespaces", "serviceaccounts", "limitranges", "resourcequotas"} {
		res, _ := reg.Lookup("", "v1", r)
		c, ok := res.Store.(interface{ Ready() bool })
		if !ok {
			b.Fatalf("%s: no watch cache", r)
		}
		for deadline := time.Now().Add(10 * time.Second); !c.Ready(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				b.Fatalf("the %s cache never filled", r)
			}
		}
	}

	registry := plugins.Registry()
	env := &pipeline.Env{Log: zap.NewNop(), Metrics: prometheus.NewRegistry(), Context: ctx,
		Shared: &pipeline.Shared{Resources: reg, StoragePrefix: prefix}}
	for _, name := range []string{"NamespaceLifecycle", "NamespaceExists", "NamespaceAutoProvision", "LimitRanger", "ServiceAccount",
		"AlwaysPullImages", "Priority", "DefaultTolerationSeconds", "ResourceQuota", "PodSecurity",
		"MutatingAdmissionWebhook", "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook"} {
		for _, kind := range []pipeline.Kind{pipeline.KindMutatingAdmission, pipeline.KindValidatingAdmission} {
			p, ok := registry.Lookup(kind, name)
			if !ok {
				continue
			}
			var cfg any
			if p.Config != nil {
				cfg = p.Config()
			}
			v, err := p.New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			if pv, ok := v.(pipeline.Provisioner); ok {
				if err := pv.Provision(env); err != nil {
					b.Fatal(err)
				}
			}
			typ, call := admission.TypeAdmit, func(a *admission.Attributes) error { return v.(admission.Mutator).Admit(ctx, a) }
			if kind == pipeline.KindValidatingAdmission {
				typ, call = admission.TypeValidate, func(a *admission.Attributes) error { return v.(admission.Validator).Validate(ctx, a) }
			}
			b.Run(name+"/"+typ, func(b *testing.B) {
				info := &request.RequestInfo{IsResourceRequest: true, Verb: "create", Resource: "pods", APIVersion: "v1", Namespace: "bench"}
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					// A fresh pod each time: mutating plugins change it.
					pod := e2eutil.Pod("p")
					pod.Namespace = "bench"
					pod.Spec.ServiceAccountName = "default"
					pod.Spec.Containers[0].ImagePullPolicy = corev1.PullAlways
					op := &request.Operation{Resource: pods, Namespace: "bench", Name: "p", Object: pod, DryRun: true}
					if err := call(&admission.Attributes{Operation: admission.Create, Info: info, Op: op}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

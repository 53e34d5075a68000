package webhook

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kpipe/kpipe/internal/admission"
	"github.com/kpipe/kpipe/internal/admission/matching"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// NewDispatcher provisions what a webhook plugin needs: a watch-fed
// mirror of its configurations (admissionregistration.k8s.io/v1
// `resource`), namespace lookups, service resolution through Endpoints,
// the client cache and kube's webhook metrics on env's registry. name is
// the plugin's.
func NewDispatcher(env *pipeline.Env, name, resource string, convert func(runtime.Object) []Hook) (*Dispatcher, *Clients, error) {
	objs, err := admission.NewObjects(env)
	if err != nil {
		return nil, nil, err
	}
	res, err := objs.Resource("admissionregistration.k8s.io", "v1", resource)
	if err != nil {
		return nil, nil, err
	}
	namespaces, err := matching.NewNamespaces(objs)
	if err != nil {
		return nil, nil, err
	}
	clients := &Clients{Resolver: &EndpointResolver{Objects: objs}}
	var metrics *Metrics
	if env.Metrics != nil {
		metrics = NewMetrics(func(c prometheus.Collector) prometheus.Collector { return pipeline.Register(env, c) })
	}
	match := &RuleMatcher{Namespaces: namespaces, Type: TypeValidating, Metrics: metrics.matchConditions()}
	if resource == "mutatingwebhookconfigurations" {
		match.Type = TypeAdmit
	}
	if env.Shared != nil {
		match.Authorizer = admission.HolderAuthorizer(env.Shared.Authorizer)
	}
	d := &Dispatcher{
		Source:  &InformerSource{Informer: objs.Informer(res), Convert: convert},
		Match:   match,
		Clients: clients,
		Log:     env.Log,
		Key:     name,
		Metrics: metrics,
	}
	return d, clients, nil
}

// Package mutating is the mutating-admission stage: it runs its ordered
// list of mutating admission plugins on every write.
package mutating

import (
	"context"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/admission"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the stage's name in apiserver.yaml.
const Name = "mutating-admission"

// Register adds the stage to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindStage,
		Description: "runs the ordered list of mutating admission plugins.",
		New:         func(any) (any, error) { return &Stage{}, nil },
		Nested:      map[string]pipeline.Kind{"plugins": pipeline.KindMutatingAdmission},
		NestedDefaults: map[string][]config.Entry{
			// kube's default-on plugins built here, in kube's order.
			"plugins": {{Name: "LimitRanger"}, {Name: "ServiceAccount"}, {Name: "Priority"}, {Name: "DefaultTolerationSeconds"}, {Name: "DefaultIngressClass"}, {Name: "MutatingAdmissionWebhook"}},
		},
		Requires: []string{"decode"},
		After:    []string{"field-manager", "authorization"},
	})
}

// Stage runs the plugins in order; each may change the object, and the
// first rejection answers.
type Stage struct {
	plugins []admission.Named[admission.Mutator]
	metrics *admission.Metrics
}

// Provision implements pipeline.Provisioner.
func (s *Stage) Provision(env *pipeline.Env) error {
	for _, in := range env.Nested("plugins") {
		if m, ok := in.Value.(admission.Mutator); ok {
			s.plugins = append(s.plugins, admission.Named[admission.Mutator]{Name: in.Plugin.Name, Plugin: m})
		}
	}
	if env.Metrics != nil {
		s.metrics = admission.NewMetrics(func(c prometheus.Collector) prometheus.Collector { return pipeline.Register(env, c) })
	}
	return nil
}

// Middleware implements pipeline.Stage.
func (s *Stage) Middleware(next http.Handler) http.Handler {
	return admission.Handler(admission.TypeAdmit, s.plugins, func(p admission.Mutator, ctx context.Context, a *admission.Attributes) error {
		return p.Admit(ctx, a)
	}, s.metrics, next)
}

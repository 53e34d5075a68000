// Package validating is the validating-admission stage: it runs its
// ordered list of validating admission plugins on every write.
package validating

import (
	"context"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/admission"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the stage's name in apiserver.yaml.
const Name = "validating-admission"

// Register adds the stage to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindStage,
		Description: "runs the ordered list of validating admission plugins.",
		New:         func(any) (any, error) { return &Stage{}, nil },
		Nested:      map[string]pipeline.Kind{"plugins": pipeline.KindValidatingAdmission},
		NestedDefaults: map[string][]config.Entry{
			// kube's default-on plugins built here, in kube's order.
			"plugins": {{Name: "NamespaceLifecycle"}, {Name: "LimitRanger"}, {Name: "ServiceAccount"}, {Name: "PodSecurity"}, {Name: "Priority"}, {Name: "ValidatingAdmissionPolicy"}, {Name: "ValidatingAdmissionWebhook"}, {Name: "ResourceQuota"}},
		},
		Requires: []string{"decode"},
		After:    []string{"validate", "mutating-admission"},
	})
}

// Stage runs the plugins in order; the first rejection answers.
type Stage struct {
	plugins []admission.Named[admission.Validator]
	metrics *admission.Metrics
}

// Provision implements pipeline.Provisioner.
func (s *Stage) Provision(env *pipeline.Env) error {
	for _, in := range env.Nested("plugins") {
		if v, ok := in.Value.(admission.Validator); ok {
			s.plugins = append(s.plugins, admission.Named[admission.Validator]{Name: in.Plugin.Name, Plugin: v})
		}
	}
	if env.Metrics != nil {
		s.metrics = admission.NewMetrics(func(c prometheus.Collector) prometheus.Collector { return pipeline.Register(env, c) })
	}
	return nil
}

// Middleware implements pipeline.Stage.
func (s *Stage) Middleware(next http.Handler) http.Handler {
	return admission.Handler(admission.TypeValidate, s.plugins, func(p admission.Validator, ctx context.Context, a *admission.Attributes) error {
		return p.Validate(ctx, a)
	}, s.metrics, next)
}

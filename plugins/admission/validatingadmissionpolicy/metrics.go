package validatingadmissionpolicy

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kpipe/kpipe/internal/admission"
	policycel "github.com/kpipe/kpipe/internal/admission/cel"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// metrics are kube's validating admission policy metrics, with its names
// and labels: a check per decision that is not a plain admit.
type metrics struct {
	checks  *prometheus.CounterVec
	latency *prometheus.HistogramVec
	match   *admission.MatchConditionMetrics
}

func newMetrics(env *pipeline.Env) *metrics {
	labels := []string{"policy", "policy_binding", "error_type", "enforcement_action"}
	return &metrics{
		checks: pipeline.Register(env, prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "apiserver", Subsystem: "validating_admission_policy", Name: "check_total",
			Help: "Validation admission policy check total, labeled by policy and further identified by binding and enforcement action taken.",
		}, labels)),
		latency: pipeline.Register(env, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "apiserver", Subsystem: "validating_admission_policy", Name: "check_duration_seconds",
			Help:    "Validation admission latency for individual validation expressions in seconds, labeled by policy and further including binding and enforcement action taken.",
			Buckets: []float64{0.0000005, 0.001, 0.01, 0.1, 1.0},
		}, labels)),
		match: admission.NewMatchConditionMetrics(func(c prometheus.Collector) prometheus.Collector { return pipeline.Register(env, c) }),
	}
}

// matchConditions returns the match condition metrics; nil (recording
// nothing) without metrics.
func (m *metrics) matchConditions() *admission.MatchConditionMetrics {
	if m == nil {
		return nil
	}
	return m.match
}

// observe records one decision; action is allow, deny, warn or audit.
func (m *metrics) observe(policy, binding string, d decision, action string) {
	if m == nil {
		return
	}
	t := d.errType
	if t == "" {
		t = "no_error"
	}
	m.checks.WithLabelValues(policy, binding, t, action).Inc()
	m.latency.WithLabelValues(policy, binding, t, action).Observe(d.elapsed.Seconds())
}

// errorType is kube's ValidationErrorType of an evaluation error.
func errorType(msg string) string {
	switch {
	case strings.HasPrefix(msg, "compilation error:"):
		return "compile_error"
	case strings.Contains(msg, policycel.ErrOutOfBudget.Error()):
		return "out_of_budget"
	}
	return "invalid_error"
}

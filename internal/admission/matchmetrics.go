package admission

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The `kind` label of kube's match condition metrics.
const (
	MatchKindWebhook = "webhook"
	MatchKindPolicy  = "policy"
)

// MatchConditionMetrics are kube's match condition metrics, which
// webhooks and policies share.
type MatchConditionMetrics struct {
	errors     *prometheus.CounterVec
	exclusions *prometheus.CounterVec
	seconds    *prometheus.HistogramVec
}

// NewMatchConditionMetrics builds the metrics and registers them with
// register, which returns the collector already registered under the
// same descriptor (every plugin using them, and reloads, share them).
func NewMatchConditionMetrics(register func(prometheus.Collector) prometheus.Collector) *MatchConditionMetrics {
	labels := []string{"name", "kind", "type", "operation"}
	return &MatchConditionMetrics{
		errors: register(prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: Subsystem, Name: "match_condition_evaluation_errors_total",
			Help: "Admission match condition evaluation errors count, identified by name of resource containing the match condition and broken out for each kind containing matchConditions (webhook or policy), operation and admission type (validate or admit).",
		}, labels)).(*prometheus.CounterVec),
		exclusions: register(prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: Subsystem, Name: "match_condition_exclusions_total",
			Help: "Admission match condition evaluation exclusions count, identified by name of resource containing the match condition and broken out for each kind containing matchConditions (webhook or policy), operation and admission type (validate or admit).",
		}, labels)).(*prometheus.CounterVec),
		seconds: register(prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: Subsystem, Name: "match_condition_evaluation_seconds",
			Help:    "Admission match condition evaluation time in seconds, identified by name and broken out for each kind containing matchConditions (webhook or policy), operation and type (validate or admit).",
			Buckets: []float64{0.001, 0.005, 0.01, 0.025, 0.1, 0.2, 0.25},
		}, labels)).(*prometheus.HistogramVec),
	}
}

// ObserveEvaluation records one evaluation of name's match conditions as
// kube's matcher does: each condition that failed to evaluate (evalErrors)
// and, unless every condition was true, the time it took.
func (m *MatchConditionMetrics) ObserveEvaluation(name, kind, typ, op string, elapsed time.Duration, allTrue bool, evalErrors int) {
	if m == nil {
		return
	}
	if evalErrors > 0 {
		m.errors.WithLabelValues(name, kind, typ, op).Add(float64(evalErrors))
	}
	if !allTrue {
		m.seconds.WithLabelValues(name, kind, typ, op).Observe(elapsed.Seconds())
	}
}

// ObserveExclusion records a webhook its match conditions left out.
func (m *MatchConditionMetrics) ObserveExclusion(name, kind, typ, op string) {
	if m == nil {
		return
	}
	m.exclusions.WithLabelValues(name, kind, typ, op).Inc()
}

package webhook

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kpipe/kpipe/internal/admission"
)

// The `type` label of kube's webhook metrics: "admit" for mutating
// webhooks, "validating" for validating ones (kube's values).
const (
	TypeAdmit      = "admit"
	TypeValidating = "validating"
)

// kube's error_type values of the rejection count.
const (
	errorCalling  = "calling_webhook_error"
	errorInternal = "apiserver_internal_error"
	errorNone     = "no_error"
)

// Metrics are kube's admission webhook metrics.
type Metrics struct {
	latency   *prometheus.HistogramVec
	rejection *prometheus.CounterVec
	request   *prometheus.CounterVec
	failOpen  *prometheus.CounterVec
	match     *admission.MatchConditionMetrics
}

// NewMetrics builds the metrics and registers them with register, which
// returns the collector already registered under the same descriptor
// (both webhook plugins, and reloads, share them).
func NewMetrics(register func(prometheus.Collector) prometheus.Collector) *Metrics {
	ns, sub := admission.Namespace, admission.Subsystem
	return &Metrics{
		latency: register(prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Subsystem: sub, Name: "webhook_admission_duration_seconds",
			Help:    "Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
			Buckets: []float64{0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25},
		}, []string{"name", "type", "operation", "rejected"})).(*prometheus.HistogramVec),
		rejection: register(prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "webhook_rejection_count",
			Help: "Admission webhook rejection count, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify an error type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero rejection code if the webhook rejects the request with an HTTP status code (honored by the apiserver when the code is greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.",
		}, []string{"name", "type", "operation", "error_type", "rejection_code"})).(*prometheus.CounterVec),
		request: register(prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "webhook_request_total",
			Help: "Admission webhook request total, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify whether the request was rejected or not and an HTTP status code. Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.",
		}, []string{"name", "type", "operation", "code", "rejected"})).(*prometheus.CounterVec),
		failOpen: register(prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "webhook_fail_open_count",
			Help: "Admission webhook fail open count, identified by name and broken out for each admission type (validating or admit).",
		}, []string{"name", "type"})).(*prometheus.CounterVec),
		match: admission.NewMatchConditionMetrics(register),
	}
}

func truncate(code int) string {
	if code > 600 {
		code = 600
	}
	return strconv.Itoa(code)
}

// observe records one call's outcome as kube's dispatchers do: err is
// nil, a *CallError (rejecting only under failurePolicy Fail), a
// *Rejection, or any other error (an internal error, code 0).
func (m *Metrics) observe(h *Hook, typ, op string, elapsed time.Duration, err error) {
	if m == nil {
		return
	}
	rejected, code := false, 200
	var ce *CallError
	var rj *Rejection
	switch {
	case err == nil:
	case errors.As(err, &ce):
		code = int(ce.Status.ErrStatus.Code)
		if !h.Ignore() {
			rejected = true
			if !errors.Is(ce.Reason, context.Canceled) {
				m.rejection.WithLabelValues(h.Name, typ, op, errorCalling, truncate(code)).Inc()
			}
		}
	case errors.As(err, &rj):
		rejected, code = true, int(rj.Status.ErrStatus.Code)
		m.rejection.WithLabelValues(h.Name, typ, op, errorNone, truncate(code)).Inc()
	default:
		rejected, code = true, 0
		m.rejection.WithLabelValues(h.Name, typ, op, errorInternal, "0").Inc()
	}
	m.request.WithLabelValues(h.Name, typ, op, truncate(code), strconv.FormatBool(rejected)).Inc()
	m.latency.WithLabelValues(h.Name, typ, op, strconv.FormatBool(rejected)).Observe(elapsed.Seconds())
}

func (m *Metrics) observeFailOpen(h *Hook, typ string) {
	if m == nil {
		return
	}
	m.failOpen.WithLabelValues(h.Name, typ).Inc()
}

// matchConditions returns the match condition metrics; nil (recording
// nothing) without metrics.
func (m *Metrics) matchConditions() *admission.MatchConditionMetrics {
	if m == nil {
		return nil
	}
	return m.match
}

package podsecurity

import (
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	psaapi "k8s.io/pod-security-admission/api"
)

// Decisions and modes, the values of kube's metric labels.
const (
	decisionAllow = "allow"
	decisionDeny  = "deny"

	modeEnforce = "enforce"
	modeAudit   = "audit"
	modeWarn    = "warn"
)

// metrics are kube's pod_security_* counters, under kube's names (the
// module's metrics package names them without a subsystem, and dashboards
// built for kube-apiserver look for them so).
type metrics struct {
	// version is the server's minor, the cut-off above which a policy
	// version is reported as "future".
	version     psaapi.Version
	evaluations *prometheus.CounterVec
	exemptions  *prometheus.CounterVec
	errors      *prometheus.CounterVec
}

func newMetrics(version psaapi.Version, register func(prometheus.Collector) prometheus.Collector) *metrics {
	m := &metrics{version: version}
	m.evaluations = register(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pod_security_evaluations_total",
		Help: "Number of policy evaluations that occurred, not counting ignored or exempt requests.",
	}, []string{"decision", "policy_level", "policy_version", "mode", "request_operation", "resource", "subresource"})).(*prometheus.CounterVec)
	m.exemptions = register(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pod_security_exemptions_total",
		Help: "Number of exempt requests, not counting ignored or out of scope requests.",
	}, []string{"request_operation", "resource", "subresource"})).(*prometheus.CounterVec)
	m.errors = register(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pod_security_errors_total",
		Help: "Number of errors preventing normal evaluation. Non-fatal errors may result in the latest restricted profile being used for evaluation.",
	}, []string{"fatal", "request_operation", "resource", "subresource"})).(*prometheus.CounterVec)
	return m
}

func (m *metrics) evaluation(decision string, lv psaapi.LevelVersion, mode string, r *req) {
	if m == nil {
		return
	}
	var version string
	switch {
	case lv.Version.Latest() || lv.Level == psaapi.LevelPrivileged: // privileged is always effectively latest
		version = psaapi.VersionLatest
	case !m.version.Older(lv.Version):
		version = lv.Version.String()
	default:
		version = "future"
	}
	m.evaluations.WithLabelValues(decision, string(lv.Level), version, mode, operationLabel(r.operation), resourceLabel(r), r.subresource).Inc()
}

func (m *metrics) exemption(r *req) {
	if m == nil {
		return
	}
	m.exemptions.WithLabelValues(operationLabel(r.operation), resourceLabel(r), r.subresource).Inc()
}

func (m *metrics) error(fatal bool, r *req) {
	if m == nil {
		return
	}
	m.errors.WithLabelValues(strconv.FormatBool(fatal), operationLabel(r.operation), resourceLabel(r), r.subresource).Inc()
}

func operationLabel(op string) string { return strings.ToLower(op) }

func resourceLabel(r *req) string {
	switch r.resource {
	case podsResource:
		return "pod"
	case namespacesResource:
		return "namespace"
	}
	return "controller"
}

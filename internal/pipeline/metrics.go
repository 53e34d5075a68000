package pipeline

import (
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kpipe/kpipe/internal/request"
)

// metrics are the engine's own series and kube's standard request series,
// with kube's names, labels and buckets so existing dashboards work.
type metrics struct {
	stageDuration   *prometheus.HistogramVec
	stageRejections *prometheus.CounterVec
	requests        *prometheus.CounterVec
	requestDuration *prometheus.HistogramVec
	responseSizes   *prometheus.HistogramVec
	inflight        *prometheus.GaugeVec
	reloads         *prometheus.CounterVec
	lastReload      prometheus.Gauge
	generation      prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		stageDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "apiserver", Subsystem: "pipeline", Name: "stage_duration_seconds",
			Help: "Time spent in each pipeline stage itself, not counting the stages after it.",
			// Stages are fast: start at 10µs, as kube's filter latency does at 100µs.
			Buckets: []float64{0.00001, 0.00003, 0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 5, 10, 30},
		}, []string{"stage", "verb"}),
		stageRejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "apiserver", Subsystem: "pipeline", Name: "stage_rejections_total",
			Help: "Requests a stage answered instead of passing on, by stage and HTTP code.",
		}, []string{"stage", "code"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "apiserver", Name: "request_total",
			Help: "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
		}, []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component", "code"}),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "apiserver", Name: "request_duration_seconds",
			Help:    "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
			Buckets: []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60},
		}, []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"}),
		responseSizes: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "apiserver", Name: "response_sizes",
			Help:    "Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.",
			Buckets: prometheus.ExponentialBuckets(1000, 10.0, 7),
		}, []string{"verb", "group", "version", "resource", "subresource", "scope", "component"}),
		inflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "apiserver", Name: "current_inflight_requests",
			Help: "Number of requests currently being served, by kind (readOnly or mutating).",
		}, []string{"request_kind"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "apiserver", Name: "config_reloads_total",
			Help: "Configuration reload attempts by result.",
		}, []string{"result"}),
		lastReload: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "apiserver", Name: "config_last_reload_success_timestamp_seconds",
			Help: "Unix time of the last successful configuration load.",
		}),
		generation: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "apiserver", Subsystem: "pipeline", Name: "generation",
			Help: "Generation of the active pipeline; it rises by one on each successful reload.",
		}),
	}
	reg.MustRegister(m.stageDuration, m.stageRejections, m.requests, m.requestDuration,
		m.responseSizes, m.inflight, m.reloads, m.lastReload, m.generation)
	// Report both kinds from the start, as kube does.
	m.inflight.WithLabelValues("readOnly")
	m.inflight.WithLabelValues("mutating")
	m.reloads.WithLabelValues("success")
	m.reloads.WithLabelValues("failure")
	return m
}

// connectSubresources are kube's CONNECT-verb subresources.
var connectSubresources = map[string]bool{"proxy": true, "attach": true, "exec": true, "portforward": true}

// metricVerbs are every value reportedVerb returns.
var metricVerbs = [...]string{"GET", "LIST", "WATCH", "POST", "PUT", "PATCH", "APPLY",
	"DELETE", "DELETECOLLECTION", "CONNECT", "HEAD", "OPTIONS", "OTHER"}

func verbIndex(v string) int {
	for i, mv := range metricVerbs {
		if mv == v {
			return i
		}
	}
	return len(metricVerbs) - 1
}

// reportedVerb is kube's metric verb: LIST, WATCH, GET, POST, PUT, PATCH,
// APPLY, DELETE, DELETECOLLECTION, CONNECT, or the method of a
// non-resource request (OTHER when it is not a known method).
func reportedVerb(r *http.Request, info *request.RequestInfo) string {
	if info == nil || !info.IsResourceRequest {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
			http.MethodPatch, http.MethodDelete, http.MethodOptions:
			return r.Method
		}
		return "OTHER"
	}
	if connectSubresources[info.Subresource] {
		return "CONNECT"
	}
	switch info.Verb {
	case "get":
		return "GET"
	case "list":
		return "LIST"
	case "watch":
		return "WATCH"
	case "create":
		return "POST"
	case "update":
		return "PUT"
	case "patch":
		if r.Header.Get("Content-Type") == "application/apply-patch+yaml" {
			return "APPLY"
		}
		return "PATCH"
	case "delete":
		return "DELETE"
	case "deletecollection":
		return "DELETECOLLECTION"
	}
	return "OTHER"
}

// reportedScope is kube's CleanScope.
func reportedScope(info *request.RequestInfo) string {
	switch {
	case info == nil:
		return ""
	case info.Name != "" || info.Verb == "create":
		return "resource"
	case info.Namespace != "":
		return "namespace"
	case info.IsResourceRequest:
		return "cluster"
	}
	return ""
}

// reportedDryRun is kube's cleanDryRun: "" without dryRun, the sorted,
// deduplicated values when valid, "invalid" otherwise.
func reportedDryRun(r *http.Request) string {
	if !strings.Contains(r.URL.RawQuery, "dryRun") {
		return ""
	}
	vals := r.URL.Query()["dryRun"]
	seen := map[string]bool{}
	var out []string
	for _, v := range vals {
		if v != "All" {
			return "invalid"
		}
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// observeRequest records kube's request series once the request is done.
func (m *metrics) observeRequest(r *http.Request, info *request.RequestInfo, code int, size int64, seconds float64) {
	verb := reportedVerb(r, info)
	scope := reportedScope(info)
	var group, version, resource, subresource string
	if info != nil && info.IsResourceRequest {
		group, version, resource, subresource = info.APIGroup, info.APIVersion, info.Resource, info.Subresource
	}
	dryRun := reportedDryRun(r)
	m.requests.WithLabelValues(verb, dryRun, group, version, resource, subresource, scope, "apiserver", strconv.Itoa(code)).Inc()
	if verb != "WATCH" && verb != "CONNECT" {
		m.requestDuration.WithLabelValues(verb, dryRun, group, version, resource, subresource, scope, "apiserver").Observe(seconds)
		m.responseSizes.WithLabelValues(verb, group, version, resource, subresource, scope, "apiserver").Observe(float64(size))
	}
}

// requestKind is the label of apiserver_current_inflight_requests. It is
// decided from the method at the door, before request-info has run.
func requestKind(r *http.Request) string {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return "readOnly"
	}
	return "mutating"
}

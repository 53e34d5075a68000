package cacher

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are kube's watch cache metrics, shared by every cache of a
// server.
type Metrics struct {
	lists           *prometheus.CounterVec
	dispatched      *prometheus.CounterVec
	initializations *prometheus.CounterVec
	resourceVersion *prometheus.GaugeVec
}

var (
	metricsMu  sync.Mutex
	byRegistry = map[prometheus.Registerer]*Metrics{}
)

// NewMetrics registers the metrics on reg once and returns them; nil reg
// means no metrics.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	if reg == nil {
		return nil
	}
	metricsMu.Lock()
	defer metricsMu.Unlock()
	if m, ok := byRegistry[reg]; ok {
		return m
	}
	m := &Metrics{
		lists: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_cache_list_total",
			Help: "Number of LIST requests served from watch cache",
		}, []string{"resource_prefix", "index"}),
		dispatched: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_watch_cache_events_dispatched_total",
			Help: "Counter of events dispatched in watch cache broken by resource type.",
		}, []string{"group", "resource"}),
		initializations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_watch_cache_initializations_total",
			Help: "Counter of watch cache initializations broken by resource type.",
		}, []string{"group", "resource"}),
		resourceVersion: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_watch_cache_resource_version",
			Help: "Current resource version of watch cache broken by resource type.",
		}, []string{"group", "resource"}),
	}
	reg.MustRegister(m.lists, m.dispatched, m.initializations, m.resourceVersion)
	byRegistry[reg] = m
	return m
}

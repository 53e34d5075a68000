package store

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// metrics are kube's etcd3 storage metrics, with kube's names, labels and
// buckets (k8s.io/apiserver/pkg/storage/etcd3/metrics). A nil *metrics
// records nothing.
type metrics struct {
	latency         *prometheus.HistogramVec
	requests        *prometheus.CounterVec
	requestErrors   *prometheus.CounterVec
	objects         *prometheus.GaugeVec
	resourceObjects *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	if reg == nil {
		return nil
	}
	return &metrics{
		latency: register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "etcd_request_duration_seconds",
			Help: "Etcd request latency in seconds for each operation and object type.",
			Buckets: []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3,
				4, 5, 6, 8, 10, 15, 20, 30, 45, 60},
		}, []string{"operation", "group", "resource"})),
		requests: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "etcd_requests_total",
			Help: "Etcd request counts for each operation and object type.",
		}, []string{"operation", "group", "resource"})),
		requestErrors: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "etcd_request_errors_total",
			Help: "Etcd failed request counts for each operation and object type.",
		}, []string{"operation", "group", "resource"})),
		objects: register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_storage_objects",
			Help: "[DEPRECATED, consider using apiserver_resource_objects instead] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
		}, []string{"resource"})),
		resourceObjects: register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_resource_objects",
			Help: "Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
		}, []string{"group", "resource"})),
	}
}

// register registers c, or returns the collector already registered under
// the same description, so every store of a server can pass the same
// registerer.
func register[T prometheus.Collector](reg prometheus.Registerer, c T) T {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(T); ok {
				return existing
			}
		}
		// A clashing, different metric: record into the unregistered
		// collector rather than fail the store.
	}
	return c
}

func (m *metrics) observe(op string, gr schema.GroupResource, start time.Time, err error) {
	if m == nil {
		return
	}
	m.latency.WithLabelValues(op, gr.Group, gr.Resource).Observe(time.Since(start).Seconds())
	m.requests.WithLabelValues(op, gr.Group, gr.Resource).Inc()
	if err != nil {
		m.requestErrors.WithLabelValues(op, gr.Group, gr.Resource).Inc()
	}
}

func (m *metrics) setObjects(gr schema.GroupResource, n float64) {
	if m == nil {
		return
	}
	m.objects.WithLabelValues(gr.String()).Set(n)
	m.resourceObjects.WithLabelValues(gr.Group, gr.Resource).Set(n)
}

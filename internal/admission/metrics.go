package admission

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Namespace and Subsystem of kube's admission metrics. Plugins with
// metrics of their own (webhooks) register them on the Env's registry
// under the same names, with Buckets or their own.
const (
	Namespace = "apiserver"
	Subsystem = "admission"
)

// Buckets are kube's admission latency buckets, in seconds.
var Buckets = []float64{0.005, 0.025, 0.1, 0.5, 1.0, 2.5}

// Metrics are kube's step and per-controller admission histograms.
type Metrics struct {
	step       *prometheus.HistogramVec
	controller *prometheus.HistogramVec
	// The histograms by their labels, looked up once: WithLabelValues
	// hashes its labels under a lock, once per plugin per request.
	mu          sync.RWMutex
	steps       map[stepLabels]prometheus.Observer
	controllers map[controllerLabels]prometheus.Observer
}

type stepLabels struct {
	typ, op  string
	rejected bool
}

type controllerLabels struct {
	name string
	stepLabels
}

// NewMetrics builds the histograms and registers them with register,
// which returns the collector already registered under the same
// descriptor (both admission stages, and reloads, share them).
func NewMetrics(register func(prometheus.Collector) prometheus.Collector) *Metrics {
	step := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: Subsystem,
		Name:    "step_admission_duration_seconds",
		Help:    "Admission sub-step latency histogram in seconds, broken out for each operation and API resource and step type (validate or admit).",
		Buckets: Buckets,
	}, []string{"type", "operation", "rejected"})
	controller := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: Subsystem,
		Name:    "controller_admission_duration_seconds",
		Help:    "Admission controller latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
		Buckets: Buckets,
	}, []string{"name", "type", "operation", "rejected"})
	return &Metrics{
		step:        register(step).(*prometheus.HistogramVec),
		controller:  register(controller).(*prometheus.HistogramVec),
		steps:       map[stepLabels]prometheus.Observer{},
		controllers: map[controllerLabels]prometheus.Observer{},
	}
}

func (m *Metrics) observeStep(typ, op string, rejected bool, d time.Duration) {
	if m == nil {
		return
	}
	k := stepLabels{typ, op, rejected}
	m.mu.RLock()
	o, ok := m.steps[k]
	m.mu.RUnlock()
	if !ok {
		o = m.step.WithLabelValues(typ, op, strconv.FormatBool(rejected))
		m.mu.Lock()
		m.steps[k] = o
		m.mu.Unlock()
	}
	o.Observe(d.Seconds())
}

func (m *Metrics) observePlugin(name, typ, op string, rejected bool, d time.Duration) {
	if m == nil {
		return
	}
	k := controllerLabels{name, stepLabels{typ, op, rejected}}
	m.mu.RLock()
	o, ok := m.controllers[k]
	m.mu.RUnlock()
	if !ok {
		o = m.controller.WithLabelValues(name, typ, op, strconv.FormatBool(rejected))
		m.mu.Lock()
		m.controllers[k] = o
		m.mu.Unlock()
	}
	o.Observe(d.Seconds())
}

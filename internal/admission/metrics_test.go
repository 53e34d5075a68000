package admission

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestMetricsObserveByLabels: the cached observers count each label set
// apart, as WithLabelValues would.
func TestMetricsObserveByLabels(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(func(c prometheus.Collector) prometheus.Collector { reg.MustRegister(c); return c })
	for range 3 {
		m.observePlugin("A", "validate", "CREATE", false, time.Millisecond)
		m.observeStep("validate", "CREATE", false, time.Millisecond)
	}
	m.observePlugin("A", "validate", "CREATE", true, time.Millisecond)
	m.observePlugin("B", "admit", "UPDATE", false, time.Millisecond)
	m.observeStep("admit", "UPDATE", true, time.Millisecond)
	count := func(h *prometheus.HistogramVec, labels ...string) uint64 {
		t.Helper()
		o, err := h.GetMetricWithLabelValues(labels...)
		if err != nil {
			t.Fatal(err)
		}
		var d dto.Metric
		if err := o.(prometheus.Metric).Write(&d); err != nil {
			t.Fatal(err)
		}
		return d.GetHistogram().GetSampleCount()
	}
	for _, c := range []struct {
		h      *prometheus.HistogramVec
		labels []string
		want   uint64
	}{
		{m.controller, []string{"A", "validate", "CREATE", "false"}, 3},
		{m.controller, []string{"A", "validate", "CREATE", "true"}, 1},
		{m.controller, []string{"B", "admit", "UPDATE", "false"}, 1},
		{m.step, []string{"validate", "CREATE", "false"}, 3},
		{m.step, []string{"admit", "UPDATE", "true"}, 1},
	} {
		if got := count(c.h, c.labels...); got != c.want {
			t.Errorf("%v: %d observations, want %d", c.labels, got, c.want)
		}
	}
}

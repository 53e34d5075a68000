package bench

import (
	"math"
	"slices"
	"time"
)

// Result is one workload against one target: the row of the table and one
// JSON line.
type Result struct {
	Workload string `json:"workload"`
	// Target is "apiserver" (through the kubeconfig) or "etcd" (the bare
	// etcd baseline).
	Target      string  `json:"target"`
	Concurrency int     `json:"concurrency"`
	Ops         int     `json:"ops"`
	Errors      int     `json:"errors"`
	Seconds     float64 `json:"seconds"`
	OpsPerSec   float64 `json:"ops_per_sec"`
	P50ms       float64 `json:"p50_ms"`
	P90ms       float64 `json:"p90_ms"`
	P99ms       float64 `json:"p99_ms"`
	Maxms       float64 `json:"max_ms"`
	// RatioOps is a create or get row's ops/s over the etcd create
	// baseline's, RatioP99 a create row's p99 over the baseline's; absent
	// without a baseline.
	RatioOps float64 `json:"ratio_ops,omitempty"`
	RatioP99 float64 `json:"ratio_p99,omitempty"`
	// Watch only: watchers, writes, events expected and not received, and
	// events received out of resourceVersion order. Latency is the
	// delivery lag per event.
	Watchers   int `json:"watchers,omitempty"`
	Writes     int `json:"writes,omitempty"`
	Missed     int `json:"missed,omitempty"`
	OutOfOrder int `json:"out_of_order,omitempty"`
	// FirstErrors are up to three distinct error messages, for the reader.
	FirstErrors []string `json:"first_errors,omitempty"`
}

// summarize fills the throughput and the latency percentiles from samples.
// lat is sorted in place.
func (r *Result) summarize(lat []time.Duration, elapsed time.Duration) {
	r.Seconds = elapsed.Seconds()
	if elapsed > 0 {
		r.OpsPerSec = float64(r.Ops-r.Errors) / elapsed.Seconds()
	}
	slices.Sort(lat)
	r.P50ms = ms(percentile(lat, 0.50))
	r.P90ms = ms(percentile(lat, 0.90))
	r.P99ms = ms(percentile(lat, 0.99))
	if len(lat) > 0 {
		r.Maxms = ms(lat[len(lat)-1])
	}
}

// percentile is the nearest-rank percentile of sorted samples.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// applyBaseline sets the ratios of every apiserver row against the etcd
// create baseline.
func applyBaseline(rs []Result) {
	var base *Result
	for i := range rs {
		if rs[i].Target == TargetEtcd && rs[i].Workload == "create" {
			base = &rs[i]
		}
	}
	if base == nil || base.OpsPerSec == 0 {
		return
	}
	for i := range rs {
		r := &rs[i]
		// The targets compare creates and gets with the baseline's
		// creates; a list or a watch event is not the same unit of work.
		if r.Target != TargetAPIServer || (r.Workload != "create" && r.Workload != "get") {
			continue
		}
		r.RatioOps = round3(r.OpsPerSec / base.OpsPerSec)
		if r.Workload == "create" && base.P99ms > 0 {
			r.RatioP99 = round3(r.P99ms / base.P99ms)
		}
	}
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

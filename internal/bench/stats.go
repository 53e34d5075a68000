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
	// Target is "apiserver" (through the kubeconfig), "floor" (the floor
	// server, floor.go) or "etcd" (the bare etcd baseline).
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
	// RatioFloorOps and RatioFloorP99 are an apiserver create or get row's
	// ops/s and p99 over the floor's row of the same workload; absent
	// without a floor row.
	RatioFloorOps float64 `json:"ratio_floor_ops,omitempty"`
	RatioFloorP99 float64 `json:"ratio_floor_p99,omitempty"`
	// Watch only: watchers, writes, events expected and not received, and
	// events received out of resourceVersion order. Latency is the
	// delivery lag per event.
	Watchers   int `json:"watchers,omitempty"`
	Writes     int `json:"writes,omitempty"`
	Missed     int `json:"missed,omitempty"`
	OutOfOrder int `json:"out_of_order,omitempty"`
	// WriteSeconds is when the last write was acknowledged, from the
	// first write's start; Seconds is when the last event arrived. A last
	// event long after the last write means delivery fell behind the
	// writes, a lag that grows with the run; close to it, a steady queue.
	WriteSeconds float64 `json:"write_seconds,omitempty"`
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

// applyBaseline sets the ratios of the apiserver and floor rows against
// the etcd create baseline, and of the apiserver rows against the floor's.
func applyBaseline(rs []Result) {
	var base *Result
	floor := map[string]*Result{}
	for i := range rs {
		switch rs[i].Target {
		case TargetEtcd:
			if rs[i].Workload == "create" {
				base = &rs[i]
			}
		case TargetFloor:
			floor[rs[i].Workload] = &rs[i]
		}
	}
	for i := range rs {
		r := &rs[i]
		// The targets compare creates and gets with the baseline's
		// creates; a list or a watch event is not the same unit of work.
		if r.Workload != "create" && r.Workload != "get" {
			continue
		}
		if base != nil && base.OpsPerSec > 0 && (r.Target == TargetAPIServer || r.Target == TargetFloor) {
			r.RatioOps = round3(r.OpsPerSec / base.OpsPerSec)
			if r.Workload == "create" && base.P99ms > 0 {
				r.RatioP99 = round3(r.P99ms / base.P99ms)
			}
		}
		// The floor did the same workload: both ratios are like for like.
		if f := floor[r.Workload]; f != nil && r.Target == TargetAPIServer && f.OpsPerSec > 0 {
			r.RatioFloorOps = round3(r.OpsPerSec / f.OpsPerSec)
			if f.P99ms > 0 {
				r.RatioFloorP99 = round3(r.P99ms / f.P99ms)
			}
		}
	}
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

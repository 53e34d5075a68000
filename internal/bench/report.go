package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes one JSON object per result, one a line.
func WriteJSON(w io.Writer, rs []Result) error {
	enc := json.NewEncoder(w)
	for _, r := range rs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// WriteTable writes the results as an aligned table for people.
func WriteTable(w io.Writer, rs []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "vs etcd create"
	for _, r := range rs {
		if r.RatioFloorOps != 0 {
			head += " | floor"
			break
		}
	}
	fmt.Fprintf(tw, "workload\ttarget\tconc\tops\terrors\tops/s\tp50 ms\tp90 ms\tp99 ms\tmax ms\t%s\t\n", head)
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%.2f\t%.2f\t%.2f\t%.2f\t%s\t\n",
			r.Workload, r.Target, r.Concurrency, r.Ops, r.Errors, rate(r.OpsPerSec),
			r.P50ms, r.P90ms, r.P99ms, r.Maxms, ratio(r))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rs {
		if r.Watchers > 0 {
			fmt.Fprintf(w, "watch: %d watchers, %d writes, %d events expected, %d missed, %d out of order; writes acknowledged within %.2f s, last event at %.2f s; latency is the delivery lag per event from the write's acknowledgement\n",
				r.Watchers, r.Writes, r.Ops, r.Missed, r.OutOfOrder, r.WriteSeconds, r.Seconds)
		}
		if len(r.FirstErrors) > 0 {
			fmt.Fprintf(w, "%s %s errors: %s\n", r.Workload, r.Target, strings.Join(r.FirstErrors, "; "))
		}
	}
	return nil
}

// ratio is the last column: the ratios to the etcd create baseline, then
// the throughput's ratio to the floor.
func ratio(r Result) string {
	var parts []string
	switch {
	case r.RatioP99 != 0:
		parts = append(parts, fmt.Sprintf("%.2fx ops/s, %.2fx p99", r.RatioOps, r.RatioP99))
	case r.RatioOps != 0:
		parts = append(parts, fmt.Sprintf("%.2fx ops/s", r.RatioOps))
	}
	if r.RatioFloorOps != 0 {
		parts = append(parts, fmt.Sprintf("%.2fx floor", r.RatioFloorOps))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " | ")
}

// rate keeps two significant figures for slow workloads (lists).
func rate(f float64) string {
	if f < 10 {
		return fmt.Sprintf("%.2f", f)
	}
	return fmt.Sprintf("%.0f", f)
}

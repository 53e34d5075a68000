package bench

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var lat []time.Duration
	for i := 1; i <= 100; i++ {
		lat = append(lat, time.Duration(i)*time.Millisecond)
	}
	cases := []struct {
		name string
		p    float64
		want time.Duration
	}{
		{name: "p50", p: 0.50, want: 50 * time.Millisecond},
		{name: "p90", p: 0.90, want: 90 * time.Millisecond},
		{name: "p99", p: 0.99, want: 99 * time.Millisecond},
		{name: "p100", p: 1, want: 100 * time.Millisecond},
		{name: "p0 is the smallest", p: 0, want: time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := percentile(lat, c.p); got != c.want {
				t.Errorf("percentile(%v) = %v, want %v", c.p, got, c.want)
			}
		})
	}
	if got := percentile(nil, 0.5); got != 0 {
		t.Errorf("percentile of nothing = %v", got)
	}
}

func TestSummarize(t *testing.T) {
	r := Result{Ops: 4, Errors: 1}
	r.summarize([]time.Duration{4 * time.Millisecond, time.Millisecond, 3 * time.Millisecond, 2 * time.Millisecond}, 2*time.Second)
	if r.OpsPerSec != 1.5 || r.P50ms != 2 || r.P99ms != 4 || r.Maxms != 4 || r.Seconds != 2 {
		t.Errorf("summary = %+v", r)
	}
}

func TestApplyBaseline(t *testing.T) {
	rs := []Result{
		{Workload: "create", Target: TargetAPIServer, OpsPerSec: 600, P99ms: 30},
		{Workload: "get", Target: TargetAPIServer, OpsPerSec: 3000, P99ms: 5},
		{Workload: "list", Target: TargetAPIServer, OpsPerSec: 10},
		{Workload: "create", Target: TargetEtcd, OpsPerSec: 1000, P99ms: 20},
	}
	applyBaseline(rs)
	if rs[0].RatioOps != 0.6 || rs[0].RatioP99 != 1.5 {
		t.Errorf("create ratios = %v, %v; want 0.6, 1.5", rs[0].RatioOps, rs[0].RatioP99)
	}
	if rs[1].RatioOps != 3 || rs[1].RatioP99 != 0 {
		t.Errorf("get ratios = %v, %v; want 3, none", rs[1].RatioOps, rs[1].RatioP99)
	}
	if rs[2].RatioOps != 0 || rs[3].RatioOps != 0 {
		t.Errorf("list or baseline got a ratio: %+v %+v", rs[2], rs[3])
	}
}

func TestReport(t *testing.T) {
	rs := []Result{
		{Workload: "create", Target: TargetAPIServer, Concurrency: 64, Ops: 10, OpsPerSec: 600, P99ms: 30, RatioOps: 0.6, RatioP99: 1.5},
		{Workload: "watch", Target: TargetAPIServer, Ops: 40, Watchers: 4, Writes: 10, Seconds: 1.5, WriteSeconds: 1.25, FirstErrors: []string{"boom"}},
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, rs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(js.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 JSON lines, got %q", js.String())
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"workload", "target", "ops_per_sec", "p50_ms", "p90_ms", "p99_ms", "max_ms", "errors", "ratio_ops", "ratio_p99"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON line lacks %q: %s", k, lines[0])
		}
	}
	var tab bytes.Buffer
	if err := WriteTable(&tab, rs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"workload", "ops/s", "p99 ms", "0.60x ops/s, 1.50x p99", "4 watchers, 10 writes", "writes acknowledged within 1.25 s, last event at 1.50 s", "watch apiserver errors: boom"} {
		if !strings.Contains(tab.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, tab.String())
		}
	}
}

// The floor's rows get their ratio to etcd; the server's create and get
// rows get their ratio to the floor's row of the same workload, in the
// JSON and in the table's last column.
func TestFloorRatios(t *testing.T) {
	rs := []Result{
		{Workload: "create", Target: TargetAPIServer, Concurrency: 64, Ops: 10, OpsPerSec: 330, P99ms: 26.8},
		{Workload: "get", Target: TargetAPIServer, Concurrency: 64, Ops: 10, OpsPerSec: 1090, P99ms: 12},
		{Workload: "list", Target: TargetAPIServer, Concurrency: 1, Ops: 10, OpsPerSec: 70, P99ms: 30},
		{Workload: "create", Target: TargetFloor, Concurrency: 64, Ops: 10, OpsPerSec: 640, P99ms: 11.7},
		{Workload: "get", Target: TargetFloor, Concurrency: 64, Ops: 10, OpsPerSec: 2000, P99ms: 4},
		{Workload: "create", Target: TargetEtcd, Concurrency: 64, Ops: 10, OpsPerSec: 1000, P99ms: 10},
	}
	applyBaseline(rs)
	type ratios struct{ ops, p99, fops, fp99 float64 }
	want := []ratios{
		{0.33, 2.68, 0.516, 2.291},
		{1.09, 0, 0.545, 3},
		{},
		{0.64, 1.17, 0, 0},
		{2, 0, 0, 0},
		{},
	}
	for i, r := range rs {
		if got := (ratios{r.RatioOps, r.RatioP99, r.RatioFloorOps, r.RatioFloorP99}); got != want[i] {
			t.Errorf("%s %s ratios = %+v, want %+v", r.Workload, r.Target, got, want[i])
		}
	}

	var js bytes.Buffer
	if err := WriteJSON(&js, rs[:1]); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(js.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m["ratio_floor_ops"] != 0.516 || m["ratio_floor_p99"] != 2.291 || m["ratio_ops"] != 0.33 {
		t.Errorf("JSON = %s", js.String())
	}

	var tab bytes.Buffer
	if err := WriteTable(&tab, rs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(tab.String(), "\n"), "\n")
	wantEnds := []string{
		"vs etcd create | floor",
		"26.80    0.00  0.33x ops/s, 2.68x p99 | 0.52x floor",
		"1.09x ops/s | 0.55x floor",
		" -",
		"11.70    0.00                0.64x ops/s, 1.17x p99",
		"2.00x ops/s",
		" -",
	}
	if len(lines) != len(wantEnds) {
		t.Fatalf("table:\n%s", tab.String())
	}
	for i, l := range lines {
		if !strings.HasSuffix(l, wantEnds[i]) {
			t.Errorf("line %d = %q, want it to end in %q", i, l, wantEnds[i])
		}
	}
	// Without a floor row the header and cells are as before.
	tab.Reset()
	if err := WriteTable(&tab, []Result{{Workload: "create", Target: TargetAPIServer, RatioOps: 0.5}}); err != nil {
		t.Fatal(err)
	}
	if s := tab.String(); strings.Contains(s, "floor") || !strings.Contains(s, "0.50x ops/s") {
		t.Errorf("table without a floor:\n%s", s)
	}
}

func TestBar(t *testing.T) {
	cases := []struct {
		name        string
		done, total int64
		want        string
	}{
		{name: "empty", done: 0, total: 10, want: "[                              ]   0%"},
		{name: "half", done: 5, total: 10, want: "[===============               ]  50%"},
		{name: "overfull caps at 100%", done: 12, total: 10, want: "[==============================] 100%"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := bar("create", c.done, c.total, time.Second)
			if !strings.Contains(got, c.want) || len(got) > 79 {
				t.Errorf("bar = %q, want it to hold %q within 79 columns", got, c.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	ok := func() Options {
		return Options{Config: nil, Workloads: []string{"create"}, Concurrency: 1, Connections: 1, Watchers: 1,
			ListObjects: 10, ListMatching: 5, Namespace: "ns"}
	}
	cases := []struct {
		name string
		edit func(*Options)
		want string
	}{
		{name: "unknown workload", edit: func(o *Options) { o.Workloads = []string{"delete"} }, want: `--workload: unknown workload "delete"`},
		{name: "zero concurrency", edit: func(o *Options) { o.Concurrency = 0 }, want: "--concurrency"},
		{name: "more matching than objects", edit: func(o *Options) { o.ListMatching = 11 }, want: "--list-matching"},
		{name: "no connections", edit: func(o *Options) { o.Connections = 0 }, want: "--connections"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := ok()
			o.Config = restConfigForValidate()
			c.edit(&o)
			err := o.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Validate() = %v, want %q", err, c.want)
			}
		})
	}
}

package bench

import (
	"context"
	"encoding/json"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kpipe/kpipe/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

func restConfigForValidate() *rest.Config { return &rest.Config{Host: "https://127.0.0.1:1"} }

// Each workload runs briefly against an in-process kpipe and its etcd; the
// report must have the right shape and no errors. Speed is not checked.
func TestWorkloadsAgainstKpipe(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	for _, w := range Workloads {
		t.Run(w, func(t *testing.T) {
			o := Options{
				Config: ts.Config, Workloads: []string{w},
				Concurrency: 4, Ops: 20, Size: 256, Namespace: "bench-" + w,
				Connections: 2, Watchers: 3, ListObjects: 40, ListMatching: 5, PageSize: 2,
				Etcd:    EtcdOptions{Endpoints: ts.Backend().Endpoints},
				Cleanup: true,
			}
			rs, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != 2 {
				t.Fatalf("want a row for the server and one for etcd, got %+v", rs)
			}
			srv, base := rs[0], rs[1]
			if srv.Workload != w || srv.Target != TargetAPIServer || base.Workload != "create" || base.Target != TargetEtcd {
				t.Fatalf("rows = %+v", rs)
			}
			wantOps := 20
			if w == "watch" {
				wantOps = 3 * 20
				if srv.Watchers != 3 || srv.Writes != 20 || srv.Missed != 0 || srv.OutOfOrder != 0 {
					t.Errorf("watch = %+v", srv)
				}
			}
			for _, r := range rs {
				if r.Errors != 0 || len(r.FirstErrors) != 0 {
					t.Errorf("%s %s: %d errors: %v", r.Workload, r.Target, r.Errors, r.FirstErrors)
				}
				// A watch event may beat the write's acknowledgement: lag 0.
				if r.OpsPerSec <= 0 || r.P50ms < 0 || r.Maxms <= 0 || r.P50ms > r.P90ms || r.P90ms > r.P99ms || r.P99ms > r.Maxms {
					t.Errorf("%s %s: figures out of shape: %+v", r.Workload, r.Target, r)
				}
			}
			if srv.Ops != wantOps || base.Ops != 20 {
				t.Errorf("ops = %d and %d, want %d and 20", srv.Ops, base.Ops, wantOps)
			}
			if (w == "create" || w == "get") != (srv.RatioOps > 0) {
				t.Errorf("%s ratio = %v", w, srv.RatioOps)
			}
			// Cleanup left none of the run's objects behind.
			c, err := newClient(ts.Config, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer c.close()
			b, err := c.do(context.Background(), "GET", configMapsPath(o.Namespace)+"?labelSelector="+runLabel, nil, 200)
			if err != nil {
				t.Fatal(err)
			}
			var l listMeta
			if err := json.Unmarshal(b, &l); err != nil || len(l.Items) != 0 {
				t.Errorf("after cleanup: %d objects left (%v)", len(l.Items), err)
			}
		})
	}
}

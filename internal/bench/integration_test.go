package bench

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kpipe/kpipe/internal/testserver"
)

func TestMain(m *testing.M) {
	ServeFloorIfChild() // Options.Floor starts this binary again as the floor
	testserver.Main(m)
}

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
				Etcd:    etcdOf(ts),
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
				// The last event may arrive before the last write's
				// answer: only the write span's presence is checked.
				if srv.Watchers != 3 || srv.Writes != 20 || srv.Missed != 0 || srv.OutOfOrder != 0 || srv.WriteSeconds <= 0 {
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

// With Floor, create and get also run against the floor child, after the
// server and before the etcd baseline, and the server's rows carry their
// ratio to it. The floor's temp dir is gone afterwards.
func TestRunWithFloor(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	o := Options{
		Config: ts.Config, Workloads: []string{"create", "get", "list"},
		Concurrency: 4, Ops: 20, Size: 256, Namespace: "bench-floor",
		Connections: 2, Watchers: 1, ListObjects: 10, ListMatching: 2, PageSize: 5,
		Etcd:    etcdOf(ts),
		Cleanup: true, Floor: true,
	}
	rs, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		got = append(got, r.Workload+" "+r.Target)
	}
	want := "create apiserver,get apiserver,list apiserver,create floor,get floor,create etcd"
	if strings.Join(got, ",") != want {
		t.Fatalf("rows = %q, want %q", got, want)
	}
	for _, r := range rs {
		if r.Errors != 0 || len(r.FirstErrors) != 0 || r.Ops != 20 {
			t.Errorf("%s %s: %d of %d errors: %v", r.Workload, r.Target, r.Errors, r.Ops, r.FirstErrors)
		}
		if r.OpsPerSec <= 0 || r.P50ms <= 0 || r.P50ms > r.P90ms || r.P90ms > r.P99ms || r.P99ms > r.Maxms {
			t.Errorf("%s %s: figures out of shape: %+v", r.Workload, r.Target, r)
		}
		isCG := r.Workload == "create" || r.Workload == "get"
		if wantRatio := isCG && r.Target != TargetEtcd; wantRatio != (r.RatioOps > 0) {
			t.Errorf("%s %s: ratio to etcd %v", r.Workload, r.Target, r.RatioOps)
		}
		if wantFloor := isCG && r.Target == TargetAPIServer; wantFloor != (r.RatioFloorOps > 0 && r.RatioFloorP99 > 0) {
			t.Errorf("%s %s: ratio to the floor %v, %v", r.Workload, r.Target, r.RatioFloorOps, r.RatioFloorP99)
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}

// An interrupt while the floor runs stops it and removes its dir.
func TestRunWithFloorInterrupted(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := Options{
		Config: ts.Config, Workloads: []string{"create"},
		Concurrency: 2, Ops: 5, Size: 16, Namespace: "bench-floor-int",
		Connections: 1, Watchers: 1, ListObjects: 1, ListMatching: 1,
		Cleanup: true, Floor: true,
		Log: cancelOn{"floor: serving", cancel},
	}
	rs, err := Run(ctx, o)
	if err == nil || ctx.Err() == nil {
		t.Fatalf("Run = %v, %v; want an error after the interrupt", rs, err)
	}
	if len(rs) != 1 || rs[0].Target != TargetAPIServer {
		t.Errorf("rows = %+v, want the server's create only", rs)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}

// cancelOn cancels when a log line holds its text.
type cancelOn struct {
	text   string
	cancel func()
}

func (c cancelOn) Write(p []byte) (int, error) {
	if strings.Contains(string(p), c.text) {
		c.cancel()
	}
	return len(p), nil
}

// etcdOf reaches the server's etcd as the bench's flags do, with its
// client certificate.
func etcdOf(ts *testserver.TestServer) EtcdOptions {
	b := ts.Backend()
	return EtcdOptions{Endpoints: b.Endpoints, CAFile: b.ClientTLS.CAFile, CertFile: b.ClientTLS.CertFile, KeyFile: b.ClientTLS.KeyFile}
}

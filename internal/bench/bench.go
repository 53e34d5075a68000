// Package bench is the load generator behind cmd/apiserver-bench: it
// drives an API server through a kubeconfig with one workload at a time
// and measures the same writes against bare etcd, so a report carries the
// ratio of the two from one run on one machine. With Options.Floor it
// also runs create and get against the floor (floor.go).
package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// Targets of a result.
const (
	TargetAPIServer = "apiserver"
	TargetEtcd      = "etcd"
	// TargetFloor is the floor server (floor.go).
	TargetFloor = "floor"
)

// FloorWorkloads are the workloads that also run against the floor.
var FloorWorkloads = []string{"create", "get"}

// Workloads, in the order a run lists them.
var Workloads = []string{"create", "get", "list", "update", "watch", "mixed"}

// DefaultOps is each workload's number of operations when Options.Ops is
// 0. For watch it is the number of writes.
var DefaultOps = map[string]int{
	"create": 10000, "get": 20000, "list": 50, "update": 5000, "watch": 2000, "mixed": 10000,
}

// Options say what to run.
type Options struct {
	// Config reaches the API server (from a kubeconfig).
	Config *rest.Config
	// Workloads run in the order given.
	Workloads []string
	// Concurrency is the number of workers issuing requests (and etcd
	// transactions for the baseline).
	Concurrency int
	// ListConcurrency, when set, replaces Concurrency for list, whose
	// latency means most one list at a time.
	ListConcurrency int
	// Ops is the number of operations per workload; 0 takes DefaultOps.
	Ops int
	// Size is the bytes of data in each ConfigMap.
	Size int
	// Namespace holds the objects; it is created when missing.
	Namespace string
	// Connections is the number of HTTP/2 connections to the server.
	Connections int
	// Watchers is the number of concurrent watches for watch.
	Watchers int
	// ListObjects ConfigMaps are created for list, ListMatching of them
	// match its label selector; PageSize is its limit per request.
	ListObjects, ListMatching, PageSize int
	// Etcd, when it has endpoints, adds the bare etcd create baseline.
	Etcd EtcdOptions
	// Floor runs the create and get workloads of Workloads also against a
	// floor server (floor.go) in a child process, after the server's runs.
	// The binary must call ServeFloorIfChild first thing.
	Floor bool
	// Cleanup deletes each workload's objects when it ends.
	Cleanup bool
	// Progress, when set, shows a bar for long phases.
	Progress io.Writer
	// Log, when set, gets a line per phase.
	Log io.Writer
}

// Validate checks the options and fills the defaults left at zero.
func (o *Options) Validate() error {
	if o.Config == nil {
		return fmt.Errorf("no API server config")
	}
	if len(o.Workloads) == 0 {
		return fmt.Errorf("--workload: none given")
	}
	for _, w := range o.Workloads {
		if !slices.Contains(Workloads, w) {
			return fmt.Errorf("--workload: unknown workload %q (want one of %s)", w, strings.Join(Workloads, ", "))
		}
	}
	switch {
	case o.Concurrency < 1:
		return fmt.Errorf("--concurrency: %d must be at least 1", o.Concurrency)
	case o.Ops < 0:
		return fmt.Errorf("--ops: %d must not be negative", o.Ops)
	case o.Size < 0:
		return fmt.Errorf("--size: %d must not be negative", o.Size)
	case o.Connections < 1:
		return fmt.Errorf("--connections: %d must be at least 1", o.Connections)
	case o.Watchers < 1:
		return fmt.Errorf("--watchers: %d must be at least 1", o.Watchers)
	case o.ListMatching < 1 || o.ListMatching > o.ListObjects:
		return fmt.Errorf("--list-matching: %d must be between 1 and --list-objects (%d)", o.ListMatching, o.ListObjects)
	case o.PageSize < 0:
		return fmt.Errorf("--page-size: %d must not be negative", o.PageSize)
	case o.Namespace == "":
		return fmt.Errorf("--namespace: empty")
	}
	return nil
}

func (o *Options) ops(workload string) int {
	if o.Ops > 0 {
		return o.Ops
	}
	return DefaultOps[workload]
}

func (o *Options) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, format+"\n", args...)
	}
}

// Run runs the workloads, then the etcd baseline when configured, and
// returns a result per workload and target, ratios filled in.
func Run(ctx context.Context, o Options) ([]Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	c, err := newClient(o.Config, o.Connections)
	if err != nil {
		return nil, err
	}
	defer c.close()
	if err := c.ensureNamespace(ctx, o.Namespace); err != nil {
		return nil, fmt.Errorf("namespace %s: %w", o.Namespace, err)
	}
	r := &runner{o: o, c: c, payload: payload(o.Size), id: runID(), target: TargetAPIServer}
	var out []Result
	for _, w := range o.Workloads {
		res, err := r.workload(ctx, w)
		if err != nil {
			return out, fmt.Errorf("%s: %w", w, err)
		}
		out = append(out, res)
	}
	if o.Floor {
		res, err := runFloor(ctx, o, r)
		out = append(out, res...)
		if err != nil {
			applyBaseline(out)
			return out, fmt.Errorf("floor: %w", err)
		}
	}
	if len(o.Etcd.Endpoints) > 0 {
		o.logf("etcd baseline: %d create-if-absent transactions at concurrency %d", o.ops("create"), o.Concurrency)
		res, err := etcdBaseline(ctx, o, r.id, r.payload)
		if err != nil {
			return out, fmt.Errorf("etcd baseline: %w", err)
		}
		out = append(out, res)
	}
	applyBaseline(out)
	return out, nil
}

// runner holds what the workloads of one run share.
type runner struct {
	o       Options
	c       *client
	payload string
	id      string
	seq     int
	target  string
}

// runID tells this run's objects from any other's.
func runID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (r *runner) workload(ctx context.Context, w string) (Result, error) {
	r.seq++
	run := fmt.Sprintf("%s-%d", r.id, r.seq)
	if r.o.Cleanup {
		defer func() {
			r.o.logf("%s: deleting its objects", r.label(w))
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
			defer cancel()
			if err := r.c.deleteRun(dctx, r.o.Namespace, run); err != nil {
				r.o.logf("%s: cleanup: %v", w, err)
			}
		}()
	}
	switch w {
	case "create":
		return r.create(ctx, run)
	case "get":
		return r.get(ctx, run)
	case "list":
		return r.list(ctx, run)
	case "update":
		return r.update(ctx, run)
	case "watch":
		return r.watch(ctx, run)
	default:
		return r.mixed(ctx, run)
	}
}

// label names a workload in logs and bars: "create", "create (floor)".
func (r *runner) label(workload string) string {
	if r.target != TargetAPIServer {
		return workload + " (" + r.target + ")"
	}
	return workload
}

func (r *runner) result(workload string, conc, ops int) Result {
	return Result{Workload: workload, Target: r.target, Concurrency: min(conc, ops), Ops: ops}
}

// measure runs a timed phase and summarizes it.
func (r *runner) measure(ctx context.Context, res Result, op func(ctx context.Context, worker, i int) error) Result {
	label := r.label(res.Workload)
	r.o.logf("%s: %d operations at concurrency %d", label, res.Ops, res.Concurrency)
	prog := startProgress(r.o.Progress, label, res.Ops)
	errs := &errorSet{}
	lat, elapsed := runOps(ctx, res.Concurrency, res.Ops, prog, errs, op)
	prog.end()
	res.Errors = errs.count()
	res.FirstErrors = errs.first
	res.summarize(lat, elapsed)
	return res
}

// seed creates n ConfigMaps named prefix-i, untimed, failing on the first
// error: a workload on missing objects would measure nothing.
func (r *runner) seed(ctx context.Context, run, prefix string, n int, group func(i int) string) error {
	r.o.logf("seeding %d ConfigMaps", n)
	prog := startProgress(r.o.Progress, "seeding", n)
	defer prog.end()
	errs := &errorSet{}
	path := configMapsPath(r.o.Namespace)
	runOps(ctx, r.o.Concurrency, n, prog, errs, func(ctx context.Context, _, i int) error {
		g := ""
		if group != nil {
			g = group(i)
		}
		_, err := r.c.do(ctx, "POST", path, configMap(r.o.Namespace, fmt.Sprintf("%s-%d", prefix, i), run, g, r.payload, ""), 201)
		return err
	})
	if errs.count() > 0 {
		return fmt.Errorf("seeding: %d of %d creates failed, first: %s", errs.count(), n, errs.first[0])
	}
	return ctx.Err()
}

// runFloor starts the floor, runs the FloorWorkloads of o on it as on the
// server, with the same options, and stops it.
func runFloor(ctx context.Context, o Options, srv *runner) ([]Result, error) {
	var ws []string
	for _, w := range o.Workloads {
		if slices.Contains(FloorWorkloads, w) {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 {
		return nil, nil
	}
	f, err := startFloor(ctx)
	if err != nil {
		return nil, err
	}
	defer f.stop()
	o.logf("floor: serving on %s", f.url)
	o.Config = f.config
	c, err := newClient(o.Config, o.Connections)
	if err != nil {
		return nil, err
	}
	defer c.close()
	if err := c.ensureNamespace(ctx, o.Namespace); err != nil {
		return nil, fmt.Errorf("namespace %s: %w", o.Namespace, err)
	}
	r := &runner{o: o, c: c, payload: srv.payload, id: srv.id + "-floor", target: TargetFloor}
	var out []Result
	for _, w := range ws {
		res, err := r.workload(ctx, w)
		if err != nil {
			return out, fmt.Errorf("%s: %w", w, err)
		}
		out = append(out, res)
	}
	return out, nil
}

// Command apiserver-bench is a load generator for any Kubernetes API
// server reachable through a kubeconfig. With --etcd-endpoints it also
// writes the same payloads to bare etcd, so the report carries the ratio
// of the server to the store under it; with --floor, also to a no-op
// HTTP/2 server doing the same etcd transaction. See `apiserver-bench --help`.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
	"golang.org/x/term"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kpipe/kpipe/internal/bench"
)

func main() {
	// --floor starts this binary again as the floor server.
	bench.ServeFloorIfChild()
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "apiserver-bench:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("apiserver-bench", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		o          bench.Options
		kubeconfig string
		workloads  string
		asJSON     bool
		jsonOut    string
		quiet      bool
		cpuProfile string
	)
	fs.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the server under test (default: $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&workloads, "workload", "create", "comma-separated workloads, run in order: "+strings.Join(bench.Workloads, ", "))
	fs.IntVar(&o.Concurrency, "concurrency", 64, "concurrent requests (and etcd transactions for the baseline)")
	fs.IntVar(&o.ListConcurrency, "list-concurrency", 0, "concurrent lists for the list workload (default: --concurrency)")
	fs.IntVar(&o.Ops, "ops", 0, fmt.Sprintf("operations per workload; watch: writes (default per workload: %s)", defaults()))
	fs.IntVar(&o.Size, "size", 1024, "bytes of data in each ConfigMap")
	fs.StringVar(&o.Namespace, "namespace", "kpipe-bench", "namespace of the objects; created when missing")
	fs.IntVar(&o.Connections, "connections", 1, "HTTP/2 connections to the server")
	fs.IntVar(&o.Watchers, "watchers", 200, "concurrent watches for the watch workload")
	fs.IntVar(&o.ListObjects, "list-objects", 10000, "ConfigMaps created for the list workload")
	fs.IntVar(&o.ListMatching, "list-matching", 500, "of which this many match the list's label selector")
	fs.IntVar(&o.PageSize, "page-size", 500, "limit per list request (0: no paging)")
	fs.BoolVar(&o.Cleanup, "cleanup", true, "delete each workload's objects when it ends")
	fs.StringSliceVar(&o.Etcd.Endpoints, "etcd-endpoints", nil, "etcd the server uses; adds the bare-etcd create baseline and the ratios")
	fs.StringVar(&o.Etcd.CAFile, "etcd-cafile", "", "CA that verifies etcd's serving certificate")
	fs.StringVar(&o.Etcd.CertFile, "etcd-certfile", "", "client certificate for etcd")
	fs.StringVar(&o.Etcd.KeyFile, "etcd-keyfile", "", "client key for etcd")
	fs.BoolVar(&o.Floor, "floor", false, "also run create and get against a floor: a no-op HTTP/2 server in a child process doing the same etcd transaction on its own embedded etcd and gets from memory; adds the ratios to it")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object per result instead of a table")
	fs.StringVar(&jsonOut, "json-out", "", "also write the JSON lines to this file")
	fs.BoolVar(&quiet, "quiet", false, "no progress lines on stderr")
	fs.StringVar(&cpuProfile, "cpuprofile", "", "write the load generator's own CPU profile to this file")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: apiserver-bench [flags]\n\nLoad a Kubernetes API server and report ops/s and latency percentiles.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, w := range strings.Split(workloads, ",") {
		if w = strings.TrimSpace(w); w != "" {
			o.Workloads = append(o.Workloads, w)
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	o.Config = cfg
	if !quiet {
		o.Log = stderr
	}
	if f, ok := stdout.(*os.File); ok && !asJSON && term.IsTerminal(int(f.Fd())) {
		o.Progress = stdout
	}

	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	results, err := bench.Run(ctx, o)
	if len(results) > 0 {
		var werr error
		if asJSON {
			werr = bench.WriteJSON(stdout, results)
		} else {
			werr = bench.WriteTable(stdout, results)
		}
		if jsonOut != "" && werr == nil {
			werr = writeJSONFile(jsonOut, results)
		}
		if err == nil {
			err = werr
		}
	}
	return err
}

func defaults() string {
	var parts []string
	for _, w := range bench.Workloads {
		parts = append(parts, fmt.Sprintf("%s %d", w, bench.DefaultOps[w]))
	}
	return strings.Join(parts, ", ")
}

func writeJSONFile(path string, results []bench.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--json-out: %w", err)
	}
	if err := bench.WriteJSON(f, results); err != nil {
		f.Close()
		return fmt.Errorf("--json-out: %w", err)
	}
	return f.Close()
}

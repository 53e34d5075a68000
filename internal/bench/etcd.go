package bench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// EtcdOptions reach the etcd the API server stores its objects in.
type EtcdOptions struct {
	Endpoints                 []string
	CAFile, CertFile, KeyFile string
}

// etcdPrefix keeps the baseline's keys away from the server's own.
const etcdPrefix = "/kpipe-bench/"

// etcdBaseline writes the create workload's payloads to bare etcd with the
// same concurrency, each as the transaction a create is at heart:
// If(CreateRevision(key) == 0) Then(Put(key, value)). Its keys are removed
// afterwards.
func etcdBaseline(ctx context.Context, o Options, id, payload string) (Result, error) {
	ops := o.ops("create")
	res := Result{Workload: "create", Target: TargetEtcd, Concurrency: min(o.Concurrency, ops), Ops: ops}
	tlsCfg, err := o.Etcd.tls()
	if err != nil {
		return res, err
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: o.Etcd.Endpoints, TLS: tlsCfg, DialTimeout: 5 * time.Second,
		Logger: zap.NewNop(),
	})
	if err != nil {
		return res, err
	}
	defer cli.Close()
	ns := o.Namespace
	run := id + "-etcd"
	prefix := etcdPrefix + run + "/configmaps/" + ns + "/"
	keys := make([]string, ops)
	values := make([]string, ops)
	for i := range keys {
		name := fmt.Sprintf("c-%s-%d", run, i)
		keys[i] = prefix + name
		values[i] = string(configMap(ns, name, run, "", payload, ""))
	}
	prog := startProgress(o.Progress, "create (etcd)", ops)
	errs := &errorSet{}
	lat, elapsed := runOps(ctx, res.Concurrency, ops, prog, errs, func(ctx context.Context, _, i int) error {
		resp, err := cli.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(keys[i]), "=", 0)).
			Then(clientv3.OpPut(keys[i], values[i])).
			Commit()
		if err == nil && !resp.Succeeded {
			err = fmt.Errorf("etcd: %s already exists", keys[i])
		}
		return err
	})
	prog.end()
	res.Errors = errs.count()
	res.FirstErrors = errs.first
	res.summarize(lat, elapsed)
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if _, err := cli.Delete(dctx, etcdPrefix+run+"/", clientv3.WithPrefix()); err != nil {
		o.logf("etcd baseline: cleanup: %v", err)
	}
	return res, ctx.Err()
}

// tls builds the client TLS from the files, nil when none is given.
func (e EtcdOptions) tls() (*tls.Config, error) {
	if e.CAFile == "" && e.CertFile == "" && e.KeyFile == "" {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if e.CAFile != "" {
		pem, err := os.ReadFile(e.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--etcd-cafile: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--etcd-cafile: %s holds no PEM certificate", e.CAFile)
		}
	}
	if (e.CertFile == "") != (e.KeyFile == "") {
		return nil, fmt.Errorf("--etcd-certfile and --etcd-keyfile go together")
	}
	if e.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(e.CertFile, e.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("--etcd-certfile/--etcd-keyfile: %w", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}

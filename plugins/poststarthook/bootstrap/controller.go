package bootstrap

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/internal/api/servicealloc"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// SystemNamespaces are created at start and recreated when deleted.
var SystemNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease}

// Controller is the hook instance.
type Controller struct {
	cfg    *Config
	log    *zap.Logger
	env    *pipeline.Env
	alloc  *servicealloc.Allocator // nil when services are not served
	repair *repairMetrics

	// mu orders endpoint writes against the pre-shutdown removal, which
	// sets stopped so the loop does not put this server back.
	mu      sync.Mutex
	stopped bool
	rec     reconciler
	ep      *endpoints
}

var (
	_ pipeline.PostStartHook   = (*Controller)(nil)
	_ pipeline.PreShutdownHook = (*Controller)(nil)
	_ pipeline.Provisioner     = (*Controller)(nil)
)

// Provision implements pipeline.Provisioner.
func (c *Controller) Provision(env *pipeline.Env) error {
	c.log, c.env = env.Log, env
	if env.Shared != nil && env.Shared.Resources != nil {
		if res, ok := env.Shared.Resources.Lookup("", "v1", "services"); ok {
			c.alloc, _ = res.Hooks.(*servicealloc.Allocator)
		}
	}
	c.repair = newRepairMetrics(env)
	return nil
}

// Run removes this server's stale endpoint and creates the system
// namespaces, then returns so /readyz can pass, leaving the loops running
// until ctx ends.
func (c *Controller) Run(ctx context.Context, env *pipeline.HookEnv) error {
	cs, err := kubernetes.NewForConfig(env.Loopback)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.ep = &endpoints{cs: cs, port: int32(env.SecurePort)}
	if c.cfg.EndpointReconcilerType == ReconcilerLease {
		sh := c.env.Shared
		if sh == nil || sh.Etcd == nil || sh.Resources == nil {
			c.mu.Unlock()
			return errors.New("the lease endpoint reconciler needs the etcd client and the resources")
		}
		c.ep.prefix = sh.StoragePrefix
		c.ep.epRes, _ = sh.Resources.Lookup("", "v1", "endpoints")
		c.ep.sliceRes, _ = sh.Resources.Lookup("discovery.k8s.io", "v1", "endpointslices")
		if c.ep.epRes == nil || c.ep.sliceRes == nil || c.ep.epRes.Store == nil || c.ep.sliceRes.Store == nil {
			c.mu.Unlock()
			return errors.New("the lease endpoint reconciler needs endpoints and endpointslices served")
		}
		ttl := int64(c.cfg.EndpointReconcilerTTL / time.Second)
		c.rec = newLeaseReconciler(c.env.Shared.Etcd, c.env.Shared.StoragePrefix, env.AdvertiseAddress, ttl)
	}
	c.mu.Unlock()

	// A previous run of this server may have left its address behind; the
	// server is not ready yet, so it goes first.
	if err := c.removeEndpoint(ctx); err != nil && ctx.Err() == nil {
		c.log.Warn("removing this server's stale endpoint", zap.Error(err))
	}
	if err := retry(ctx, c.log, "creating system namespaces", func() error { return ensureNamespaces(ctx, cs, c.log) }); err != nil {
		return err
	}
	go c.every(ctx, "ensuring system namespaces", c.cfg.SystemNamespacesInterval, func() error { return ensureNamespaces(ctx, cs, c.log) })
	go func() {
		if waitReady(ctx, cs) != nil {
			return
		}
		ip := firstIP(c.alloc)
		c.every(ctx, "ensuring the kubernetes service", c.cfg.EndpointInterval, func() error { return c.reconcileService(ctx, cs, ip) })
	}()
	if c.alloc != nil {
		go c.every(ctx, "repairing service IPs and node ports", c.cfg.RepairInterval, func() error { return c.runRepair(ctx, cs) })
	}
	return nil
}

// PreShutdown implements pipeline.PreShutdownHook: this server's address
// leaves the endpoints before the listener closes.
func (c *Controller) PreShutdown(ctx context.Context) error {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	return c.removeEndpoint(ctx)
}

func (c *Controller) removeEndpoint(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rec == nil {
		return nil
	}
	ips, err := c.rec.remove(ctx)
	if err != nil {
		return err
	}
	return c.ep.write(ctx, ips)
}

// reconcileService ensures the default namespace, the kubernetes Service
// and, with a reconciler, this server's lease and the endpoints.
func (c *Controller) reconcileService(ctx context.Context, cs kubernetes.Interface, ip string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	if err := ensureNamespace(ctx, cs, metav1.NamespaceDefault, c.log); err != nil {
		return err
	}
	if err := c.ep.ensureService(ctx, ip); err != nil {
		return err
	}
	if c.rec == nil {
		return nil
	}
	ips, err := c.rec.renew(ctx)
	if err != nil {
		return err
	}
	return c.ep.write(ctx, ips)
}

// every runs fn now and then every interval until ctx ends. A failure is
// logged and retried with backoff; it never stops the other loops.
func (c *Controller) every(ctx context.Context, what string, interval time.Duration, fn func() error) {
	backoff := 50 * time.Millisecond
	for {
		wait := interval
		if err := fn(); err != nil && ctx.Err() == nil {
			c.log.Warn(what, zap.Error(err))
			wait = min(backoff, interval)
			backoff = min(2*backoff, 30*time.Second)
		} else {
			backoff = 50 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// retry runs fn until it succeeds or ctx ends, with backoff.
func retry(ctx context.Context, log *zap.Logger, what string, fn func() error) error {
	backoff := 50 * time.Millisecond
	for {
		err := fn()
		if err == nil {
			return nil
		}
		log.Warn(what, zap.Error(err))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// waitReady waits until this server's own /readyz answers 200.
func waitReady(ctx context.Context, cs kubernetes.Interface) error {
	for {
		var code int
		cs.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).StatusCode(&code)
		if code == 200 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func firstIP(a *servicealloc.Allocator) string {
	if a == nil {
		return ""
	}
	return a.FirstIP().String()
}

// ensureNamespaces creates each system namespace that does not exist.
func ensureNamespaces(ctx context.Context, cs kubernetes.Interface, log *zap.Logger) error {
	for _, name := range SystemNamespaces {
		if err := ensureNamespace(ctx, cs, name, log); err != nil {
			return err
		}
	}
	return nil
}

func ensureNamespace(ctx context.Context, cs kubernetes.Interface, name string, log *zap.Logger) error {
	_, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err == nil || !apierrors.IsNotFound(err) {
		return err
	}
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	log.Info("created system namespace", zap.String("namespace", name))
	return nil
}

// repairMetrics are kube's repair counters.
type repairMetrics struct {
	ipErrors, portErrors       *prometheus.CounterVec
	ipReconcile, portReconcile prometheus.Counter
}

func newRepairMetrics(env *pipeline.Env) *repairMetrics {
	m := &repairMetrics{
		ipErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "apiserver", Subsystem: "clusterip_repair", Name: "ip_errors_total",
			Help: "Number of errors detected on clusterips by the repair loop broken down by type of error: leak, repair, full, outOfRange, duplicate, unknown, invalid"}, []string{"type"}),
		portErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "apiserver", Subsystem: "nodeport_repair", Name: "port_errors_total",
			Help: "Number of errors detected on ports by the repair loop broken down by type of error: leak, repair, full, outOfRange, duplicate, unknown"}, []string{"type"}),
		ipReconcile: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "apiserver", Subsystem: "clusterip_repair", Name: "reconcile_errors_total",
			Help: "Number of reconciliation failures on the clusterip repair reconcile loop"}),
		portReconcile: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "apiserver", Subsystem: "nodeport_repair", Name: "reconcile_errors_total",
			Help: "Number of reconciliation failures on the nodeport repair reconcile loop"}),
	}
	if env.Metrics != nil {
		m.ipErrors = pipeline.Register(env, m.ipErrors)
		m.portErrors = pipeline.Register(env, m.portErrors)
		m.ipReconcile = pipeline.Register(env, m.ipReconcile)
		m.portReconcile = pipeline.Register(env, m.portReconcile)
	}
	return m
}

// runRepair reconciles the allocation bitmaps with the services that
// exist: a leaked value is freed, a value held twice is logged and counted.
func (c *Controller) runRepair(ctx context.Context, cs kubernetes.Interface) error {
	ips, ports, err := c.alloc.Repair(ctx, func() ([]corev1.Service, error) {
		list, err := cs.CoreV1().Services(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		return list.Items, nil
	})
	if err != nil {
		c.repair.ipReconcile.Inc()
		c.repair.portReconcile.Inc()
		return err
	}
	report := func(kind string, r servicealloc.Report, errs *prometheus.CounterVec) {
		errs.WithLabelValues("leak").Add(float64(r.Freed))
		errs.WithLabelValues("repair").Add(float64(r.Restored))
		errs.WithLabelValues("duplicate").Add(float64(len(r.Duplicates)))
		errs.WithLabelValues("outOfRange").Add(float64(len(r.OutOfRange)))
		if r.Freed > 0 || r.Restored > 0 {
			c.log.Info("repaired "+kind+" allocations", zap.Int("leaksFreed", r.Freed), zap.Int("restored", r.Restored))
		}
		for _, d := range r.Duplicates {
			c.log.Error(kind+" allocated to more than one service", zap.String("allocation", d))
		}
		for _, o := range r.OutOfRange {
			c.log.Warn(kind+" outside the configured range", zap.String("allocation", o))
		}
	}
	report("cluster IP", ips, c.repair.ipErrors)
	report("node port", ports, c.repair.portErrors)
	return nil
}

// Package server runs kpipe: the TLS listener with HTTP/2, the startup
// stages, post-start and pre-shutdown hooks, health, and graceful shutdown.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"golang.org/x/net/http2"
	"k8s.io/client-go/rest"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/server/healthz"
	"github.com/kpipe/kpipe/internal/storage/backend"
	"github.com/kpipe/kpipe/internal/storage/store"
	"github.com/kpipe/kpipe/internal/tracing"
)

// Fixed listener settings, as kube-apiserver's SecureServingInfo has them.
const (
	maxHeaderBytes    = 1 << 20
	idleTimeout       = 90 * time.Second
	readHeaderTimeout = 32 * time.Second
)

// Options are what the caller decides beyond the config file.
type Options struct {
	Config  *config.Loaded
	Plugins *pipeline.Registry
	Log     *zap.Logger
	// Listener, when set, is used instead of binding bindAddress:securePort
	// (tests pass one on 127.0.0.1:0).
	Listener net.Listener
	// ConfigDuration is how long loading the config took, reported as the
	// "config" startup stage.
	ConfigDuration time.Duration
	// Reload re-reads the configuration for hot reload; nil turns it off.
	Reload func() (*config.Loaded, error)
}

// Server is one kpipe process's serving side.
type Server struct {
	o   Options
	cfg *config.Config
	log *zap.Logger

	metrics *prometheus.Registry
	startup *prometheus.GaugeVec
	pki     *pki
	backend *backend.Backend
	// resources are the served resources with their stores.
	resources *api.Registry
	// stopCaches stops the watch caches before etcd closes.
	stopCaches func()
	// access wires the access review APIs, TokenRequest and the RBAC
	// escalation check to the stages.
	access    *access
	discovery *api.Discovery
	engine    *pipeline.Engine
	reloader  *reloader
	http      *http.Server
	ln        net.Listener
	url       string
	loopback  *rest.Config
	// advertise is the address other members reach this server on.
	advertise net.IP
	shutdown  *healthz.ShutdownCheck
	// stopping closes when the listener starts draining, so long-running
	// requests (watches) end and let the drain finish.
	stopping   chan struct{}
	hookPlan   []*pipeline.Instance
	standalone []*pipeline.Instance

	hooksMu      sync.Mutex
	hooks        []*hook
	hooksStarted bool
	// hooksCtx ends once the pre-shutdown hooks have run, before the
	// listener closes: post-start hooks stop while the loopback client
	// they use still reaches the server (kube stops them at the start of
	// shutdown). hooksRunning counts their goroutines.
	hooksCtx     context.Context
	stopHooks    context.CancelFunc
	hooksRunning sync.WaitGroup

	// ctx ends once the listener has drained and the pipeline closed;
	// background work and the pipeline's instances watch it.
	ctx    context.Context
	cancel context.CancelFunc
	served chan error
	bg     sync.WaitGroup

	tracer *sdktrace.TracerProvider // nil with tracing off

	shutdownOnce sync.Once
	shutdownErr  error
}

// New prepares a server; Start brings it up.
func New(o Options) *Server {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	startup := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "apiserver", Name: "startup_stage_duration_seconds",
		Help: "Duration of each startup stage of this process.",
	}, []string{"stage"})
	reg.MustRegister(startup)
	ctx, cancel := context.WithCancel(context.Background())
	hooksCtx, stopHooks := context.WithCancel(context.Background())
	return &Server{
		o: o, cfg: o.Config.Config, log: o.Log,
		hooksCtx: hooksCtx, stopHooks: stopHooks,
		metrics: reg, startup: startup,
		shutdown: &healthz.ShutdownCheck{},
		stopping: make(chan struct{}),
		ctx:      ctx, cancel: cancel,
		served: make(chan error, 1),
	}
}

// Start runs the startup stages in order and returns once the listener
// serves and the post-start hooks are launched. On error everything
// started so far is stopped again.
func (s *Server) Start(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			s.stopHooks()
			s.cancel()
			s.closeStorage()
		}
	}()
	s.recordStage("config", s.o.ConfigDuration)
	stages := []struct {
		name string
		run  func(context.Context) error
	}{
		{"pki", s.startPKI},
		{"storage", s.startStorage},
		{"pipeline", s.startPipeline},
		{"listener", s.startListener},
		{"post-start-hooks", s.startHooks},
	}
	for _, st := range stages {
		t := time.Now()
		if err := st.run(ctx); err != nil {
			return err
		}
		s.recordStage(st.name, time.Since(t))
	}
	return nil
}

func (s *Server) recordStage(name string, d time.Duration) {
	s.startup.WithLabelValues(name).Set(d.Seconds())
	s.log.Info("startup stage done", zap.String("stage", name), zap.Duration("duration", d))
}

func (s *Server) startPKI(context.Context) error {
	if err := checkStateDir(s.cfg.StateDir); err != nil {
		return err
	}
	s.advertise = advertiseAddress(s.cfg, s.log)
	p, err := setupPKI(s.cfg, s.advertise, s.log)
	if err != nil {
		return err
	}
	s.pki = p
	for _, run := range p.runners {
		s.goBackground(run)
	}
	return s.setupServiceAccounts()
}

func (s *Server) startStorage(ctx context.Context) error {
	e := s.cfg.Storage.Etcd
	b, err := backend.Open(ctx, backend.Config{
		Endpoints: e.Endpoints, CAFile: e.CAFile, CertFile: e.CertFile, KeyFile: e.KeyFile,
		DialTimeout: e.DialTimeout,
		DataDir:     filepath.Join(s.cfg.StateDir, "etcd"),
		PKIDir:      s.pki.dir,
	}, s.log.Named("storage"))
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	s.backend = b
	if err := s.writeEtcdEndpoint(); err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	s.resources = api.NewRegistry(api.Resources(s.resourceOptions()))
	enc, err := LoadEncryption(s.cfg)
	if err != nil {
		return err
	}
	if err := checkCacheNames(s.cfg.Storage.WatchCache, s.resources); err != nil {
		return err
	}
	// One progress requester for all stores: they share the client's
	// watch stream, and one request reaches every watch on it.
	progress := store.NewProgressRequester(b.Client, s.cfg.Storage.BookmarkInterval, s.log.Named("storage"))
	s.stopCaches = s.resources.AttachStorage(b.Client, s.cfg.Storage.Prefix, s.metrics, s.log.Named("storage"), api.StorageOptions{
		Encrypt: enc.For,
		Cache:   watchCached(s.cfg.Storage.WatchCache),
		Store:   []store.Option{store.WithProgressRequester(progress)},
	})
	if err := s.attachServiceAllocator(); err != nil {
		return err
	}
	s.goBackground(s.countObjects)
	return nil
}

func (s *Server) startPipeline(context.Context) error {
	token, err := newToken()
	if err != nil {
		return err
	}
	var tracer trace.Tracer
	if s.cfg.Tracing.Endpoint != "" {
		tp, err := tracing.NewProvider(s.ctx, s.cfg.Tracing)
		if err != nil {
			return err
		}
		s.tracer = tp
		tracer = tp.Tracer("github.com/kpipe/kpipe")
		s.log.Info("tracing on", zap.String("endpoint", s.cfg.Tracing.Endpoint), zap.Int("samplingRatePerMillion", s.cfg.Tracing.SamplingRatePerMillion))
	}
	routes, err := s.routes()
	if err != nil {
		return err
	}
	s.engine = pipeline.NewEngine(pipeline.Options{
		Registry: s.o.Plugins,
		Log:      s.log.Named("pipeline"),
		Metrics:  s.metrics,
		Context:  s.ctx,
		Shared: &pipeline.Shared{
			ClientCA:        s.pki.clientCAs,
			LoopbackToken:   token,
			StateDir:        s.cfg.StateDir,
			Stopping:        s.stopping,
			Resources:       s.resources,
			StoragePrefix:   s.cfg.Storage.Prefix,
			Etcd:            s.backend.Client,
			Authorizer:      s.access.authorizer,
			Authenticator:   s.access.authenticator,
			ServiceAccounts: s.access.tokens,
			AuthFailures:    &auth.FailureHook{},
		},
		Next:        routes,
		OnProvision: s.onProvision,
		OnClose:     s.onClose,
		Tracer:      tracer,
	})
	plan, err := s.o.Plugins.Plan(s.cfg)
	if err != nil {
		return s.o.Config.Attribute(err)
	}
	if err := s.engine.Apply(plan, s.cfg); err != nil {
		return err
	}
	s.hookPlan = plan.Hooks
	s.reloader = newReloader(s)
	s.reloader.markLoaded(s.o.Config)
	if s.o.Reload != nil && s.o.Config.File != "" {
		if err := s.watchConfigFile(s.o.Config.File); err != nil {
			return err
		}
	}
	s.loopback = &rest.Config{
		BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{
			ServerName: LoopbackServerName,
			CAData:     s.pki.ca.CertPEM,
		},
		QPS:   -1, // the loopback client is this server talking to itself
		Burst: -1,
	}
	return nil
}

func (s *Server) startListener(ctx context.Context) error {
	minVersion, _ := config.TLSVersion(s.cfg.TLS.MinVersion)
	suites, _ := config.CipherSuites(s.cfg.TLS.CipherSuites)
	tlsCfg := &tls.Config{
		MinVersion:     minVersion,
		CipherSuites:   suites,
		NextProtos:     []string{"h2", "http/1.1"},
		GetCertificate: s.pki.getCertificate,
		// Client certificates are verified by the x509 authenticator, so an
		// unknown CA is a 401 Status rather than a failed handshake.
		ClientAuth: tls.RequestClientCert,
	}
	s.http = &http.Server{
		Handler:           s.engine,
		TLSConfig:         tlsCfg,
		MaxHeaderBytes:    maxHeaderBytes,
		IdleTimeout:       idleTimeout,
		ReadHeaderTimeout: readHeaderTimeout,
		ErrorLog:          zap.NewStdLog(s.log.Named("http").WithOptions(zap.IncreaseLevel(zap.WarnLevel))),
	}
	if err := http2.ConfigureServer(s.http, &http2.Server{
		MaxConcurrentStreams: uint32(s.cfg.Server.HTTP2MaxStreamsPerConnection),
		IdleTimeout:          idleTimeout,
		// As kube: 256 KiB per stream so large bodies don't stall on flow
		// control, bounded per connection by the stream limit.
		MaxUploadBufferPerStream:     256 << 10,
		MaxUploadBufferPerConnection: int32(s.cfg.Server.HTTP2MaxStreamsPerConnection) * (256 << 10) / 4,
	}); err != nil {
		return fmt.Errorf("http2: %w", err)
	}

	ln := s.o.Listener
	if ln == nil {
		var err error
		addr := net.JoinHostPort(s.cfg.Server.BindAddress, strconv.Itoa(s.cfg.Server.SecurePort))
		ln, err = listen(ctx, addr, s.cfg.Server.PermitPortSharing, s.cfg.Server.PermitAddressSharing)
		if err != nil {
			return err
		}
	}
	s.ln = ln
	s.url = "https://" + dialAddress(ln.Addr())
	if s.discovery != nil {
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		s.discovery.ServerAddress = net.JoinHostPort(s.advertise.String(), port)
	}
	s.loopback.Host = s.url

	if err := s.pki.writeAdminKubeconfig(filepath.Join(s.cfg.StateDir, "admin.kubeconfig"), s.url); err != nil {
		ln.Close()
		return fmt.Errorf("admin.kubeconfig: %w", err)
	}

	tlsLn := tls.NewListener(ln, tlsCfg)
	go func() {
		err := s.http.Serve(tlsLn)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.served <- err
	}()
	s.log.Info("serving", zap.String("url", s.url))
	return nil
}

// dialAddress turns the listener's address into one clients can dial: an
// unspecified bind address is reached on loopback.
func dialAddress(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	ip := tcp.IP
	if ip == nil || ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
	}
	return net.JoinHostPort(ip.String(), strconv.Itoa(tcp.Port))
}

// goBackground runs fn until shutdown and lets Shutdown wait for it.
func (s *Server) goBackground(fn func(context.Context)) {
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		fn(s.ctx)
	}()
}

// URL is where the server listens, as clients dial it.
func (s *Server) URL() string { return s.url }

// Loopback returns a client config that talks to this server as
// system:masters.
func (s *Server) Loopback() *rest.Config { return rest.CopyConfig(s.loopback) }

// Metrics is the server's registry.
func (s *Server) Metrics() *prometheus.Registry { return s.metrics }

// Engine is the request pipeline.
func (s *Server) Engine() *pipeline.Engine { return s.engine }

// Backend is the etcd connection.
func (s *Server) Backend() *backend.Backend { return s.backend }

// Served reports the listener's end: nil after a clean shutdown.
func (s *Server) Served() <-chan error { return s.served }

func (s *Server) closeStorage() {
	if s.stopCaches != nil {
		s.stopCaches()
	}
	s.removeEtcdEndpoint()
	if s.backend != nil {
		if err := s.backend.Close(); err != nil {
			s.log.Warn("closing storage", zap.Error(err))
		}
	}
}

// Settings is the configuration the server started with.
func (s *Server) Settings() *config.Config { return s.cfg }

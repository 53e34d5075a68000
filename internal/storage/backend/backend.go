// Package backend opens the etcd that stores kpipe's objects: an embedded
// single-member etcd when no endpoints are configured, an external cluster
// otherwise.
package backend

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc"

	"github.com/kpipe/kpipe/internal/server/certs"
)

// DefaultDialTimeout is used when Config.DialTimeout is zero.
const DefaultDialTimeout = 5 * time.Second

// embeddedStartTimeout bounds waiting for the embedded member to become
// ready when the caller's ctx has no earlier deadline; a single member on
// local disk is ready in well under a second, so a minute means it is stuck.
const embeddedStartTimeout = time.Minute

// healthKey is read by Check. It need not exist: a linearizable read of it
// still goes through raft, proving the cluster has quorum.
const healthKey = "health"

// Config selects and configures the etcd backend.
type Config struct {
	Endpoints                 []string      // empty = embedded
	CAFile, CertFile, KeyFile string        // optional TLS to external etcd
	DialTimeout               time.Duration // default 5s if zero
	DataDir                   string        // embedded etcd data dir (stateDir/etcd)
	// PKIDir holds the embedded etcd's CA and certificates (stateDir/pki),
	// made on first start: its ports accept only clients and peers with a
	// certificate from that CA. Empty: DataDir + "-pki", beside the data.
	PKIDir string
}

// Backend is an open etcd client and, in embedded mode, the server it talks to.
type Backend struct {
	Client    *clientv3.Client
	Endpoints []string
	Embedded  bool
	// ClientTLS is what another client needs to reach Endpoints: for the
	// embedded etcd its CA and etcd-client.crt/.key, for an external one
	// the configured files.
	ClientTLS ClientFiles

	etcd        *embed.Etcd // nil for external etcd
	etcdClosing *atomic.Bool
	dialTimeout time.Duration
	closeOnce   sync.Once
	closeErr    error
}

// Open starts the embedded etcd or connects to the external one and makes a
// round trip, so a misconfigured or unreachable etcd fails at start rather
// than on the first request.
func Open(ctx context.Context, cfg Config, log *zap.Logger) (*Backend, error) {
	if log == nil {
		log = zap.NewNop()
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if len(cfg.Endpoints) == 0 {
		return openEmbedded(ctx, cfg, log)
	}
	return openExternal(ctx, cfg, log)
}

func openExternal(ctx context.Context, cfg Config, log *zap.Logger) (*Backend, error) {
	tlsCfg, err := clientTLS(cfg)
	if err != nil {
		return nil, err
	}
	if tlsCfg != nil {
		for _, ep := range cfg.Endpoints {
			if strings.HasPrefix(ep, "http://") {
				// clientv3 silently drops TLS for http:// endpoints.
				log.Warn("etcd TLS files are ignored for plain http endpoint", zap.String("endpoint", ep))
			}
		}
	}
	pctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	b, err := connect(pctx, cfg.Endpoints, tlsCfg, cfg.DialTimeout, log)
	if err != nil {
		return nil, err
	}
	b.ClientTLS = ClientFiles{CAFile: cfg.CAFile, CertFile: cfg.CertFile, KeyFile: cfg.KeyFile}
	log.Info("connected to external etcd", zap.Strings("endpoints", b.Endpoints))
	return b, nil
}

// connect creates a client and proves the endpoints answer before ctx ends;
// clientv3.New itself does not block, so without the round trip an
// unreachable etcd would only show up later as hanging requests.
func connect(ctx context.Context, endpoints []string, tlsCfg *tls.Config, dialTimeout time.Duration, log *zap.Logger) (*Backend, error) {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: dialTimeout,
		TLS:         tlsCfg,
		// Retries log warnings; Check and Open report the failure instead.
		Logger: quiet(log.Named("etcd-client"), zapcore.ErrorLevel),
	})
	if err != nil {
		return nil, fmt.Errorf("creating etcd client for %v: %w", endpoints, err)
	}
	b := &Backend{
		Client:      cli,
		Endpoints:   append([]string(nil), endpoints...),
		dialTimeout: dialTimeout,
	}
	if err := b.probe(ctx); err != nil {
		_ = cli.Close()
		return nil, fmt.Errorf("cannot reach etcd at %v: %w", endpoints, err)
	}
	return b, nil
}

// ClientFiles are the files of a TLS client of etcd.
type ClientFiles struct {
	CAFile, CertFile, KeyFile string
}

func openEmbedded(ctx context.Context, cfg Config, log *zap.Logger) (*Backend, error) {
	dir := cfg.DataDir
	if dir == "" {
		return nil, errors.New("embedded etcd needs a data dir")
	}
	if err := checkDataDir(dir); err != nil {
		return nil, err
	}
	pkiDir := cfg.PKIDir
	if pkiDir == "" {
		pkiDir = filepath.Clean(dir) + "-pki"
	}
	files, err := certs.EnsureEmbeddedEtcd(pkiDir)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd certificates: %w", err)
	}

	ecfg := embed.NewConfig()
	ecfg.Name = "default"
	ecfg.Dir = dir
	// Port 0 lets several servers (tests, side-by-side instances) run at
	// once. A single member never dials its peer URL, so advertising :0 is
	// harmless, and it is stable across restarts on the same data dir.
	// Both ports are mutual TLS against the etcd CA alone, as kubeadm's
	// etcd: any local process can connect, none without etcd-client.key
	// gets past the handshake to read secrets or write around admission.
	local := url.URL{Scheme: "https", Host: "127.0.0.1:0"}
	ecfg.ListenClientUrls = []url.URL{local}
	ecfg.AdvertiseClientUrls = []url.URL{local}
	ecfg.ListenPeerUrls = []url.URL{local}
	ecfg.AdvertisePeerUrls = []url.URL{local}
	ecfg.InitialCluster = ecfg.InitialClusterFromName(ecfg.Name)
	ecfg.ClientTLSInfo.CertFile, ecfg.ClientTLSInfo.KeyFile = files.ServerCert, files.ServerKey
	ecfg.ClientTLSInfo.TrustedCAFile, ecfg.ClientTLSInfo.ClientCertAuth = files.CA, true
	ecfg.PeerTLSInfo.CertFile, ecfg.PeerTLSInfo.KeyFile = files.PeerCert, files.PeerKey
	ecfg.PeerTLSInfo.TrustedCAFile, ecfg.PeerTLSInfo.ClientCertAuth = files.CA, true
	// etcd logs every startup step at info; only its warnings matter to us.
	closing := new(atomic.Bool)
	elog := quiet(log.Named("etcd"), zapcore.WarnLevel).WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		return noiseFilter{Core: c, closing: closing}
	}))
	ecfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(elog)
	// gRPC serves each request on a worker that stays (it starts a
	// goroutine of its own only when all are busy): a fresh goroutine per
	// request grew its stack from scratch every time.
	ecfg.GRPCAdditionalServerOptions = []grpc.ServerOption{grpc.NumStreamWorkers(uint32(4 * runtime.GOMAXPROCS(0)))}

	e, err := embed.StartEtcd(ecfg)
	if err != nil {
		return nil, fmt.Errorf("starting embedded etcd in %s: %w", dir, err)
	}
	stop := func() {
		closing.Store(true)
		e.Close()
	}

	wctx, cancel := context.WithTimeout(ctx, embeddedStartTimeout)
	defer cancel()
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		stop()
		return nil, fmt.Errorf("embedded etcd in %s failed while starting: %w", dir, err)
	case <-wctx.Done():
		stop()
		return nil, fmt.Errorf("embedded etcd in %s did not become ready: %w", dir, wctx.Err())
	}

	endpoint := "https://" + e.Clients[0].Addr().String()
	// The server's own client calls the member in process, as function
	// calls: no gRPC, HTTP/2 or loopback socket on either side, which cost
	// about a sixth of the CPU of a create. The listener stays for other
	// clients with the etcd client certificate (the bench's bare-etcd
	// baseline, etcdctl).
	b := &Backend{
		Client:      v3client.New(e.Server),
		Endpoints:   []string{endpoint},
		ClientTLS:   ClientFiles{CAFile: files.CA, CertFile: files.ClientCert, KeyFile: files.ClientKey},
		dialTimeout: cfg.DialTimeout,
	}
	// The first read waits for the new member to apply its startup entries,
	// which under disk contention can outlast the dial timeout meant for
	// remote etcd, so it shares the startup deadline instead.
	if err := b.probe(wctx); err != nil {
		_ = b.Client.Close()
		stop()
		return nil, fmt.Errorf("embedded etcd in %s: %w", dir, err)
	}
	b.Embedded = true
	b.etcd = e
	b.etcdClosing = closing
	log.Info("started embedded etcd", zap.String("dataDir", dir), zap.String("endpoint", endpoint))
	return b, nil
}

// checkDataDir creates dir and proves it is writable, because etcd's own
// errors for this case do not always say which directory is at fault.
func checkDataDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating etcd data dir %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".kpipe-write-check-*")
	if err != nil {
		return fmt.Errorf("etcd data dir %s is not writable: %w", dir, err)
	}
	name := f.Name()
	_ = f.Close()
	if err := os.Remove(name); err != nil {
		return fmt.Errorf("etcd data dir %s: %w", dir, err)
	}
	return nil
}

// clientTLS builds the TLS config for external etcd, or nil when no files
// are configured. Errors name the offending file.
func clientTLS(cfg Config) (*tls.Config, error) {
	if cfg.CAFile == "" && cfg.CertFile == "" && cfg.KeyFile == "" {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading etcd CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("etcd CA file %s contains no PEM certificates", cfg.CAFile)
		}
		tc.RootCAs = pool
	}
	if (cfg.CertFile == "") != (cfg.KeyFile == "") {
		return nil, fmt.Errorf("etcd client cert file (%q) and key file (%q) must be set together", cfg.CertFile, cfg.KeyFile)
	}
	if cfg.CertFile != "" {
		// Read separately so a missing file is reported by name.
		for _, f := range []string{cfg.CertFile, cfg.KeyFile} {
			if _, err := os.Stat(f); err != nil {
				return nil, fmt.Errorf("etcd client TLS: %w", err)
			}
		}
		cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("loading etcd client cert %s and key %s: %w", cfg.CertFile, cfg.KeyFile, err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// Check makes a linearizable read, which needs a raft quorum, so it fails
// when etcd is unreachable or has lost its leader. It is bounded by ctx, and
// by the dial timeout when ctx has no deadline (health probes' contexts often
// have none).
func (b *Backend) Check(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.dialTimeout)
		defer cancel()
	}
	if err := b.probe(ctx); err != nil {
		return fmt.Errorf("etcd at %v is not healthy: %w", b.Endpoints, err)
	}
	return nil
}

func (b *Backend) probe(ctx context.Context) error {
	_, err := b.Client.Get(ctx, healthKey, clientv3.WithLimit(1), clientv3.WithKeysOnly())
	// Being denied still proves etcd answered with quorum; kube-apiserver's
	// etcd check treats it the same way.
	if err == nil || errors.Is(err, rpctypes.ErrPermissionDenied) {
		return nil
	}
	return err
}

// Close closes the client, then the embedded server. It is safe to call
// more than once; later calls return the first call's result.
func (b *Backend) Close() error {
	b.closeOnce.Do(func() {
		if b.Client != nil {
			b.closeErr = b.Client.Close()
			if b.etcd != nil && errors.Is(b.closeErr, context.Canceled) {
				// The in-process client has no connection to close and
				// reports its own cancelled context.
				b.closeErr = nil
			}
		}
		if b.etcd != nil {
			b.etcdClosing.Store(true)
			b.etcd.Close()
		}
	})
	return b.closeErr
}

// quiet raises log's minimum level to lvl, leaving it alone when it is
// already stricter (zap.IncreaseLevel would complain on stderr then).
func quiet(log *zap.Logger, lvl zapcore.Level) *zap.Logger {
	if !log.Core().Enabled(lvl) {
		return log
	}
	return log.WithOptions(zap.IncreaseLevel(lvl))
}

// benignEtcdWarnings are message prefixes of warnings that do not apply to
// a private, loopback-only, single-member etcd, yet it prints them on every
// start.
var benignEtcdWarnings = []string{
	"Running http and grpc server on single port",
	"it isn't recommended to use default name",
	"simple token is not cryptographically signed",
}

// noiseFilter demotes embedded etcd's benign warnings, and everything it
// logs once Close has begun (its listeners report being closed as errors),
// to debug, below the warn floor set by quiet, so they are dropped.
type noiseFilter struct {
	zapcore.Core
	closing *atomic.Bool
}

func (f noiseFilter) With(fields []zapcore.Field) zapcore.Core {
	return noiseFilter{Core: f.Core.With(fields), closing: f.closing}
}

func (f noiseFilter) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if e.Level < zapcore.DPanicLevel && (f.closing.Load() || isBenign(e.Message)) {
		e.Level = zapcore.DebugLevel
	}
	return f.Core.Check(e, ce)
}

func isBenign(msg string) bool {
	for _, p := range benignEtcdWarnings {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

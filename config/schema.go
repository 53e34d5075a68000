// Package config holds kpipe's configuration: the schema (structs with
// koanf tags, defaults in Default), its loading from file, environment and
// flags, and validation with errors that name the key and where it came from.
package config

import (
	"time"
)

// Config is the whole of apiserver.yaml.
type Config struct {
	// StateDir holds everything the server writes: pki/, etcd/, admin.kubeconfig.
	StateDir string   `koanf:"stateDir"`
	Server   Server   `koanf:"server"`
	TLS      TLS      `koanf:"tls"`
	Storage  Storage  `koanf:"storage"`
	Services Services `koanf:"services"`
	// ServiceAccount is how service account tokens are signed and checked.
	ServiceAccount ServiceAccount `koanf:"serviceAccount"`
	Log            Log            `koanf:"log"`
	Tracing        Tracing        `koanf:"tracing"`
	// Pipeline is the request path, in order. Each entry names a stage plugin.
	Pipeline []Entry `koanf:"pipeline"`
	// PostStartHooks run once the listener serves.
	PostStartHooks []Entry `koanf:"postStartHooks"`
}

// Entry is one plugin in an ordered list: a pipeline stage, an
// authenticator, an authorizer, an admission plugin or a post-start hook.
type Entry struct {
	Name string `koanf:"name"`
	// Enabled defaults to true; false keeps the entry in the file but out of
	// the running server.
	Enabled *bool `koanf:"enabled"`
	// Config is decoded strictly by the plugin into its own struct.
	Config map[string]any `koanf:"config"`
}

// IsEnabled reports whether the entry runs.
func (e Entry) IsEnabled() bool { return e.Enabled == nil || *e.Enabled }

// Server is the secure listener and the process lifecycle.
type Server struct {
	BindAddress      string `koanf:"bindAddress"`
	SecurePort       int    `koanf:"securePort"`
	AdvertiseAddress string `koanf:"advertiseAddress"`
	// PermitPortSharing sets SO_REUSEPORT, PermitAddressSharing SO_REUSEADDR,
	// as kube's --permit-port-sharing and --permit-address-sharing do.
	PermitPortSharing            bool `koanf:"permitPortSharing"`
	PermitAddressSharing         bool `koanf:"permitAddressSharing"`
	HTTP2MaxStreamsPerConnection int  `koanf:"http2MaxStreamsPerConnection"`
	// ShutdownDelayDuration keeps serving after /readyz turns red, so load
	// balancers notice before the listener closes.
	ShutdownDelayDuration Duration `koanf:"shutdownDelayDuration"`
	// ShutdownTimeout bounds the drain of in-flight requests.
	ShutdownTimeout Duration `koanf:"shutdownTimeout"`
	// Profiling serves /debug/pprof to those authorized for it, as kube's
	// --profiling (default true).
	Profiling bool `koanf:"profiling"`
}

// TLS is the serving certificate and client verification.
type TLS struct {
	// CertFile and PrivateKeyFile, when set, replace the generated serving
	// certificate and are reloaded when they change on disk.
	CertFile       string `koanf:"certFile"`
	PrivateKeyFile string `koanf:"privateKeyFile"`
	// ClientCAFile is a bundle of CAs trusted for client certificates, in
	// addition to the generated client CA that signs admin.kubeconfig.
	ClientCAFile string `koanf:"clientCAFile"`
	// MinVersion is VersionTLS12 or VersionTLS13.
	MinVersion string `koanf:"minVersion"`
	// CipherSuites are Go's names (tls.CipherSuiteName); empty means Go's
	// secure defaults.
	CipherSuites []string `koanf:"cipherSuites"`
}

// Storage is etcd.
type Storage struct {
	// Prefix is the root of every key, /registry as in kube.
	Prefix string `koanf:"prefix"`
	// EventTTL is how long Events live, through etcd leases.
	EventTTL Duration `koanf:"eventTTL"`
	// EncryptionProviderConfig is kube's EncryptionConfiguration file:
	// which resources are encrypted at rest, and with which keys. Empty
	// stores everything in plaintext.
	EncryptionProviderConfig string     `koanf:"encryptionProviderConfig"`
	WatchCache               WatchCache `koanf:"watchCache"`
	Etcd                     Etcd       `koanf:"etcd"`
	// BookmarkInterval is how often a watch with allowWatchBookmarks gets
	// a BOOKMARK when nothing changes; 0 means a minute, as in kube. Not
	// read from files or the environment: tests shorten it.
	BookmarkInterval time.Duration `koanf:"-"`
}

// WatchCache serves lists, resourceVersion=0 gets and watches from memory,
// fed by one etcd watch per resource.
type WatchCache struct {
	Enabled bool `koanf:"enabled"`
	// Disabled names resources read straight from etcd, as kube spells
	// them: "events", "deployments.apps".
	Disabled []string `koanf:"disabled"`
}

// Etcd says where etcd is. No endpoints means an embedded etcd under stateDir/etcd.
type Etcd struct {
	Endpoints   []string `koanf:"endpoints"`
	CAFile      string   `koanf:"caFile"`
	CertFile    string   `koanf:"certFile"`
	KeyFile     string   `koanf:"keyFile"`
	DialTimeout Duration `koanf:"dialTimeout"`
	// HealthTimeout bounds the round trip of the etcd health check.
	HealthTimeout Duration `koanf:"healthTimeout"`
}

// Services are the ranges Service IPs and NodePorts come from.
type Services struct {
	ClusterIPRange string `koanf:"clusterIPRange"`
	NodePortRange  string `koanf:"nodePortRange"`
}

// ServiceAccount holds kube-apiserver's service account token flags.
type ServiceAccount struct {
	// Issuer is the tokens' iss (--service-account-issuer).
	Issuer string `koanf:"issuer"`
	// APIAudiences are the audiences the API accepts tokens for
	// (--api-audiences); empty means the issuer.
	APIAudiences []string `koanf:"apiAudiences"`
	// SigningKeyFile signs issued tokens (--service-account-signing-key-file);
	// empty means stateDir/pki/sa.key, generated on first start.
	SigningKeyFile string `koanf:"signingKeyFile"`
	// KeyFiles hold further public keys that verify tokens
	// (--service-account-key-file).
	KeyFiles []string `koanf:"keyFiles"`
	// MaxTokenExpiration caps a TokenRequest's duration
	// (--service-account-max-token-expiration); 0 is no cap.
	MaxTokenExpiration Duration `koanf:"maxTokenExpiration"`
}

// Log is zap's set-up.
type Log struct {
	Level  string `koanf:"level"`
	Format string `koanf:"format"`
}

// Tracing exports OpenTelemetry spans when Endpoint is set.
type Tracing struct {
	Endpoint string `koanf:"endpoint"`
	// SamplingRatePerMillion is kube's tracing config knob: 0 samples only
	// requests whose parent was sampled, 1000000 samples all.
	SamplingRatePerMillion int `koanf:"samplingRatePerMillion"`
}

// Default is the configuration with nothing set: every default lives here.
func Default() *Config {
	return &Config{
		StateDir: "./var",
		Server: Server{
			BindAddress:                  "0.0.0.0",
			SecurePort:                   6443,
			HTTP2MaxStreamsPerConnection: 1000,
			ShutdownDelayDuration:        0,
			ShutdownTimeout:              60 * time.Second,
			Profiling:                    true,
		},
		TLS: TLS{MinVersion: "VersionTLS12"},
		Storage: Storage{
			Prefix:     "/registry",
			EventTTL:   time.Hour,
			WatchCache: WatchCache{Enabled: true},
			Etcd: Etcd{
				DialTimeout:   5 * time.Second,
				HealthTimeout: 2 * time.Second,
			},
		},
		Services: Services{
			ClusterIPRange: "10.96.0.0/12",
			NodePortRange:  "30000-32767",
		},
		ServiceAccount: ServiceAccount{
			Issuer:       "https://kubernetes.default.svc.cluster.local",
			APIAudiences: []string{},
			KeyFiles:     []string{},
		},
		Log:            Log{Level: "info", Format: "json"},
		Pipeline:       entries(DefaultPipeline...),
		PostStartHooks: entries(DefaultPostStartHooks...),
	}
}

// DefaultPipeline is the request path when no file declares one. The
// shipped apiserver.yaml declares the same list (a test keeps them equal).
var DefaultPipeline = []string{
	"panic-recovery", "request-info", "max-inflight", "timeout",
	"authentication", "audit", "impersonation", "authorization",
	"decode", "field-manager", "mutating-admission", "validate",
	"validating-admission", "etcd-writer",
}

// DefaultPostStartHooks run when no file declares them.
var DefaultPostStartHooks = []string{
	"bootstrap-controller", "namespace-controller", "apiserver-identity-lease", "serviceaccount-controller",
	"resourcequota-controller", "scheduling/bootstrap-system-priority-classes", "clusterrole-aggregation",
}

func entries(names ...string) []Entry {
	out := make([]Entry, len(names))
	for i, n := range names {
		out[i] = Entry{Name: n}
	}
	return out
}

// Package pipeline is kpipe's request path engine: the plugin contract, the
// registry, the builder that turns apiserver.yaml's ordered lists into
// running stages, the per-stage metrics, and hot reload.
//
// The engine knows nothing about any single plugin. Plugins know these
// contracts and nothing about each other.
package pipeline

import (
	"context"
	"crypto/x509"
	"net"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/client-go/rest"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/server/healthz"
	"github.com/kpipe/kpipe/internal/serviceaccount"
)

// Kind says in which list a plugin may appear.
type Kind string

// The lists of apiserver.yaml.
const (
	KindStage               Kind = "stage"
	KindAuthenticator       Kind = "authenticator"
	KindAuthorizer          Kind = "authorizer"
	KindMutatingAdmission   Kind = "mutating-admission"
	KindValidatingAdmission Kind = "validating-admission"
	KindPostStartHook       Kind = "post-start-hook"
)

// Plugin is what a plugin registers: its name, kind and factory.
//
// Lifecycle: the builder decodes the entry's config strictly into Config()
// (which carries the defaults), calls its Validate if it has one, then New.
// New must have no side effects, so `apiserver config validate` can run it.
// Resources are taken in Provision and released in Close.
type Plugin struct {
	Name string
	Kind Kind
	// Description is one line for `apiserver plugins`.
	Description string
	// Config returns a pointer to a new config struct holding the defaults.
	// Nil means the plugin takes no config, and a config: block is an error.
	Config func() any
	// New builds an instance from the decoded, validated config.
	New func(cfg any) (any, error)
	// Nested names config keys that hold ordered plugin lists of a kind
	// (authentication's "authenticators", say). The builder builds them
	// with the same rules, and Provision finds them in Env.Nested.
	Nested map[string]Kind
	// NestedDefaults are the lists used when the config leaves a nested
	// key out (kube's default-on admission plugins, say). An explicit
	// empty list turns them all off.
	NestedDefaults map[string][]config.Entry
	// Requires are stages that must be listed, enabled, before this one.
	Requires []string
	// After are stages that, if listed, must come before this one.
	After []string
	// Terminal marks the stage that answers resource requests. Exactly one
	// is listed, last.
	Terminal bool
}

// Stage is a stage instance: a chi middleware. Middleware is called once
// per pipeline build, never per request, and must not keep next anywhere
// but in the handler it returns.
type Stage interface {
	Middleware(next http.Handler) http.Handler
}

// Middleware adapts a plain chi middleware func to Stage.
type Middleware func(http.Handler) http.Handler

// Middleware implements Stage.
func (m Middleware) Middleware(next http.Handler) http.Handler { return m(next) }

// Validator is implemented by config structs that check themselves.
type Validator interface{ Validate() error }

// Provisioner is implemented by instances that take resources: metrics,
// caches, goroutines. Provision runs once per instance, before it serves.
type Provisioner interface{ Provision(env *Env) error }

// HealthChecker is implemented by instances with health checks, served
// under /readyz and /livez.
type HealthChecker interface{ HealthChecks() []healthz.Check }

// Closer is implemented by instances that hold resources. Close runs once
// the last generation using the instance has drained.
type Closer interface{ Close() error }

// Publisher is implemented by instances that offer a service to the
// rest of the server (an authorizer, an authenticator, a failure auditor).
// Publish fills in what the instance offers. The engine calls it on every
// instance of a generation about to serve and puts the result in Shared's
// holders; a service no instance of that generation offers is withdrawn,
// and its users fail closed. Publish must only set fields: it may run
// again on a reused instance.
type Publisher interface{ Publish(*Services) }

// Services are what a generation's instances offer through Shared.
type Services struct {
	Authorizer    auth.Authorizer
	Authenticator auth.Authenticator
	AuthFailures  auth.FailureAuditor
}

// Redactor is implemented by config structs holding secrets: /debug/pipeline
// shows Redacted() instead of the config.
type Redactor interface{ Redacted() any }

// PostStartHook is implemented by post-start-hook instances. Run is called
// once the listener serves; until it returns nil, /readyz fails its
// poststarthook/<name> check. ctx ends at shutdown.
type PostStartHook interface {
	Run(ctx context.Context, env *HookEnv) error
}

// HookProvider is implemented by instances (a stage, an authorizer, an
// admission plugin) with work to run once the listener serves, such as a
// cache that fills from the loopback client. Each hook gets a
// poststarthook/<name> readiness check. Hooks of an instance built by a
// reload run when it is provisioned; their context ends when the instance
// is closed.
type HookProvider interface {
	PostStartHooks() []NamedHook
}

// NamedHook is a post-start hook with its check name.
type NamedHook struct {
	Name string
	Hook PostStartHook
}

// PreShutdownHook is implemented by instances with work to do before the
// listener closes.
type PreShutdownHook interface {
	PreShutdown(ctx context.Context) error
}

// HookEnv is what a post-start hook gets.
type HookEnv struct {
	// Loopback talks to this server as system:masters.
	Loopback *rest.Config
	// AdvertiseAddress is the address other members reach this server on,
	// and SecurePort the port it serves on.
	AdvertiseAddress net.IP
	SecurePort       int
}

// Env is what the engine gives a plugin at Provision.
type Env struct {
	// Log is named after the plugin.
	Log *zap.Logger
	// Metrics is the server's registry. Plugin metrics use the plugin's name
	// as subsystem and bounded labels. Register through Register, which
	// tolerates the re-registration a reload causes.
	Metrics prometheus.Registerer
	// Server is the running server's config, read-only.
	Server *config.Config
	// Context ends when the instance is closed (a reload dropped it) or at
	// shutdown.
	Context context.Context
	// Shared are the server's objects plugins may use.
	Shared *Shared

	nested map[string][]*Instance
}

// Nested returns the instances built from the plugin's nested list key,
// enabled entries only, in order.
func (e *Env) Nested(key string) []*Instance { return e.nested[key] }

// Shared holds what the server offers every plugin. The server fills it
// once before the first build; fields are added as plugins need them. Its
// holders carry the serving generation's Services.
type Shared struct {
	// ClientCA returns the pool that verifies client certificates: the
	// generated client CA plus tls.clientCAFile, reloaded when it changes.
	ClientCA func() *x509.CertPool
	// LoopbackToken is the bearer token of the loopback client, whose user
	// is in system:masters.
	LoopbackToken string
	// StateDir is where the server keeps its files.
	StateDir string
	// Stopping closes when the server starts draining: long-running
	// requests (watches) end when they see it.
	Stopping <-chan struct{}
	// Resources are the served resources, each with its store.
	Resources *api.Registry
	// StoragePrefix is the root of every etcd key (/registry).
	StoragePrefix string
	// Etcd is the storage client, for keys outside the served resources
	// (master leases, allocation bitmaps).
	Etcd *clientv3.Client
	// Authorizer is the serving generation's authorization decision, for
	// impersonation, the access review APIs, RBAC's escalation check and
	// CEL's authorizer; empty (ErrNoAuthorizer) when it has none. The
	// engine sets it from Services: plugins read it, never set it.
	Authorizer *auth.Holder
	// Authenticator is the serving generation's authenticator, for
	// TokenReview; set by the engine as Authorizer is.
	Authenticator *auth.AuthenticatorHolder
	// ServiceAccounts signs and verifies service account tokens with the
	// server's keys; nil when the server has none.
	ServiceAccounts *serviceaccount.Tokens
	// AuthFailures carries the serving generation's record of failed
	// authentication (the audit stage's) to the authentication stage; set
	// by the engine as Authorizer is.
	AuthFailures *auth.FailureHook
}

// Register registers c on the env's registry, or returns the collector
// already registered under the same descriptor (a reload rebuilt the plugin).
func Register[C prometheus.Collector](env *Env, c C) C {
	if err := env.Metrics.Register(c); err != nil {
		if are, ok := err.(prometheus.AlreadyRegisteredError); ok {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(err)
	}
	return c
}

// PassThrough is a stage that hands every request on. Stages whose
// behaviour is not built yet use it, so they are still named, timed and
// listed.
var PassThrough Stage = Middleware(func(next http.Handler) http.Handler { return next })

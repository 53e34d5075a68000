// Package serviceaccount is the service-account authenticator: bearer
// JWTs signed with the server's service account key, as kube-apiserver's
// service account token authenticator.
package serviceaccount

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
	sa "github.com/kpipe/kpipe/internal/serviceaccount"
)

// Name is the authenticator's name in apiserver.yaml.
const Name = "service-account"

// Config is the authenticator's config block.
type Config struct {
	// CacheTTL is how long a token that authenticated is taken as valid
	// without verifying it and reading its service account again (never
	// past the token's expiry): kube-apiserver's token success cache.
	// 0 verifies every request.
	CacheTTL config.Duration `koanf:"cacheTTL"`
}

// defaultConfig is kube-apiserver's: successes are cached for 10 s.
func defaultConfig() *Config { return &Config{CacheTTL: 10 * time.Second} }

// Validate implements pipeline.Validator.
func (c *Config) Validate() error {
	if c.CacheTTL < 0 {
		return &config.FieldError{Key: "cacheTTL", Msg: fmt.Sprintf("must be 0 or more, got %s", c.CacheTTL)}
	}
	return nil
}

// Register adds the authenticator to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindAuthenticator,
		Description: "authenticates service account tokens (JWTs signed with the server's service account key) whose service account still exists; successes are cached for cacheTTL.",
		Config:      func() any { return defaultConfig() },
		New: func(cfg any) (any, error) {
			return &Authenticator{now: time.Now, ttl: time.Duration(cfg.(*Config).CacheTTL)}, nil
		},
	})
}

// Authenticator verifies service account tokens.
type Authenticator struct {
	tokens *sa.Tokens
	objs   sa.Objects
	now    func() time.Time
	ttl    time.Duration
	cache  *auth.TokenCache // nil when ttl is 0
}

// lookupTimeout bounds a verification shared by concurrent requests with
// one token: it runs on none of their contexts, so one client going away
// does not fail the others.
const lookupTimeout = 10 * time.Second

var (
	_ auth.Authenticator   = (*Authenticator)(nil)
	_ pipeline.Provisioner = (*Authenticator)(nil)
)

// Provision implements pipeline.Provisioner.
func (a *Authenticator) Provision(env *pipeline.Env) error {
	if env.Shared == nil || env.Shared.ServiceAccounts == nil || env.Shared.Resources == nil {
		return errors.New("service-account: the server has no service account key or no resources")
	}
	a.tokens = env.Shared.ServiceAccounts
	a.objs = sa.Objects{Resources: env.Shared.Resources, Prefix: env.Shared.StoragePrefix}
	if a.ttl > 0 {
		m := auth.NewTokenCacheMetrics()
		if env.Metrics != nil {
			m.Requests = pipeline.Register(env, m.Requests)
			m.Latency = pipeline.Register(env, m.Latency)
			m.Fetches = pipeline.Register(env, m.Fetches)
		}
		a.cache = auth.NewTokenCache(a.ttl, m)
	}
	return nil
}

// AuthenticateRequest implements auth.Authenticator. A bearer token that
// is not a JWT of this issuer is left to the others; one that is, but is
// invalid, expired, for other audiences or for a deleted service account,
// is an error (401).
func (a *Authenticator) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	return auth.AuthenticateBearer(r, a.cache, nil, lookupTimeout, a.verify)
}

// verify checks the token's signature, claims and audiences, and that
// what it names still exists.
func (a *Authenticator) verify(ctx context.Context, token string, want []string) (auth.TokenResult, bool, error) {
	c, matched, ok, err := a.tokens.Verify(token, want)
	if err != nil || !ok {
		return auth.TokenResult{}, false, err
	}
	if err := a.objs.Live(ctx, c, a.now()); err != nil {
		return auth.TokenResult{}, false, err
	}
	res := auth.TokenResult{User: sa.UserFor(c), Matched: matched}
	if c.ExpiresAt != nil {
		res.NotAfter = c.ExpiresAt.Time
	}
	return res, true, nil
}

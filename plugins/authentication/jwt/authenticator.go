package jwt

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
)

// Authenticator verifies the JWTs of its issuers. A token whose iss is not
// one of them is left to the next authenticator.
type Authenticator struct {
	issuers map[string]*issuer // by url
	order   []*issuer
	ttl     time.Duration
	cache   *auth.TokenCache // nil when ttl is 0

	apiAudiences []string // nil: audience-agnostic, as without a server key
	latency      *prometheus.HistogramVec
}

var (
	_ auth.Authenticator   = (*Authenticator)(nil)
	_ pipeline.Provisioner = (*Authenticator)(nil)
)

// New returns the authenticator of a config, which it validates (and
// compiles) if the builder has not. It fetches nothing until it is
// provisioned.
func New(c *Config) (*Authenticator, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	a := &Authenticator{issuers: map[string]*issuer{}, ttl: time.Duration(c.CacheTTL), latency: newLatency()}
	for _, ic := range c.Issuers {
		is := newIssuer(ic)
		a.issuers[ic.URL] = is
		a.order = append(a.order, is)
	}
	return a, nil
}

// newLatency is kube's apiserver_authentication_jwt_authenticator_latency_seconds.
func newLatency() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "apiserver",
		Subsystem: "authentication",
		Name:      "jwt_authenticator_latency_seconds",
		Help:      "Latency of jwt authentication operations in seconds. This is the time spent authenticating a token for cache miss only (i.e. when the token is not found in the cache).",
		Buckets:   []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"result", "jwt_issuer_hash"})
}

// Provision implements pipeline.Provisioner: it refuses the server's own
// service account issuer, as kube's disallowed issuers, registers the
// metrics and starts discovering the issuers.
func (a *Authenticator) Provision(env *pipeline.Env) error {
	if env.Shared != nil && env.Shared.ServiceAccounts != nil {
		sa := env.Shared.ServiceAccounts
		for i, is := range a.order {
			if is.cfg.URL == sa.Issuer() {
				return firstError(field.ErrorList{field.Invalid(field.NewPath("issuers").Index(i).Child("url"), is.cfg.URL,
					fmt.Sprintf("URL must not overlap with disallowed issuers: %s", []string{sa.Issuer()}))})
			}
		}
		a.apiAudiences = sa.APIAudiences()
	}
	if env.Metrics != nil {
		a.latency = pipeline.Register(env, a.latency)
	}
	if a.ttl > 0 {
		m := auth.NewTokenCacheMetrics()
		if env.Metrics != nil {
			m.Requests = pipeline.Register(env, m.Requests)
			m.Latency = pipeline.Register(env, m.Latency)
			m.Fetches = pipeline.Register(env, m.Fetches)
		}
		a.cache = auth.NewTokenCache(a.ttl, m)
	}
	log := env.Log
	if log == nil {
		log = zap.NewNop()
	}
	ctx := env.Context
	if ctx == nil {
		ctx = context.Background()
	}
	for _, is := range a.order {
		go is.run(ctx, log)
	}
	// Wait, briefly, for each issuer's first discovery, so that an
	// authenticator built by a reload takes over with its keys, as kube
	// waits for a reloaded one; an issuer that is down or slow is not
	// waited for longer, and keeps being tried.
	deadline := time.NewTimer(firstDiscoveryWait)
	defer deadline.Stop()
	for _, is := range a.order {
		select {
		case <-is.tried:
		case <-deadline.C:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// firstDiscoveryWait bounds how long Provision waits for the issuers.
const firstDiscoveryWait = 3 * time.Second

// HealthCheck is kube's: nil once every issuer has been reached. It is not
// a /readyz check, as in kube, where the server serves while an issuer is
// down and only that issuer's tokens fail.
func (a *Authenticator) HealthCheck() error {
	var errs []error
	for _, is := range a.order {
		if err := is.healthy(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// lookupTimeout bounds a verification shared by concurrent requests with
// one token (a key fetch may be part of it).
const lookupTimeout = 30 * time.Second

// AuthenticateRequest implements auth.Authenticator.
func (a *Authenticator) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	token, ok := auth.BearerToken(r)
	if !ok {
		return nil, false, nil
	}
	iss, ok := untrustedIssuer(token)
	if !ok {
		return nil, false, nil
	}
	is := a.issuers[iss]
	if is == nil {
		return nil, false, nil
	}
	// kube's audience-agnostic wrapper: a TokenReview for audiences the
	// API does not serve is not this authenticator's.
	check := auth.AudienceCheckFrom(r.Context())
	var matched []string
	if check != nil && a.apiAudiences != nil {
		for _, w := range check.Want {
			if slices.Contains(a.apiAudiences, w) {
				matched = append(matched, w)
			}
		}
		if len(matched) == 0 {
			return nil, false, nil
		}
	}
	var res auth.TokenResult
	var err error
	if a.cache == nil {
		res, err = a.authenticate(r.Context(), is, token)
	} else {
		res, _, err = a.cache.Authenticate(token, nil, func() (auth.TokenResult, bool, error) {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), lookupTimeout)
			defer cancel()
			res, err := a.authenticate(ctx, is, token)
			return res, err == nil, err
		})
	}
	if err != nil {
		return nil, false, err
	}
	if check != nil {
		check.Matched = matched
	}
	return res.User, true, nil
}

// authenticate verifies a token of is, timed as kube's
// apiserver_authentication_jwt_authenticator_latency_seconds.
func (a *Authenticator) authenticate(ctx context.Context, is *issuer, token string) (auth.TokenResult, error) {
	start := time.Now()
	res, err := a.verify(ctx, is, token)
	result := "success"
	if err != nil {
		result = "failure"
	}
	a.latency.WithLabelValues(result, is.hash).Observe(time.Since(start).Seconds())
	return res, err
}

func (a *Authenticator) verify(ctx context.Context, is *issuer, token string) (auth.TokenResult, error) {
	ks := is.keys.Load()
	if ks == nil {
		return auth.TokenResult{}, errors.New("oidc: authenticator not initialized")
	}
	c, exp, err := is.verifyToken(ctx, ks, token)
	if err != nil {
		return auth.TokenResult{}, fmt.Errorf("oidc: verify token: %v", err)
	}
	u, err := is.user(ctx, c)
	if err != nil {
		return auth.TokenResult{}, err
	}
	return auth.TokenResult{User: u, NotAfter: exp}, nil
}

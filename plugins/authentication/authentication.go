package authentication

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kpipe/kpipe/internal/api/status"
	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
)

// fallback is implemented by authenticators that stand in for a missing
// credential (anonymous). They are skipped once another authenticator
// found an invalid one, as kube's fail-on-error union around anonymous.
type fallback interface{ Fallback() bool }

// Stage asks its authenticators in order; the first that recognises the
// request wins.
type Stage struct {
	authenticators []auth.Authenticator
	loopbackToken  string
	failures       *auth.FailureHook
	log            *zap.Logger
	attempts       *prometheus.CounterVec
	duration       *prometheus.HistogramVec
}

var (
	_ pipeline.Stage       = (*Stage)(nil)
	_ pipeline.Provisioner = (*Stage)(nil)
	_ pipeline.Publisher   = (*Stage)(nil)
)

// Provision implements pipeline.Provisioner.
func (s *Stage) Provision(env *pipeline.Env) error {
	for _, in := range env.Nested("authenticators") {
		a, ok := in.Value.(auth.Authenticator)
		if !ok {
			return errors.New(in.Label + ": not an authenticator")
		}
		s.authenticators = append(s.authenticators, a)
	}
	if env.Shared != nil {
		s.loopbackToken = env.Shared.LoopbackToken
		s.failures = env.Shared.AuthFailures
	}
	s.log = env.Log
	if s.log == nil {
		s.log = zap.NewNop()
	}
	// kube's names, help and buckets (k8s.io/apiserver endpoints/filters).
	s.attempts = pipeline.Register(env, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "authentication_attempts",
		Help: "Counter of authenticated attempts.",
	}, []string{"result"}))
	s.duration = pipeline.Register(env, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "authentication_duration_seconds",
		Help:    "Authentication duration in seconds broken out by result.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
	}, []string{"result"}))
	return nil
}

// Publish implements pipeline.Publisher: TokenReview asks this stage
// while its generation serves.
func (s *Stage) Publish(sv *pipeline.Services) { sv.Authenticator = s }

// Middleware implements pipeline.Stage.
func (s *Stage) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		u, err := s.authenticate(r)
		result := "success"
		switch {
		case u != nil:
		case err != nil:
			result = "error"
		default:
			result = "failure"
		}
		s.attempts.WithLabelValues(result).Inc()
		s.duration.WithLabelValues(result).Observe(time.Since(start).Seconds())
		if u == nil {
			if err != nil {
				s.log.Info("unable to authenticate the request", zap.String("path", r.URL.Path), zap.Error(err))
			}
			// Audited when an audit stage is listed, as kube's
			// WithFailedAuthenticationAudit.
			status.Write(s.failures.Wrap(w, r), apierrors.NewUnauthorized("Unauthorized"))
			return
		}
		// Nothing after this stage needs the credential, as in kube.
		r.Header.Del("Authorization")
		clearProxyHeaders(r.Header)
		if u.Name == request.Anonymous && r.ProtoMajor == 2 {
			// kube's UnauthenticatedHTTP2DOSMitigation: one request per
			// anonymous HTTP/2 connection.
			w.Header().Set("Connection", "close")
		}
		request.SetUser(r.Context(), u)
		next.ServeHTTP(w, r)
	})
}

// authenticate returns the user, or nil and the error of an invalid
// credential (nil when there was no credential anyone recognised).
func (s *Stage) authenticate(r *http.Request) (*request.User, error) {
	if s.loopbackToken != "" {
		if tok, ok := auth.BearerToken(r); ok && subtle.ConstantTimeCompare([]byte(tok), []byte(s.loopbackToken)) == 1 {
			return &request.User{Name: request.APIServerUser, Groups: []string{request.SystemPrivileged, request.AllAuthenticated}}, nil
		}
	}
	var errs []error
	for _, a := range s.authenticators {
		if f, ok := a.(fallback); ok && f.Fallback() && len(errs) > 0 {
			continue
		}
		u, ok, err := a.AuthenticateRequest(r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok && u != nil {
			return withAuthenticatedGroup(u), nil
		}
	}
	return nil, errors.Join(errs...)
}

// withAuthenticatedGroup adds system:authenticated to every user but
// anonymous, unless it already is in it or in system:unauthenticated.
func withAuthenticatedGroup(u *request.User) *request.User {
	if u.Name == request.Anonymous || slices.Contains(u.Groups, request.AllAuthenticated) || slices.Contains(u.Groups, request.AllUnauthenticated) {
		return u
	}
	c := *u
	c.Groups = append(slices.Clip(u.Groups), request.AllAuthenticated)
	return &c
}

// clearProxyHeaders drops kube's standard front-proxy identity headers,
// so no later stage mistakes them for an authenticated identity.
func clearProxyHeaders(h http.Header) {
	h.Del("X-Remote-User")
	h.Del("X-Remote-Uid")
	h.Del("X-Remote-Group")
	for k := range h {
		if strings.HasPrefix(k, "X-Remote-Extra-") {
			h.Del(k)
		}
	}
}

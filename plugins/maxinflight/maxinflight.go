package maxinflight

import (
	"errors"
	"net/http"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kpipe/kpipe/internal/api/status"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
)

// tooManyRequestsMessage is the text kube's max-in-flight filter answers
// with; clients and runbooks grep for it.
const tooManyRequestsMessage = "Too many requests, please try again later."

// Limiter is the stage instance. Its counters live on the instance, not per
// Middleware call, so every chain built from it shares one budget.
type Limiter struct {
	readOnly, mutating slot
}

var (
	_ pipeline.Stage       = (*Limiter)(nil)
	_ pipeline.Provisioner = (*Limiter)(nil)
)

// slot counts the requests admitted against one limit.
type slot struct {
	max   int64 // 0: unlimited, nothing is counted
	n     atomic.Int64
	gauge prometheus.Gauge // nil until Provision
}

func newLimiter(c *Config) *Limiter {
	l := &Limiter{}
	l.readOnly.max = int64(c.MaxRequestsInflight)
	l.mutating.max = int64(c.MaxMutatingRequestsInflight)
	return l
}

// Provision registers the in-flight gauge.
func (l *Limiter) Provision(env *pipeline.Env) error {
	g := pipeline.Register(env, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "apiserver", Subsystem: "max_inflight", Name: "current_requests",
		Help: "Requests counted against the max-inflight limits, by kind (readOnly or mutating).",
	}, []string{"request_kind"}))
	// Inc and Dec rather than Set: after a reload the old and new instances
	// share the series while the old one drains.
	l.readOnly.gauge = g.WithLabelValues("readOnly")
	l.mutating.gauge = g.WithLabelValues("mutating")
	return nil
}

// acquire admits a request if the limit allows; it never waits, as kube
// without priority and fairness does not.
func (s *slot) acquire() bool {
	if s.max == 0 {
		return true
	}
	// A CAS loop rather than Add-then-undo, so a request being turned away
	// never makes a concurrent one see the limit as reached.
	for {
		cur := s.n.Load()
		if cur >= s.max {
			return false
		}
		if s.n.CompareAndSwap(cur, cur+1) {
			break
		}
	}
	if s.gauge != nil {
		s.gauge.Inc()
	}
	return true
}

func (s *slot) release() {
	if s.max == 0 {
		return
	}
	s.n.Add(-1)
	if s.gauge != nil {
		s.gauge.Dec()
	}
}

// Middleware implements pipeline.Stage.
func (l *Limiter) Middleware(next http.Handler) http.Handler {
	if l.readOnly.max == 0 && l.mutating.max == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, ok := request.InfoFrom(r.Context())
		if !ok {
			status.Write(w, apierrors.NewInternalError(errors.New("no RequestInfo found in context, handler chain must be wrong")))
			return
		}
		// Watches and other streams would hold a slot for their whole life.
		if info.IsLongRunning() {
			next.ServeHTTP(w, r)
			return
		}
		s := &l.mutating
		if info.IsReadOnly() {
			s = &l.readOnly
		}
		if !s.acquire() {
			status.Write(w, apierrors.NewTooManyRequests(tooManyRequestsMessage, 1))
			return
		}
		defer s.release()
		next.ServeHTTP(w, r)
	})
}

// Package healthz serves kube-apiserver compatible /healthz, /livez and
// /readyz endpoints, so kubectl, kubelet probes and tooling written against
// kube-apiserver read kpipe's health output unchanged.
package healthz

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/go-chi/chi/v5"
	"go.uber.org/zap"
)

// Check is a named health check. Check gets the probing request so a check
// can honour its context or query parameters.
type Check interface {
	Name() string
	Check(r *http.Request) error
}

type namedCheck struct {
	name string
	fn   func(r *http.Request) error
}

func (c namedCheck) Name() string                { return c.name }
func (c namedCheck) Check(r *http.Request) error { return c.fn(r) }

// NamedCheck wraps fn as a Check called name.
func NamedCheck(name string, fn func(r *http.Request) error) Check {
	return namedCheck{name: name, fn: fn}
}

// PingCheck always passes; it is what an endpoint serves when it has no
// other checks, as kube-apiserver does.
var PingCheck = NamedCheck("ping", func(*http.Request) error { return nil })

// ShutdownCheck passes until Begin is called. Adding it to /readyz lets load
// balancers drain traffic before the server stops listening.
// The zero value is ready to use.
type ShutdownCheck struct {
	shuttingDown atomic.Bool
}

var errShuttingDown = errors.New("process is shutting down")

// Name implements Check.
func (s *ShutdownCheck) Name() string { return "shutdown" }

// Begin makes every later Check fail.
func (s *ShutdownCheck) Begin() { s.shuttingDown.Store(true) }

// Check implements Check.
func (s *ShutdownCheck) Check(*http.Request) error {
	if s.shuttingDown.Load() {
		return errShuttingDown
	}
	return nil
}

// Option configures Install.
type Option func(*options)

type options struct {
	log *zap.Logger
}

// WithLogger sets where the reasons of failed checks are logged; they are
// withheld from the response because health endpoints are often public.
func WithLogger(log *zap.Logger) Option {
	return func(o *options) { o.log = log }
}

// Install mounts /<endpoint> and /<endpoint>/<check-name> on r. Check names
// may contain '/' (e.g. "poststarthook/rbac"). checks is called on every
// request because the set changes at run time (pipeline reloads, post-start
// hooks); when it returns none, PingCheck is served instead, as kube does.
func Install(r chi.Router, endpoint string, checks func() []Check, opts ...Option) {
	o := options{log: zap.NewNop()}
	for _, opt := range opts {
		opt(&o)
	}
	if o.log == nil {
		o.log = zap.NewNop()
	}
	path := "/" + strings.Trim(endpoint, "/")
	// kube names the endpoint in messages by its first path segment.
	name := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 2)[0]
	current := func() []Check {
		if cs := checks(); len(cs) > 0 {
			return cs
		}
		return []Check{PingCheck}
	}
	h := &handler{name: name, checks: current, log: o.log.With(zap.String("endpoint", path))}
	r.Handle(path, http.HandlerFunc(h.serveRoot))
	r.Handle(path+"/*", http.HandlerFunc(h.serveSingle))
}

type handler struct {
	name   string
	checks func() []Check
	log    *zap.Logger
}

func setTextHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
}

func (h *handler) serveRoot(w http.ResponseWriter, r *http.Request) {
	query := r.URL.Query()
	excluded := map[string]bool{}
	for _, n := range query["exclude"] {
		excluded[n] = false // becomes true once a check matches
	}

	var out, failedDetail bytes.Buffer
	var failed []string
	for _, c := range h.checks() {
		n := c.Name()
		if _, ok := excluded[n]; ok {
			excluded[n] = true
			fmt.Fprintf(&out, "[+]%s excluded: ok\n", n)
			continue
		}
		if err := c.Check(r); err != nil {
			// The reason may leak internals, so only the log gets it.
			fmt.Fprintf(&out, "[-]%s failed: reason withheld\n", n)
			fmt.Fprintf(&failedDetail, "[-]%s failed: %v\n", n, err)
			failed = append(failed, n)
			continue
		}
		fmt.Fprintf(&out, "[+]%s ok\n", n)
	}

	var unmatched []string
	for n, matched := range excluded {
		if !matched {
			unmatched = append(unmatched, n)
		}
	}
	if len(unmatched) > 0 {
		sort.Strings(unmatched) // kube lists them sorted; keeps output stable
		quoted := make([]string, len(unmatched))
		for i, n := range unmatched {
			quoted[i] = fmt.Sprintf("%q", n)
		}
		fmt.Fprintf(&out, "warn: some health checks cannot be excluded: no matches for %s\n", strings.Join(quoted, ","))
	}

	if len(failed) > 0 {
		h.log.Info("health check failed",
			zap.Strings("checks", failed),
			zap.String("details", failedDetail.String()))
		// Failures are always verbose so probes' logs show which check failed.
		http.Error(w, fmt.Sprintf("%s%s check failed", out.String(), h.name), http.StatusInternalServerError)
		return
	}

	setTextHeaders(w)
	if _, verbose := query["verbose"]; !verbose {
		fmt.Fprint(w, "ok")
		return
	}
	_, _ = out.WriteTo(w)
	fmt.Fprintf(w, "%s check passed\n", h.name)
}

func (h *handler) serveSingle(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "*")
	// chi routes on the raw path when it has escapes, e.g. "a%2Fb".
	if r.URL.RawPath != "" {
		if u, err := url.PathUnescape(name); err == nil {
			name = u
		}
	}
	for _, c := range h.checks() {
		if name == "" || c.Name() != name {
			continue
		}
		if err := c.Check(r); err != nil {
			http.Error(w, fmt.Sprintf("internal server error: %v", err), http.StatusInternalServerError)
			return
		}
		setTextHeaders(w)
		fmt.Fprint(w, "ok")
		return
	}
	http.NotFound(w, r)
}

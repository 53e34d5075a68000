// Package authorization is the authorization stage: it asks its ordered
// list of authorizers whether the request's user may do what the request
// does, as kube-apiserver's WithAuthorization filter and union authorizer do.
package authorization

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/api/status"
	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
)

// Name is the stage's name in apiserver.yaml.
const Name = "authorization"

// Register adds the stage to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindStage,
		Description: "authorizes the request with an ordered list of authorizers.",
		New:         func(any) (any, error) { return &Stage{log: zap.NewNop()}, nil },
		Nested:      map[string]pipeline.Kind{"authorizers": pipeline.KindAuthorizer},
		NestedDefaults: map[string][]config.Entry{
			"authorizers": {{Name: "rbac"}},
		},
		Requires: []string{"authentication"},
		After:    []string{"impersonation", "audit"},
	})
}

// named is one authorizer of the list with its name, for metrics, and
// its union name, which prefixes its reasons when nobody decides.
type named struct {
	name  string
	union string
	auth.Authorizer
}

// newNamed names a, listed as plugin.
func newNamed(plugin string, a auth.Authorizer) named {
	n := named{name: plugin, union: plugin, Authorizer: a}
	if u, ok := a.(unionNamer); ok {
		n.union = u.AuthorizerName()
	}
	return n
}

// unionNamer is implemented by authorizers whose name in kube's union is
// not their plugin name (a webhook's configured name).
type unionNamer interface{ AuthorizerName() string }

// Stage authorizes every request; a refusal is a 403 Forbidden Status.
type Stage struct {
	authorizers []named
	decisions   *prometheus.CounterVec
	log         *zap.Logger
}

var (
	_ pipeline.Stage       = (*Stage)(nil)
	_ pipeline.Provisioner = (*Stage)(nil)
	_ pipeline.Publisher   = (*Stage)(nil)
)

// Provision implements pipeline.Provisioner.
func (s *Stage) Provision(env *pipeline.Env) error {
	s.log = env.Log
	for _, in := range env.Nested("authorizers") {
		a, ok := in.Value.(auth.Authorizer)
		if !ok {
			return errors.New(in.Label + ": not an authorizer")
		}
		s.authorizers = append(s.authorizers, newNamed(in.Plugin.Name, a))
	}
	s.decisions = pipeline.Register(env, prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "apiserver",
		Subsystem: "authorization",
		Name:      "decisions_total",
		Help:      "Total number of terminal decisions made by an authorizer split by authorizer type, name, and decision.",
	}, []string{"type", "name", "decision"}))
	return nil
}

// Publish implements pipeline.Publisher: impersonation, the access review
// APIs, RBAC's escalation check and CEL's authorizer ask this stage while
// its generation serves.
func (s *Stage) Publish(sv *pipeline.Services) { sv.Authorizer = s }

// errNoUser is kube's answer when no user reached an authorizing filter.
var errNoUser = errors.New("no user found for request")

// Middleware implements pipeline.Stage.
func (s *Stage) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		info, ok := request.InfoFrom(ctx)
		if !ok {
			status.Write(w, apierrors.NewInternalError(errors.New("no RequestInfo found in the context")))
			return
		}
		u, ok := request.UserFrom(ctx)
		if !ok {
			status.Write(w, apierrors.NewInternalError(errNoUser))
			return
		}
		a := Attributes(info, u)
		d, reason, err := s.Authorize(ctx, a)
		if d == auth.Allow {
			request.AddAuditAnnotation(ctx, decisionAnnotation, "allow")
			request.AddAuditAnnotation(ctx, reasonAnnotation, reason)
			next.ServeHTTP(w, r)
			return
		}
		if err != nil {
			request.AddAuditAnnotation(ctx, reasonAnnotation, "internal error")
			s.log.Warn("authorization error", zap.String("user", u.Name), zap.String("verb", a.Verb), zap.Error(err))
			internalError(w, r, err)
			return
		}
		request.AddAuditAnnotation(ctx, decisionAnnotation, "forbid")
		request.AddAuditAnnotation(ctx, reasonAnnotation, reason)
		status.Write(w, Forbidden(a, reason))
	})
}

// internalError answers as kube's responsewriters.InternalError does
// when an authorizer failed and none allowed: a plain-text 500 naming the
// request URI, not a Status.
func internalError(w http.ResponseWriter, r *http.Request, err error) {
	http.Error(w, htmlEscaper.Replace(fmt.Sprintf("Internal Server Error: %q: %v", r.RequestURI, err)), http.StatusInternalServerError)
}

var htmlEscaper = strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;")

// kube's audit annotations of the decision.
const (
	decisionAnnotation = "authorization.k8s.io/decision"
	reasonAnnotation   = "authorization.k8s.io/reason"
)

// Attributes builds the authorizer's view of a request, as kube's
// GetAuthorizerAttributes does.
func Attributes(info *request.RequestInfo, u *request.User) *auth.Attributes {
	a := &auth.Attributes{User: u, Verb: info.Verb, Path: info.Path, ResourceRequest: info.IsResourceRequest}
	if info.IsResourceRequest {
		a.Namespace = info.Namespace
		a.APIGroup = info.APIGroup
		a.APIVersion = info.APIVersion
		a.Resource = info.Resource
		a.Subresource = info.Subresource
		a.Name = info.Name
		a.FieldSelector = info.FieldSelector
		a.LabelSelector = info.LabelSelector
	}
	return a
}

// Authorize is the union: system:masters is allowed first, then the
// authorizers are asked in order. The first Allow or Deny decides, with its
// reason; when all have no opinion the answer is NoOpinion (a refusal)
// with their reasons, each after its authorizer's name as kube's union
// writes them ("rbac: ..."), and their errors joined.
func (s *Stage) Authorize(ctx context.Context, a *auth.Attributes) (auth.Decision, string, error) {
	if a.User != nil {
		for _, g := range a.User.Groups {
			if g == request.SystemPrivileged {
				return auth.Allow, "", nil
			}
		}
	}
	var reasons []string
	var errs []error
	for _, z := range s.authorizers {
		d, reason, err := z.Authorize(ctx, a)
		if err != nil {
			errs = append(errs, err)
		}
		if reason != "" {
			reasons = append(reasons, z.union+": "+reason)
		}
		switch d {
		case auth.Allow:
			s.record(z.name, "allowed")
			return d, reason, err
		case auth.Deny:
			s.record(z.name, "denied")
			return d, reason, err
		}
	}
	return auth.NoOpinion, strings.Join(reasons, "\n"), utilerrors.NewAggregate(errs)
}

func (s *Stage) record(name, decision string) {
	if s.decisions != nil {
		s.decisions.WithLabelValues(name, name, decision).Inc()
	}
}

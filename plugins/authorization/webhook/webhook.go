package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	authorizationv1 "k8s.io/api/authorization/v1"
	authorizationv1beta1 "k8s.io/api/authorization/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/cache"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kpipe/kpipe/internal/admission/cel"
	"github.com/kpipe/kpipe/internal/auth"
	authwebhook "github.com/kpipe/kpipe/internal/auth/webhook"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Kube's bounds on what is cached: at most 8192 answers, and none for
// requests whose requester-controlled attributes add up to 10,000 bytes.
const (
	cacheSize           = 8192
	maxCachedAttrLength = 10000
)

// Authorizer asks the remote service.
type Authorizer struct {
	name            string
	post            func(ctx context.Context, in, out *authorizationv1.SubjectAccessReview) (int, error)
	client          *authwebhook.Client
	cache           *cache.LRUExpireCache
	authorizedTTL   time.Duration
	unauthorizedTTL time.Duration
	backoff         wait.Backoff
	onError         auth.Decision
	match           []cel.Expression
	log             *zap.Logger
	metrics         metrics
}

type metrics struct {
	evaluations *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	failOpen    *prometheus.CounterVec
	// kube's match condition metrics, type "Webhook".
	matchErrors     *prometheus.CounterVec
	matchExclusions *prometheus.CounterVec
	matchSeconds    *prometheus.HistogramVec
}

var (
	_ auth.Authorizer      = (*Authorizer)(nil)
	_ pipeline.Provisioner = (*Authorizer)(nil)
	_ pipeline.Closer      = (*Authorizer)(nil)
)

// Close implements pipeline.Closer: a retired instance lets its idle
// connections to the service go.
func (a *Authorizer) Close() error {
	a.client.CloseIdleConnections()
	return nil
}

// New loads the kubeconfig file and builds the client; nothing is sent
// until the first request.
func New(c *Config) (*Authorizer, error) { return build(c, clockNow{}) }

func build(c *Config, clock cache.Clock) (*Authorizer, error) {
	rc, err := authwebhook.LoadKubeconfig(c.KubeConfigFile, c.Timeout)
	if err != nil {
		return nil, &fieldErr{key: "kubeConfigFile", err: err}
	}
	a := newAuthorizer(c, clock)
	if c.SubjectAccessReviewVersion == authorizationv1beta1.SchemeGroupVersion.Version {
		client, err := authwebhook.NewClient(rc, authorizationv1beta1.SchemeGroupVersion)
		if err != nil {
			return nil, err
		}
		a.client = client
		a.post = func(ctx context.Context, in, out *authorizationv1.SubjectAccessReview) (int, error) {
			res := &authorizationv1beta1.SubjectAccessReview{}
			code, err := client.Post(ctx, toV1beta1(in), res)
			out.Status = authorizationv1.SubjectAccessReviewStatus{
				Allowed: res.Status.Allowed, Denied: res.Status.Denied,
				Reason: res.Status.Reason, EvaluationError: res.Status.EvaluationError,
			}
			return code, err
		}
		return a, nil
	}
	client, err := authwebhook.NewClient(rc, authorizationv1.SchemeGroupVersion)
	if err != nil {
		return nil, err
	}
	a.client = client
	a.post = func(ctx context.Context, in, out *authorizationv1.SubjectAccessReview) (int, error) {
		return client.Post(ctx, in, out)
	}
	return a, nil
}

// toV1beta1 is the review in authorization.k8s.io/v1beta1, whose spec
// names the groups `group`.
func toV1beta1(in *authorizationv1.SubjectAccessReview) *authorizationv1beta1.SubjectAccessReview {
	s := in.Spec
	out := &authorizationv1beta1.SubjectAccessReview{
		TypeMeta: metav1.TypeMeta{APIVersion: authorizationv1beta1.SchemeGroupVersion.String(), Kind: "SubjectAccessReview"},
		Spec:     authorizationv1beta1.SubjectAccessReviewSpec{User: s.User, Groups: s.Groups, UID: s.UID},
	}
	if s.Extra != nil {
		out.Spec.Extra = make(map[string]authorizationv1beta1.ExtraValue, len(s.Extra))
		for k, v := range s.Extra {
			out.Spec.Extra[k] = authorizationv1beta1.ExtraValue(v)
		}
	}
	if ra := s.ResourceAttributes; ra != nil {
		out.Spec.ResourceAttributes = &authorizationv1beta1.ResourceAttributes{
			Namespace: ra.Namespace, Verb: ra.Verb, Group: ra.Group, Version: ra.Version,
			Resource: ra.Resource, Subresource: ra.Subresource, Name: ra.Name,
			FieldSelector: ra.FieldSelector, LabelSelector: ra.LabelSelector,
		}
	}
	if nra := s.NonResourceAttributes; nra != nil {
		out.Spec.NonResourceAttributes = &authorizationv1beta1.NonResourceAttributes{Path: nra.Path, Verb: nra.Verb}
	}
	return out
}

type fieldErr struct {
	key string
	err error
}

func (e *fieldErr) Error() string { return e.key + ": " + e.err.Error() }
func (e *fieldErr) Unwrap() error { return e.err }

type clockNow struct{}

func (clockNow) Now() time.Time { return time.Now() }

func newAuthorizer(c *Config, clock cache.Clock) *Authorizer {
	a := &Authorizer{
		name:            c.Name,
		cache:           cache.NewLRUExpireCacheWithClock(cacheSize, clock),
		authorizedTTL:   c.AuthorizedTTL,
		unauthorizedTTL: c.UnauthorizedTTL,
		backoff:         authwebhook.DefaultBackoff(),
		onError:         auth.NoOpinion,
		log:             zap.NewNop(),
		metrics:         newMetrics(),
	}
	if c.FailurePolicy == FailurePolicyDeny {
		a.onError = auth.Deny
	}
	for _, m := range c.MatchConditions {
		a.match = append(a.match, cel.CompileAuthorizationMatchCondition(m.Expression))
	}
	return a
}

// newMetrics are kube's authorization webhook metrics, unregistered.
func newMetrics() metrics {
	return metrics{
		evaluations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "apiserver", Subsystem: "authorization", Name: "webhook_evaluations_total",
			Help: "Round-trips to authorization webhooks.",
		}, []string{"name", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "apiserver", Subsystem: "authorization", Name: "webhook_duration_seconds",
			Help:    "Request latency in seconds.",
			Buckets: prometheus.DefBuckets,
		}, []string{"name", "result"}),
		failOpen: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "apiserver", Subsystem: "authorization", Name: "webhook_evaluations_fail_open_total",
			Help: "NoOpinion results due to webhook timeout or error.",
		}, []string{"name", "result"}),
		matchErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "apiserver", Subsystem: "authorization", Name: "match_condition_evaluation_errors_total",
			Help: "Total number of errors when an authorization webhook encounters a match condition error split by authorizer type and name.",
		}, []string{"type", "name"}),
		matchExclusions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "apiserver", Subsystem: "authorization", Name: "match_condition_exclusions_total",
			Help: "Total number of exclusions when an authorization webhook is skipped because match conditions exclude it.",
		}, []string{"type", "name"}),
		matchSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "apiserver", Subsystem: "authorization", Name: "match_condition_evaluation_seconds",
			Help:    "Authorization match condition evaluation time in seconds, split by authorizer type and name.",
			Buckets: []float64{0.001, 0.005, 0.01, 0.025, 0.1, 0.2, 0.25},
		}, []string{"type", "name"}),
	}
}

// Provision implements pipeline.Provisioner: the metrics go on the
// server's registry.
func (a *Authorizer) Provision(env *pipeline.Env) error {
	if env.Log != nil {
		a.log = env.Log
	}
	if env.Metrics != nil {
		a.metrics.evaluations = pipeline.Register(env, a.metrics.evaluations)
		a.metrics.duration = pipeline.Register(env, a.metrics.duration)
		a.metrics.failOpen = pipeline.Register(env, a.metrics.failOpen)
		a.metrics.matchErrors = pipeline.Register(env, a.metrics.matchErrors)
		a.metrics.matchExclusions = pipeline.Register(env, a.metrics.matchExclusions)
		a.metrics.matchSeconds = pipeline.Register(env, a.metrics.matchSeconds)
	}
	return nil
}

// Authorize implements auth.Authorizer as kube's webhook authorizer: the
// answer for the same review is taken from the cache, else the remote
// service is asked, with retries; allowed is Allow, denied is Deny,
// neither is NoOpinion, each with the service's reason. A call that fails
// decides by the failure policy, with the error.
func (a *Authorizer) Authorize(ctx context.Context, attrs *auth.Attributes) (auth.Decision, string, error) {
	r := &authorizationv1.SubjectAccessReview{
		TypeMeta: metav1.TypeMeta{APIVersion: authorizationv1.SchemeGroupVersion.String(), Kind: "SubjectAccessReview"},
		Spec:     spec(attrs),
	}
	if len(a.match) > 0 {
		ok, err := a.matches(ctx, &r.Spec)
		if err != nil {
			return a.onError, "", err
		}
		if !ok {
			return auth.NoOpinion, "", nil
		}
	}
	key, err := json.Marshal(r.Spec)
	if err != nil {
		return a.onError, "", err
	}
	var st authorizationv1.SubjectAccessReviewStatus
	if v, ok := a.cache.Get(string(key)); ok {
		st = v.(authorizationv1.SubjectAccessReviewStatus)
	} else {
		out := &authorizationv1.SubjectAccessReview{}
		var result string
		err := authwebhook.WithBackoff(ctx, a.backoff, func() error {
			out = &authorizationv1.SubjectAccessReview{}
			start := time.Now()
			code, err := a.post(ctx, r, out)
			elapsed := time.Since(start)
			switch {
			case err == nil:
				result = "success"
			case ctx.Err() != nil:
				result = "canceled"
			case authwebhook.IsTimeout(err, code):
				result = "timeout"
			default:
				result = "error"
			}
			a.metrics.evaluations.WithLabelValues(a.name, result).Inc()
			a.metrics.duration.WithLabelValues(a.name, result).Observe(elapsed.Seconds())
			return err
		}, authwebhook.ShouldRetry)
		if err != nil {
			a.log.Error("Failed to make webhook authorizer request", zap.String("name", a.name), zap.Error(err))
			if a.onError == auth.NoOpinion && ctx.Err() == nil {
				a.metrics.failOpen.WithLabelValues(a.name, result).Inc()
			}
			return a.onError, "", err
		}
		st = out.Status
		if cacheable(attrs) {
			ttl := a.unauthorizedTTL
			if st.Allowed {
				ttl = a.authorizedTTL
			}
			if ttl > 0 {
				a.cache.Add(string(key), st, ttl)
			}
		}
	}
	switch {
	case st.Denied && st.Allowed:
		return auth.Deny, st.Reason, errors.New("webhook subject access review returned both allow and deny response")
	case st.Denied:
		return auth.Deny, st.Reason, nil
	case st.Allowed:
		return auth.Allow, st.Reason, nil
	}
	return auth.NoOpinion, st.Reason, nil
}

// matchType is the `type` label of kube's match condition metrics.
const matchType = "Webhook"

// matches evaluates the matchConditions as kube's matcher: false as soon
// as one is false; else the errors of those that failed, if any.
func (a *Authorizer) matches(ctx context.Context, s *authorizationv1.SubjectAccessReviewSpec) (bool, error) {
	start := time.Now()
	var errs []error
	defer func() {
		a.metrics.matchSeconds.WithLabelValues(matchType, a.name).Observe(time.Since(start).Seconds())
		if len(errs) > 0 {
			a.metrics.matchErrors.WithLabelValues(matchType, a.name).Inc()
		}
	}()
	vars := map[string]any{cel.RequestVar: celRequest(s)}
	for i := range a.match {
		ok, err := a.match[i].EvalBool(ctx, vars)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok {
			a.metrics.matchExclusions.WithLabelValues(matchType, a.name).Inc()
			return false, nil
		}
	}
	return len(errs) == 0, utilerrors.NewAggregate(errs)
}

// celRequest is the review's spec as kube hands it to CEL: every user and
// attribute field, even empty ones.
func celRequest(s *authorizationv1.SubjectAccessReviewSpec) map[string]any {
	extra := map[string]any{}
	for k, v := range s.Extra {
		extra[k] = []string(v)
	}
	groups := s.Groups
	if groups == nil {
		groups = []string{}
	}
	m := map[string]any{"user": s.User, "groups": groups, "uid": s.UID, "extra": extra}
	if ra := s.ResourceAttributes; ra != nil {
		r := map[string]any{
			"namespace": ra.Namespace, "verb": ra.Verb, "group": ra.Group, "version": ra.Version,
			"resource": ra.Resource, "subresource": ra.Subresource, "name": ra.Name,
		}
		if fs := ra.FieldSelector; fs != nil && len(fs.Requirements) > 0 {
			reqs := make([]any, 0, len(fs.Requirements))
			for _, q := range fs.Requirements {
				reqs = append(reqs, map[string]any{"key": q.Key, "operator": string(q.Operator), "values": q.Values})
			}
			r["fieldSelector"] = map[string]any{"requirements": reqs}
		}
		if ls := ra.LabelSelector; ls != nil && len(ls.Requirements) > 0 {
			reqs := make([]any, 0, len(ls.Requirements))
			for _, q := range ls.Requirements {
				reqs = append(reqs, map[string]any{"key": q.Key, "operator": string(q.Operator), "values": q.Values})
			}
			r["labelSelector"] = map[string]any{"requirements": reqs}
		}
		m["resourceAttributes"] = r
	}
	if nra := s.NonResourceAttributes; nra != nil {
		m["nonResourceAttributes"] = map[string]any{"path": nra.Path, "verb": nra.Verb}
	}
	return m
}

// spec maps the attributes onto a SubjectAccessReview as kube does.
func spec(attrs *auth.Attributes) authorizationv1.SubjectAccessReviewSpec {
	var s authorizationv1.SubjectAccessReviewSpec
	if u := attrs.User; u != nil {
		s.User = u.Name
		s.UID = u.UID
		s.Groups = u.Groups
		if u.Extra != nil {
			s.Extra = make(map[string]authorizationv1.ExtraValue, len(u.Extra))
			for k, v := range u.Extra {
				s.Extra[k] = authorizationv1.ExtraValue(v)
			}
		}
	}
	if !attrs.ResourceRequest {
		s.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: attrs.Path, Verb: attrs.Verb}
		return s
	}
	ra := &authorizationv1.ResourceAttributes{
		Namespace:   attrs.Namespace,
		Verb:        attrs.Verb,
		Group:       attrs.APIGroup,
		Version:     attrs.APIVersion,
		Resource:    attrs.Resource,
		Subresource: attrs.Subresource,
		Name:        attrs.Name,
	}
	if reqs := fieldRequirements(attrs.FieldSelector); len(reqs) > 0 {
		ra.FieldSelector = &authorizationv1.FieldSelectorAttributes{Requirements: reqs}
	}
	if reqs := labelRequirements(attrs.LabelSelector); len(reqs) > 0 {
		ra.LabelSelector = &authorizationv1.LabelSelectorAttributes{Requirements: reqs}
	}
	s.ResourceAttributes = ra
	return s
}

// fieldRequirements are the selector's requirements as kube sends them:
// = and == as In, != as NotIn, one value each. A selector that does not
// parse sends none: selectors only narrow, so the broader question is
// asked.
func fieldRequirements(sel string) []metav1.FieldSelectorRequirement {
	if sel == "" {
		return nil
	}
	s, err := fields.ParseSelector(sel)
	if err != nil {
		return nil
	}
	var out []metav1.FieldSelectorRequirement
	for _, r := range s.Requirements() {
		var op metav1.FieldSelectorOperator
		switch r.Operator {
		case selection.Equals, selection.DoubleEquals, selection.In:
			op = metav1.FieldSelectorOpIn
		case selection.NotEquals, selection.NotIn:
			op = metav1.FieldSelectorOpNotIn
		default:
			continue
		}
		out = append(out, metav1.FieldSelectorRequirement{Key: r.Field, Operator: op, Values: []string{r.Value}})
	}
	return out
}

// labelRequirements are the selector's requirements as kube sends them,
// with their values in the order written.
func labelRequirements(sel string) []metav1.LabelSelectorRequirement {
	if sel == "" {
		return nil
	}
	s, err := labels.Parse(sel)
	if err != nil {
		return nil
	}
	reqs, _ := s.Requirements()
	var out []metav1.LabelSelectorRequirement
	for _, r := range reqs {
		lr := metav1.LabelSelectorRequirement{Key: r.Key()}
		if v := r.ValuesUnsorted(); len(v) > 0 {
			lr.Values = v
		}
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
			lr.Operator = metav1.LabelSelectorOpIn
		case selection.NotEquals, selection.NotIn:
			lr.Operator = metav1.LabelSelectorOpNotIn
		case selection.Exists:
			lr.Operator = metav1.LabelSelectorOpExists
		case selection.DoesNotExist:
			lr.Operator = metav1.LabelSelectorOpDoesNotExist
		default:
			continue
		}
		out = append(out, lr)
	}
	return out
}

// cacheable is kube's guard: requests whose requester-controlled
// attributes are very long may be an attempt to flood the cache.
func cacheable(a *auth.Attributes) bool {
	n := len(a.Namespace) + len(a.Verb) + len(a.APIGroup) + len(a.APIVersion) +
		len(a.Resource) + len(a.Subresource) + len(a.Name) + len(a.Path)
	return n < maxCachedAttrLength
}

// AuthorizerName is its name in the union (kube's configured name),
// which prefixes its reason when no authorizer decides.
func (a *Authorizer) AuthorizerName() string { return a.name }

// String names the authorizer in logs.
func (a *Authorizer) String() string { return fmt.Sprintf("webhook %q", a.name) }

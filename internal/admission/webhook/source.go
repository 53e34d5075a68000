package webhook

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kpipe/kpipe/internal/admission"
	policycel "github.com/kpipe/kpipe/internal/admission/cel"
	"github.com/kpipe/kpipe/internal/admission/matching"
	"github.com/kpipe/kpipe/internal/storage/informer"
)

// ErrNotReady is returned while the configurations have not been listed
// yet; the plugins answer it with kube's 403 "not yet ready to handle
// request".
var ErrNotReady = errors.New("not yet ready to handle request")

// readyWait is how long a request waits for the first list, kube's
// WaitForReady.
const readyWait = 10 * time.Second

// InformerSource reads the configurations through a watch-fed informer
// and keeps their hooks until the informer's generation moves.
type InformerSource struct {
	Informer *informer.Informer
	// Hooks turns one configuration into its webhooks.
	Convert func(runtime.Object) []Hook

	cached atomic.Pointer[cachedHooks]
}

type cachedHooks struct {
	gen   uint64
	hooks []Hook
}

// Hooks implements Source. The informer lists configurations by name, as
// kube sorts them.
func (s *InformerSource) Hooks(ctx context.Context) ([]Hook, uint64, error) {
	select {
	case <-s.Informer.Synced():
	default:
		t := time.NewTimer(readyWait)
		defer t.Stop()
		select {
		case <-s.Informer.Synced():
		case <-ctx.Done():
			return nil, 0, ErrNotReady
		case <-t.C:
			return nil, 0, ErrNotReady
		}
	}
	gen := s.Informer.Generation()
	if c := s.cached.Load(); c != nil && c.gen == gen {
		return c.hooks, gen, nil
	}
	var hooks []Hook
	for _, obj := range s.Informer.List() {
		hooks = append(hooks, s.Convert(obj)...)
	}
	for i := range hooks {
		hooks[i].Index = i
		hooks[i].conditions = compileConditions(hooks[i].MatchConditions)
	}
	s.cached.Store(&cachedHooks{gen: gen, hooks: hooks})
	return hooks, gen, nil
}

// RuleMatcher is kube's webhook matching: the admission configuration
// kinds are never sent to webhooks; then namespaceSelector,
// objectSelector and rules, with a selector's error answering only when
// the rules match; last the matchConditions (CEL).
//
// matchPolicy: kpipe serves each group/resource in one version, so the
// set of equivalent resources kube would also try under Equivalent is the
// request's own resource, and Equivalent matches exactly what Exact does
// (as in kube for a resource served at one version).
type RuleMatcher struct {
	Namespaces *matching.Namespaces
	// Authorizer answers the matchConditions' `authorizer` checks (the
	// server's current authorization decision); nil answers each with an
	// error.
	Authorizer policycel.Authorizer
	// Type is kube's type label of the webhooks matched: TypeAdmit or
	// TypeValidating. Metrics record their match conditions; nil, nothing.
	Type    string
	Metrics *admission.MatchConditionMetrics
}

var _ Matcher = (*RuleMatcher)(nil)

// Matches implements Matcher.
func (m *RuleMatcher) Matches(ctx context.Context, h *Hook, a *admission.Attributes) (bool, error) {
	r := matching.FromAttributes(a)
	if matching.IsExemptConfigurationResource(r) {
		return false, nil
	}
	nsOK, nsErr := m.Namespaces.Selector(ctx, h.NamespaceSelector, r)
	if !nsOK && nsErr == nil {
		return false, nil
	}
	objOK, objErr := matching.ObjectSelector(h.ObjectSelector, r)
	if !objOK && objErr == nil {
		return false, nil
	}
	if !matching.Rules(h.Rules, r) {
		return false, nil
	}
	if nsErr != nil {
		return false, nsErr
	}
	if objErr != nil {
		return false, objErr
	}
	if h.conditions != nil {
		return h.conditions.match(ctx, h, a, newRequest(ctx, a), m)
	}
	return true, nil
}

package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kpipe/kpipe/internal/admission"
	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/api/defaults"
	"github.com/kpipe/kpipe/internal/request"
)

// kube's audit annotation keys.
const (
	mutationAnnotationPrefix           = "mutation.webhook.admission.k8s.io/"
	mutationFailedOpenAnnotationPrefix = "failed-open." + mutationAnnotationPrefix
	validatingFailedOpenPrefix         = "failed-open.validating.webhook.admission.k8s.io/"
)

// Matcher decides whether a webhook is called for a request: its rules
// (with matchPolicy), namespaceSelector, objectSelector and
// matchConditions. An error (a namespace that cannot be read, a failing
// condition under failurePolicy Fail) answers the request.
type Matcher interface {
	Matches(ctx context.Context, h *Hook, a *admission.Attributes) (bool, error)
}

// Source lists the webhooks of the current configurations, in kube's
// order (configurations by name, webhooks in order), with the
// generation they were read at.
type Source interface {
	Hooks(ctx context.Context) ([]Hook, uint64, error)
}

// Dispatcher calls the webhooks of one kind.
type Dispatcher struct {
	Source  Source
	Match   Matcher
	Clients *Clients
	Metrics *Metrics
	Log     *zap.Logger
	// Key names the mutating dispatcher's state in the reinvocation
	// context (the plugin's name).
	Key string
}

func (d *Dispatcher) log() *zap.Logger {
	if d.Log == nil {
		return zap.NewNop()
	}
	return d.Log
}

func newRequest(ctx context.Context, a *admission.Attributes) *Request {
	u, _ := request.UserFrom(ctx)
	return &Request{Attributes: a, User: u}
}

// relevant are the hooks called for a.
func (d *Dispatcher) relevant(ctx context.Context, a *admission.Attributes) ([]Hook, uint64, error) {
	hooks, gen, err := d.Source.Hooks(ctx)
	if errors.Is(err, ErrNotReady) {
		return nil, 0, admission.NewForbidden(a, err)
	}
	if err != nil {
		return nil, 0, err
	}
	var out []Hook
	for i := range hooks {
		ok, err := d.Match.Matches(ctx, &hooks[i], a)
		if err != nil {
			return nil, 0, err
		}
		if ok {
			out = append(out, hooks[i])
		}
	}
	return out, gen, nil
}

// reinvokeState is kube's webhook reinvocation context.
type reinvokeState struct {
	last       runtime.Object
	previously map[string]bool
	reinvoke   map[string]bool
}

func (s *reinvokeState) requireReinvoking() {
	for uid := range s.previously {
		s.reinvoke[uid] = true
	}
	s.previously = map[string]bool{}
}

// Admit calls the matching mutating webhooks in order, applying their
// patches to a.Op.Object. A webhook that changed the object gets the
// mutating stage run once more when a webhook with reinvocationPolicy
// IfNeeded ran before it; on that round only those are called again.
func (d *Dispatcher) Admit(ctx context.Context, a *admission.Attributes) error {
	hooks, gen, err := d.relevant(ctx, a)
	if err != nil || len(hooks) == 0 {
		return err
	}
	r := &a.Reinvocation
	state, _ := r.Value(d.Key).(*reinvokeState)
	if state == nil {
		state = &reinvokeState{previously: map[string]bool{}, reinvoke: map[string]bool{}}
		r.SetValue(d.Key, state)
	}
	if r.IsReinvoke() && !equality.Semantic.DeepEqual(state.last, a.Op.Object) {
		state.requireReinvoking()
	}
	if !r.IsReinvoke() {
		// What the second round compares with (there is no third).
		defer func() {
			state.last = nil
			if a.Op.Object != nil {
				state.last = a.Op.Object.DeepCopyObject()
			}
		}()
	}
	round := 0
	if r.IsReinvoke() {
		round = 1
	}
	for i := range hooks {
		h := &hooks[i]
		if r.IsReinvoke() && !state.reinvoke[h.UID] {
			continue
		}
		start := time.Now()
		changed, err := d.mutate(ctx, gen, h, a)
		d.Metrics.observe(h, TypeAdmit, a.Operation, time.Since(start), err)
		_ = a.AddAnnotation(fmt.Sprintf("%sround_%d_index_%d", mutationAnnotationPrefix, round, h.Index), mutationAnnotation(h, changed))
		if changed {
			state.requireReinvoking()
			r.SetShouldReinvoke()
		}
		if h.Reinvoke {
			state.previously[h.UID] = true
		}
		if err == nil {
			continue
		}
		var ce *CallError
		if errors.As(err, &ce) {
			if h.Ignore() {
				if !errors.Is(ce.Reason, context.Canceled) {
					d.log().Warn("failed calling webhook, failing open", zap.String("webhook", h.Name), zap.Error(err))
					d.Metrics.observeFailOpen(h, TypeAdmit)
					_ = a.AddAnnotation(fmt.Sprintf("%sround_%d_index_%d", mutationFailedOpenAnnotationPrefix, round, h.Index), h.Name)
				}
				if ctx.Err() != nil {
					return apierrors.NewTimeoutError("request did not complete within requested timeout", 0)
				}
				continue
			}
			d.log().Warn("failed calling webhook, failing closed", zap.String("webhook", h.Name), zap.Error(err))
			return apierrors.NewInternalError(err)
		}
		var rj *Rejection
		if errors.As(err, &rj) {
			return rj.Status
		}
		return err
	}
	return nil
}

func mutationAnnotation(h *Hook, mutated bool) string {
	b, _ := json.Marshal(struct {
		Configuration string `json:"configuration"`
		Webhook       string `json:"webhook"`
		Mutated       bool   `json:"mutated"`
	}{h.Configuration, h.Name, mutated})
	return string(b)
}

// mutate calls one mutating webhook and applies its patch; it reports
// whether the object changed.
func (d *Dispatcher) mutate(ctx context.Context, gen uint64, h *Hook, a *admission.Attributes) (bool, error) {
	resp, err := Call(ctx, d.Clients, gen, h, newRequest(ctx, a), true)
	if err != nil {
		return false, err
	}
	d.record(h, a, resp, nil)
	if !resp.Allowed {
		return false, &Rejection{Status: Denied(h.Name, resp.Result)}
	}
	if len(resp.Patch) == 0 {
		return false, nil
	}
	patch, err := jsonpatch.DecodePatch(resp.Patch)
	if err != nil {
		return false, &CallError{Webhook: h.Name, Reason: fmt.Errorf("received undecodable patch in webhook response: %w", err),
			Status: apierrors.NewServiceUnavailable("error decoding patch in webhook response")}
	}
	if len(patch) == 0 {
		return false, nil
	}
	obj := a.Op.Object
	if obj == nil {
		return false, apierrors.NewInternalError(fmt.Errorf("admission webhook %q attempted to modify the object, which is not supported for this operation", h.Name))
	}
	if resp.PatchType != admissionv1.PatchTypeJSONPatch {
		return false, &CallError{Webhook: h.Name, Reason: fmt.Errorf("unsupported patch type %q", resp.PatchType), Status: Denied(h.Name, resp.Result)}
	}
	kind := objectKind(obj, newRequest(ctx, a).Kind())
	doc, err := raw(obj, kind)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	patched, err := patch.Apply(doc.Raw)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	var out runtime.Object
	if _, ok := obj.(*unstructured.Unstructured); ok {
		out = &unstructured.Unstructured{}
	} else if out, err = api.Scheme.New(kind); err != nil {
		return false, apierrors.NewInternalError(err)
	}
	if err := json.Unmarshal(patched, out); err != nil {
		return false, apierrors.NewInternalError(err)
	}
	if _, ok := out.(*unstructured.Unstructured); !ok {
		out.GetObjectKind().SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	}
	changed := !equality.Semantic.DeepEqual(obj, out)
	defaults.Apply(out)
	a.Op.Object = out
	return changed, nil
}

// record adds a webhook's warnings and audit annotations to the request.
// mu, when set, guards them (validating webhooks answer in parallel).
func (d *Dispatcher) record(h *Hook, a *admission.Attributes, resp *Response, mu *sync.Mutex) {
	if mu != nil {
		mu.Lock()
		defer mu.Unlock()
	}
	for k, v := range resp.AuditAnnotations {
		if err := a.AddAnnotation(h.Name+"/"+k, v); err != nil {
			d.log().Warn("failed to set a webhook's audit annotation", zap.String("webhook", h.Name), zap.Error(err))
		}
	}
	for _, w := range resp.Warnings {
		// kube's warning recorder drops a repeated text (a reinvoked
		// webhook warns twice).
		if w != "" && !slices.Contains(a.Op.Warnings, w) {
			a.Warn(w)
		}
	}
}

// Validate calls the matching validating webhooks in parallel and
// returns the first rejection to arrive, as kube does.
func (d *Dispatcher) Validate(ctx context.Context, a *admission.Attributes) error {
	hooks, gen, err := d.relevant(ctx, a)
	if err != nil {
		return err
	}
	if len(hooks) == 0 {
		return nil
	}
	if ctx.Err() != nil {
		return apierrors.NewTimeoutError("request did not complete within requested timeout", 0)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, len(hooks))
	failOpen := func(h *Hook, i int) {
		d.Metrics.observeFailOpen(h, TypeValidating)
		mu.Lock()
		defer mu.Unlock()
		_ = a.AddAnnotation(fmt.Sprintf("%sround_0_index_%d", validatingFailedOpenPrefix, i), h.Name)
	}
	for i := range hooks {
		wg.Add(1)
		go func(h *Hook, i int) {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					d.log().Error("panic calling webhook", zap.String("webhook", h.Name), zap.Any("panic", p))
					if h.Ignore() {
						failOpen(h, i)
						return
					}
					errs <- apierrors.NewInternalError(fmt.Errorf("ValidatingAdmissionWebhook/%v has panicked: %v", h.Name, p))
				}
			}()
			start := time.Now()
			err := d.validate(ctx, gen, h, a, &mu)
			d.Metrics.observe(h, TypeValidating, a.Operation, time.Since(start), err)
			if err == nil {
				return
			}
			var ce *CallError
			if errors.As(err, &ce) {
				if h.Ignore() {
					if !errors.Is(ce.Reason, context.Canceled) {
						d.log().Warn("failed calling webhook, failing open", zap.String("webhook", h.Name), zap.Error(err))
						failOpen(h, i)
					}
					return
				}
				d.log().Warn("failed calling webhook, failing closed", zap.String("webhook", h.Name), zap.Error(err))
				errs <- apierrors.NewInternalError(err)
				return
			}
			var rj *Rejection
			if errors.As(err, &rj) {
				err = rj.Status
			}
			errs <- err
		}(&hooks[i], i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	return nil
}

func (d *Dispatcher) validate(ctx context.Context, gen uint64, h *Hook, a *admission.Attributes, mu *sync.Mutex) error {
	resp, err := Call(ctx, d.Clients, gen, h, newRequest(ctx, a), false)
	if err != nil {
		return err
	}
	d.record(h, a, resp, mu)
	if !resp.Allowed {
		return &Rejection{Status: Denied(h.Name, resp.Result)}
	}
	return nil
}

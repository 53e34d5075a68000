package validatingadmissionpolicy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/uuid"
	"go.uber.org/zap"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kpipe/kpipe/internal/admission"
	policycel "github.com/kpipe/kpipe/internal/admission/cel"
	"github.com/kpipe/kpipe/internal/admission/matching"
	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/internal/storage/informer"
)

// Plugin is the admission plugin.
type Plugin struct {
	inlinePolicies []*admissionregistrationv1.ValidatingAdmissionPolicy
	inlineBindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding

	objects    *admission.Objects
	resources  *api.Registry
	namespaces *matching.Namespaces
	authz      *auth.Holder
	policies   *informer.Informer
	bindings   *informer.Informer
	log        *zap.Logger

	metrics *metrics

	mu       sync.Mutex
	snap     *snapshot
	compiled map[string]*policycel.Compiled // by uid/generation
	params   map[schema.GroupVersionResource]*informer.Informer
}

var (
	_ admission.Validator   = (*Plugin)(nil)
	_ pipeline.Provisioner  = (*Plugin)(nil)
	_ pipeline.HookProvider = (*Plugin)(nil)
)

// Provision implements pipeline.Provisioner: it starts the informers of
// policies and bindings.
func (p *Plugin) Provision(env *pipeline.Env) error {
	o, err := admission.NewObjects(env)
	if err != nil {
		return err
	}
	p.objects, p.resources, p.log, p.authz = o, env.Shared.Resources, env.Log, env.Shared.Authorizer
	if p.log == nil {
		p.log = zap.NewNop()
	}
	if p.namespaces, err = matching.NewNamespaces(o); err != nil {
		return err
	}
	pol, err := o.Resource(admissionregistrationv1.GroupName, "v1", "validatingadmissionpolicies")
	if err != nil {
		return err
	}
	bind, err := o.Resource(admissionregistrationv1.GroupName, "v1", "validatingadmissionpolicybindings")
	if err != nil {
		return err
	}
	p.policies, p.bindings = o.Informer(pol), o.Informer(bind)
	if env.Metrics != nil {
		p.metrics = newMetrics(env)
	}
	p.compiled = map[string]*policycel.Compiled{}
	p.params = map[schema.GroupVersionResource]*informer.Informer{}
	// Inline policies have no status: their type warnings go to the log.
	for _, pol := range p.inlinePolicies {
		for _, w := range p.typeCheck(pol) {
			p.log.Warn("inline ValidatingAdmissionPolicy: type checking", zap.String("policy", pol.Name),
				zap.String("fieldRef", w.FieldRef), zap.String("warning", w.Warning))
		}
	}
	return nil
}

// hook is one policy with its compiled expressions and bindings.
type hook struct {
	policy   *admissionregistrationv1.ValidatingAdmissionPolicy
	compiled *policycel.Compiled
	bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
}

type snapshot struct {
	policiesGen, bindingsGen uint64
	hooks                    []*hook
}

// current returns the hooks for the informers' state, rebuilt only when
// either moved; compiled policies are kept per uid and generation.
func (p *Plugin) current() *snapshot {
	pg, bg := p.policies.Generation(), p.bindings.Generation()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.snap != nil && p.snap.policiesGen == pg && p.snap.bindingsGen == bg {
		return p.snap
	}
	var policies []*admissionregistrationv1.ValidatingAdmissionPolicy
	policies = append(policies, p.inlinePolicies...)
	for _, o := range p.policies.List() {
		policies = append(policies, o.(*admissionregistrationv1.ValidatingAdmissionPolicy))
	}
	var bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	bindings = append(bindings, p.inlineBindings...)
	for _, o := range p.bindings.List() {
		bindings = append(bindings, o.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding))
	}
	compiled := map[string]*policycel.Compiled{}
	s := &snapshot{policiesGen: pg, bindingsGen: bg}
	byName := map[string]*hook{}
	for _, pol := range policies {
		if _, dup := byName[pol.Name]; dup {
			continue // an inline policy shadows a stored one of its name
		}
		key := fmt.Sprintf("%s/%d", pol.UID, pol.Generation)
		c := p.compiled[key]
		if c == nil {
			c = policycel.Compile(&pol.Spec, policycel.Options{HasParams: pol.Spec.ParamKind != nil, Env: policycel.StoredExpressions})
		}
		compiled[key] = c
		h := &hook{policy: pol, compiled: c}
		byName[pol.Name] = h
		s.hooks = append(s.hooks, h)
	}
	for _, b := range bindings {
		if h, ok := byName[b.Spec.PolicyName]; ok {
			h.bindings = append(h.bindings, b)
		}
	}
	p.compiled = compiled
	p.snap = s
	return s
}

// waitSynced waits for the informers' first lists, as kube's plugin waits
// to be ready.
func (p *Plugin) waitSynced(ctx context.Context) bool {
	select {
	case <-p.policies.Synced():
		select {
		case <-p.bindings.Synced():
			return true
		default:
		}
	default:
	}
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	for _, inf := range []*informer.Informer{p.policies, p.bindings} {
		select {
		case <-inf.Synced():
		case <-t.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// decision is one validation's outcome that is not an admit.
type decision struct {
	policy  *admissionregistrationv1.ValidatingAdmissionPolicy
	binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding
	message string
	reason  metav1.StatusReason
	index   int
	// elapsed and errType feed kube's policy check metrics.
	elapsed time.Duration
	errType string
}

// validationFailure is an Audit action's record, kube's JSON.
type validationFailure struct {
	Message           string                                     `json:"message"`
	Policy            string                                     `json:"policy"`
	Binding           string                                     `json:"binding"`
	ExpressionIndex   int                                        `json:"expressionIndex"`
	ValidationActions []admissionregistrationv1.ValidationAction `json:"validationActions"`
}

const (
	maxValidationFailures          = 50
	maxAuditAnnotationValueLength  = 10 * 1024
	validationFailureAnnotationKey = "validation.policy.admission.k8s.io/validation_failure"
)

// Validate implements admission.Validator: kube's dispatcher.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	req := matching.FromAttributes(a)
	if matching.IsExemptConfigurationResource(req) {
		return nil
	}
	if !p.waitSynced(ctx) {
		return admission.NewForbidden(a, errors.New("not yet ready to handle request"))
	}
	s := p.current()
	if len(s.hooks) == 0 {
		return nil
	}
	var denied []decision
	var failures []validationFailure
	configError := func(err error, pol *admissionregistrationv1.ValidatingAdmissionPolicy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
		if failurePolicy(pol) == admissionregistrationv1.Ignore {
			return
		}
		msg := fmt.Sprintf("failed to configure policy: %v", err)
		if b != nil {
			msg = fmt.Sprintf("failed to configure binding: %v", err)
		}
		denied = append(denied, decision{policy: pol, binding: b, message: msg})
	}
	var in *inputs
	for _, h := range s.hooks {
		if len(h.bindings) == 0 {
			continue
		}
		ok, err := p.matches(ctx, h.policy.Spec.MatchConstraints, req)
		if err != nil {
			configError(err, h.policy, nil)
			continue
		}
		if !ok {
			continue
		}
		annotations := map[string][]string{}
		var annotationKeys []string
		for _, b := range h.bindings {
			if b.Spec.MatchResources != nil {
				ok, err := p.matches(ctx, b.Spec.MatchResources, req)
				if err != nil {
					configError(err, h.policy, b)
					continue
				}
				if !ok {
					continue
				}
			}
			params, err := p.collectParams(ctx, h.policy.Spec.ParamKind, b.Spec.ParamRef, req.Namespace)
			if err != nil {
				configError(err, h.policy, b)
				continue
			}
			if in == nil {
				if in, err = p.newInputs(ctx, a, req); err != nil {
					return err
				}
			}
			for _, param := range params {
				res := validate(ctx, h, in, param, p.metrics.matchConditions())
				for _, d := range res.ignored {
					p.metrics.observe(h.policy.Name, b.Name, d, "allow")
				}
				for _, d := range res.decisions {
					for _, action := range b.Spec.ValidationActions {
						p.metrics.observe(h.policy.Name, b.Name, d, strings.ToLower(string(action)))
						switch action {
						case admissionregistrationv1.Deny:
							denied = append(denied, decision{policy: h.policy, binding: b, message: d.message, reason: d.reason})
						case admissionregistrationv1.Audit:
							failures = append(failures, validationFailure{Message: d.message, Policy: b.Spec.PolicyName,
								Binding: b.Name, ExpressionIndex: d.index, ValidationActions: b.Spec.ValidationActions})
						case admissionregistrationv1.Warn:
							a.Warn(fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", h.policy.Name, b.Name, d.message))
						}
					}
				}
				for _, an := range res.annotations {
					if an.err != "" {
						denied = append(denied, decision{policy: h.policy, binding: b, message: an.err})
						continue
					}
					v := an.value
					if len(v) > maxAuditAnnotationValueLength {
						v = v[:maxAuditAnnotationValueLength]
					}
					if _, ok := annotations[an.key]; !ok {
						annotationKeys = append(annotationKeys, an.key)
					}
					dup := false
					for _, x := range annotations[an.key] {
						dup = dup || x == v
					}
					if !dup {
						annotations[an.key] = append(annotations[an.key], v)
					}
				}
			}
		}
		for _, k := range annotationKeys {
			_ = a.AddAnnotation(h.policy.Name+"/"+k, strings.Join(annotations[k], ", "))
		}
	}
	if len(failures) > 0 {
		if len(failures) > maxValidationFailures {
			failures = failures[:maxValidationFailures]
		}
		if v, err := json.Marshal(failures); err == nil {
			_ = a.AddAnnotation(validationFailureAnnotationKey, string(v))
		}
	}
	if len(denied) == 0 {
		return nil
	}
	d := denied[0]
	msg := fmt.Sprintf("ValidatingAdmissionPolicy '%s' denied request: %s", d.policy.Name, d.message)
	if d.binding != nil {
		msg = fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", d.policy.Name, d.binding.Name, d.message)
	}
	err := admission.NewForbidden(a, errors.New(msg))
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		return err
	}
	reason := d.reason
	if reason == "" {
		reason = metav1.StatusReasonInvalid
	}
	se.ErrStatus.Reason = reason
	se.ErrStatus.Code = reasonToCode(reason)
	if se.ErrStatus.Details == nil {
		se.ErrStatus.Details = &metav1.StatusDetails{}
	}
	se.ErrStatus.Details.Causes = append(se.ErrStatus.Details.Causes, metav1.StatusCause{Message: msg})
	return se
}

func reasonToCode(r metav1.StatusReason) int32 {
	switch r {
	case metav1.StatusReasonForbidden:
		return http.StatusForbidden
	case metav1.StatusReasonUnauthorized:
		return http.StatusUnauthorized
	case metav1.StatusReasonRequestEntityTooLarge:
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusUnprocessableEntity
}

func failurePolicy(p *admissionregistrationv1.ValidatingAdmissionPolicy) admissionregistrationv1.FailurePolicyType {
	if p.Spec.FailurePolicy == nil {
		return admissionregistrationv1.Fail
	}
	return *p.Spec.FailurePolicy
}

// matches is kube's matcher of MatchResources: namespace and object
// selectors, excluded then matched resource rules.
func (p *Plugin) matches(ctx context.Context, m *admissionregistrationv1.MatchResources, req matching.Request) (bool, error) {
	if m == nil {
		return false, nil
	}
	nsSel := m.NamespaceSelector
	if nsSel == nil {
		nsSel = &metav1.LabelSelector{}
	}
	nsOK, nsErr := p.namespaces.Selector(ctx, nsSel, req)
	if !nsOK && nsErr == nil {
		return false, nil
	}
	objOK, objErr := matching.ObjectSelector(m.ObjectSelector, req)
	if !objOK && objErr == nil {
		return false, nil
	}
	if matching.NamedRules(m.ExcludeResourceRules, req) {
		return false, nil
	}
	if len(m.ResourceRules) > 0 && !matching.NamedRules(m.ResourceRules, req) {
		return false, nil
	}
	if objErr != nil {
		return false, objErr
	}
	return nsErr == nil, nsErr
}

// paramResource finds the served resource of a paramKind.
func (p *Plugin) paramResource(k *admissionregistrationv1.ParamKind) (*api.Resource, bool) {
	gv, err := schema.ParseGroupVersion(k.APIVersion)
	if err != nil {
		return nil, false
	}
	for _, r := range p.resources.All() {
		if r.GroupVersion == gv && r.Kind == k.Kind {
			return r, true
		}
	}
	return nil, false
}

func (p *Plugin) paramInformer(res *api.Resource) *informer.Informer {
	gvr := res.GroupVersion.WithResource(res.Name)
	p.mu.Lock()
	defer p.mu.Unlock()
	inf, ok := p.params[gvr]
	if !ok {
		inf = p.objects.Informer(res)
		p.params[gvr] = inf
	}
	return inf
}

// collectParams is kube's CollectParams: the params a binding names, by
// name or selector, in the paramRef's or the request's namespace. A nil
// element stands for "no params".
func (p *Plugin) collectParams(ctx context.Context, kind *admissionregistrationv1.ParamKind, ref *admissionregistrationv1.ParamRef, namespace string) ([]runtime.Object, error) {
	if kind == nil || ref == nil {
		return []runtime.Object{nil}, nil
	}
	res, ok := p.paramResource(kind)
	if !ok {
		return nil, fmt.Errorf("paramKind kind `%v` not known", kind.String())
	}
	inf := p.paramInformer(res)
	paramsNamespace := ""
	if res.Namespaced {
		paramsNamespace = namespace
		if ref.Namespace != "" {
			paramsNamespace = ref.Namespace
		} else if paramsNamespace == "" {
			return nil, errors.New("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")
		}
	}
	select {
	case <-inf.Synced():
	case <-time.After(time.Second):
		return nil, fmt.Errorf("paramKind kind `%v` not yet synced to use for admission", kind.String())
	}
	var params []runtime.Object
	switch {
	case ref.Namespace != "" && !res.Namespaced:
		return nil, errors.New("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")
	case ref.Name != "":
		if ref.Selector != nil {
			return nil, errors.New("paramRef.name and paramRef.selector are mutually exclusive")
		}
		if obj, ok := inf.Get(paramsNamespace, ref.Name); ok {
			params = []runtime.Object{obj}
		} else {
			// The informer may not have seen a param created a moment
			// ago: ask storage, as kube falls back to its client.
			obj := res.New()
			err := p.objects.Get(ctx, res, paramsNamespace, ref.Name, obj)
			switch {
			case err == nil:
				params = []runtime.Object{obj}
			case apierrors.IsNotFound(err):
			default:
				return nil, err
			}
		}
	case ref.Selector != nil:
		sel, err := metav1.LabelSelectorAsSelector(ref.Selector)
		if err != nil {
			return nil, err
		}
		for _, obj := range inf.List() {
			m, err := meta.Accessor(obj)
			if err != nil || (res.Namespaced && m.GetNamespace() != paramsNamespace) {
				continue
			}
			if sel.Matches(labels.Set(m.GetLabels())) {
				params = append(params, obj)
			}
		}
	default:
		return nil, errors.New("one of name or selector must be provided")
	}
	if len(params) == 0 && ref.ParameterNotFoundAction != nil && *ref.ParameterNotFoundAction == admissionregistrationv1.DenyAction {
		return nil, errors.New("no params found for policy binding with `Deny` parameterNotFoundAction")
	}
	for i, obj := range params {
		// Params carry their apiVersion and kind, as kube's wrapped ones.
		params[i] = withKind(obj, res.GroupVersionKind())
	}
	return params, nil
}

// withKind is obj (shared, so copied) with its apiVersion and kind set.
func withKind(obj runtime.Object, gvk schema.GroupVersionKind) runtime.Object {
	if obj == nil || !obj.GetObjectKind().GroupVersionKind().Empty() {
		return obj
	}
	c := obj.DeepCopyObject()
	c.GetObjectKind().SetGroupVersionKind(gvk)
	return c
}

// inputs are the request's CEL values, built once per request.
type inputs struct {
	object, oldObject, request, namespace map[string]any
	authorizer, requestResource           ref.Val
	operation                             string // CREATE, UPDATE, DELETE, CONNECT
}

func toMap(obj runtime.Object, gvk schema.GroupVersionKind) (map[string]any, error) {
	if obj == nil {
		return nil, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	if _, ok := m["apiVersion"]; !ok && !gvk.Empty() {
		m["apiVersion"] = gvk.GroupVersion().String()
	}
	if _, ok := m["kind"]; !ok && !gvk.Empty() {
		m["kind"] = gvk.Kind
	}
	return m, nil
}

func (p *Plugin) newInputs(ctx context.Context, a *admission.Attributes, req matching.Request) (*inputs, error) {
	in := &inputs{operation: a.Operation}
	var err error
	if in.object, err = toMap(req.Object, req.Kind); err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("failed to prepare object variable for evaluation: %w", err))
	}
	if in.oldObject, err = toMap(req.OldObject, req.Kind); err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("failed to prepare oldObject variable for evaluation: %w", err))
	}
	in.request = requestMap(ctx, a, req)
	in.authorizer, in.requestResource = admission.UserAuthorizers(ctx, admission.HolderAuthorizer(p.authz),
		req.Resource.Group, req.Resource.Resource, req.Subresource, req.Namespace, req.Name)
	// kube gives no namespaceObject for a Namespace itself.
	if ns := req.Namespace; ns != "" && !(req.Kind.Group == "" && req.Kind.Kind == "Namespace") {
		n, err := p.namespaces.Get(ctx, ns)
		if err != nil {
			return nil, err
		}
		in.namespace, _ = toMap(namespaceObject(n), corev1.SchemeGroupVersion.WithKind("Namespace"))
	}
	return in, nil
}

// namespaceObject is kube's CreateNamespaceObject: the namespace without
// managed fields and owner references.
func namespaceObject(ns *corev1.Namespace) *corev1.Namespace {
	return &corev1.Namespace{
		Status: ns.Status,
		Spec:   ns.Spec,
		ObjectMeta: metav1.ObjectMeta{
			Name: ns.Name, GenerateName: ns.GenerateName, Namespace: ns.Namespace,
			DeletionTimestamp: ns.DeletionTimestamp, DeletionGracePeriodSeconds: ns.DeletionGracePeriodSeconds,
			Labels: ns.Labels, Annotations: ns.Annotations, UID: ns.UID, CreationTimestamp: ns.CreationTimestamp,
			ResourceVersion: ns.ResourceVersion, Finalizers: ns.Finalizers, Generation: ns.Generation,
		},
	}
}

// requestMap is kube's admission request as CEL sees it (the
// AdmissionRequest's JSON, without object and oldObject).
func requestMap(ctx context.Context, a *admission.Attributes, req matching.Request) map[string]any {
	gvk := map[string]any{"group": req.Kind.Group, "version": req.Kind.Version, "kind": req.Kind.Kind}
	gvr := map[string]any{"group": req.Resource.Group, "version": req.Resource.Version, "resource": req.Resource.Resource}
	m := map[string]any{
		"uid": uuid.NewString(), "kind": gvk, "resource": gvr, "requestKind": gvk, "requestResource": gvr,
		"operation": req.Operation, "dryRun": a.DryRun(),
	}
	if req.Name != "" {
		m["name"] = req.Name
	}
	if req.Subresource != "" {
		m["subResource"], m["requestSubResource"] = req.Subresource, req.Subresource
	}
	if req.Namespace != "" {
		m["namespace"] = req.Namespace
	}
	ui := map[string]any{}
	if u, ok := request.UserFrom(ctx); ok {
		if u.Name != "" {
			ui["username"] = u.Name
		}
		if u.UID != "" {
			ui["uid"] = u.UID
		}
		if len(u.Groups) > 0 {
			g := make([]any, len(u.Groups))
			for i, x := range u.Groups {
				g[i] = x
			}
			ui["groups"] = g
		}
		if len(u.Extra) > 0 {
			e := map[string]any{}
			for k, vs := range u.Extra {
				l := make([]any, len(vs))
				for i, v := range vs {
					l[i] = v
				}
				e[k] = l
			}
			ui["extra"] = e
		}
	}
	m["userInfo"] = ui
	if opts := options(a); opts != nil {
		m["options"] = opts
	}
	return m
}

// options are the request's Create/Update/DeleteOptions as kube passes
// them in the admission request.
func options(a *admission.Attributes) map[string]any {
	var dry []any
	if a.DryRun() {
		dry = []any{metav1.DryRunAll}
	}
	o := map[string]any{"apiVersion": "meta.k8s.io/v1"}
	if dry != nil {
		o["dryRun"] = dry
	}
	switch a.Operation {
	case admission.Create:
		o["kind"] = "CreateOptions"
	case admission.Update:
		o["kind"] = "UpdateOptions"
	case admission.Delete:
		o["kind"] = "DeleteOptions"
		return o
	default:
		return nil
	}
	if a.Op.FieldManager != "" {
		o["fieldManager"] = a.Op.FieldManager
	}
	return o
}

// result is a policy's outcome for one binding and param.
type result struct {
	decisions []decision
	// ignored are evaluation errors a failurePolicy Ignore admitted.
	ignored     []decision
	annotations []annotation
}

type annotation struct {
	key, value, err string
}

// validate is kube's validator: match conditions, validations with their
// messages, audit annotations; errors follow the failure policy. mm
// records the match conditions' evaluation as kube's matcher does.
func validate(ctx context.Context, h *hook, in *inputs, param runtime.Object, mm *admission.MatchConditionMetrics) result {
	fail := failurePolicy(h.policy) == admissionregistrationv1.Fail
	errorDecision := func(msg string) result {
		d := decision{message: msg, errType: errorType(msg)}
		if !fail {
			return result{ignored: []decision{d}}
		}
		return result{decisions: []decision{d}}
	}
	var params map[string]any
	if param != nil {
		var err error
		if params, err = toMap(param, param.GetObjectKind().GroupVersionKind()); err != nil {
			return errorDecision(err.Error())
		}
	}
	c := h.compiled
	spec := &h.policy.Spec
	input := policycel.Input{Object: in.object, OldObject: in.oldObject, Request: in.request, Params: params, Namespace: in.namespace,
		Authorizer: in.authorizer, RequestResource: in.requestResource}
	if len(c.MatchConditions) > 0 {
		// Match conditions see no namespaceObject, as kube's matcher.
		mi := input
		mi.Namespace = nil
		start := time.Now()
		matched, evalErrors, err := c.MatchCounting(ctx, mi, policycel.MatchConditionsBudget)
		mm.ObserveEvaluation(h.policy.Name, admission.MatchKindPolicy, admission.TypeValidate, in.operation, time.Since(start), matched && err == nil, evalErrors)
		if err != nil {
			return errorDecision(err.Error())
		}
		if !matched {
			return result{}
		}
	}
	ev := c.NewEvaluation(ctx, input)
	var res result
	for i := range c.Validations {
		start := time.Now()
		v, err := ev.Eval(&c.Validations[i])
		elapsed := time.Since(start)
		if errors.Is(err, policycel.ErrOutOfBudget) {
			return errorDecision(err.Error())
		}
		if err != nil {
			d := decision{message: err.Error(), index: i, elapsed: elapsed, errType: errorType(err.Error())}
			if fail {
				res.decisions = append(res.decisions, d)
			} else {
				res.ignored = append(res.ignored, d)
			}
			continue
		}
		if v == types.True {
			continue
		}
		val := spec.Validations[i]
		d := decision{index: i, reason: metav1.StatusReasonInvalid, elapsed: elapsed}
		if val.Reason != nil {
			d.reason = *val.Reason
		}
		if m := c.Messages[i]; m != nil {
			mv, err := ev.Eval(m)
			if errors.Is(err, policycel.ErrOutOfBudget) {
				return errorDecision("failed messageExpression: " + err.Error())
			}
			if err == nil {
				if s, ok := mv.Value().(string); ok {
					s = strings.TrimSpace(s)
					if len(s) <= policycel.MaxMessageSize && !strings.Contains(s, "\n") {
						d.message = s
					}
				}
			}
		}
		if d.message == "" {
			d.message = strings.TrimSpace(val.Message)
		}
		if d.message == "" {
			d.message = fmt.Sprintf("failed expression: %v", strings.TrimSpace(val.Expression))
		}
		res.decisions = append(res.decisions, d)
	}
	ev = c.NewEvaluation(ctx, input)
	for i := range c.AuditAnnotations {
		an := annotation{key: spec.AuditAnnotations[i].Key}
		v, err := ev.Eval(&c.AuditAnnotations[i])
		switch {
		case errors.Is(err, policycel.ErrOutOfBudget):
			return errorDecision(err.Error())
		case err != nil:
			if !fail {
				continue
			}
			an.err = err.Error()
		case v == types.NullValue:
			continue
		default:
			s, ok := v.Value().(string)
			if !ok {
				an.err = fmt.Sprintf("valueExpression '%v' resulted in unsupported return type: %v. Return type must be either string or null.",
					spec.AuditAnnotations[i].ValueExpression, v.Type())
				break
			}
			if an.value = strings.TrimSpace(s); an.value == "" {
				continue
			}
		}
		res.annotations = append(res.annotations, an)
	}
	return res
}

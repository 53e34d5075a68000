package podsecurity

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	"github.com/kpipe/kpipe/internal/admission"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/internal/version"
)

// kube's limits on the existing-pod check when a namespace's enforce
// level tightens.
const (
	defaultMaxPodsToCheck  = 3000
	defaultPodCheckTimeout = time.Second
)

var (
	podsResource       = corev1.Resource("pods")
	namespacesResource = corev1.Resource("namespaces")

	// podSpecResources are the controllers whose pod templates are
	// evaluated for warn and audit, kube's default set.
	podSpecResources = map[schema.GroupResource]bool{
		corev1.Resource("replicationcontrollers"): true,
		corev1.Resource("podtemplates"):           true,
		appsv1.Resource("replicasets"):            true,
		appsv1.Resource("deployments"):            true,
		appsv1.Resource("statefulsets"):           true,
		appsv1.Resource("daemonsets"):             true,
		batchv1.Resource("jobs"):                  true,
		batchv1.Resource("cronjobs"):              true,
	}

	// ignoredPodSubresources do not change the pod spec; any other pod
	// subresource carries a Pod and is evaluated, as kube fails safe.
	ignoredPodSubresources = map[string]bool{
		"exec": true, "attach": true, "binding": true, "eviction": true,
		"log": true, "portforward": true, "proxy": true, "status": true,
	}
)

// NamespaceGetter reads a namespace, for its labels.
type NamespaceGetter interface {
	GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error)
}

// PodLister lists a namespace's pods.
type PodLister interface {
	ListPods(ctx context.Context, namespace string) ([]*corev1.Pod, error)
}

// Plugin is the admission plugin.
type Plugin struct {
	defaults       psaapi.Policy
	exemptUsers    map[string]bool
	exemptNS       map[string]bool
	exemptRuntimes map[string]bool
	evaluator      policy.Evaluator

	// Namespaces and Pods are read from storage once provisioned; tests
	// may set their own.
	Namespaces NamespaceGetter
	Pods       PodLister

	metrics         *metrics
	log             *zap.Logger
	maxPodsToCheck  int
	podCheckTimeout time.Duration
}

var (
	_ admission.Validator = (*Plugin)(nil)
	_ admission.Handles   = (*Plugin)(nil)
)

// New builds the plugin from a validated config.
func New(c *Config) (*Plugin, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		return nil, fmt.Errorf("could not create PodSecurityRegistry: %w", err)
	}
	set := func(items []string) map[string]bool {
		m := make(map[string]bool, len(items))
		for _, s := range items {
			m[s] = true
		}
		return m
	}
	return &Plugin{
		defaults:        c.policy,
		exemptUsers:     set(c.Exemptions.Usernames),
		exemptNS:        set(c.Exemptions.Namespaces),
		exemptRuntimes:  set(c.Exemptions.RuntimeClasses),
		evaluator:       evaluator,
		log:             zap.NewNop(),
		maxPodsToCheck:  defaultMaxPodsToCheck,
		podCheckTimeout: defaultPodCheckTimeout,
	}, nil
}

// Provision implements pipeline.Provisioner: namespaces and pods are read
// from storage, and the counters go on the server's registry.
func (p *Plugin) Provision(env *pipeline.Env) error {
	if env.Log != nil {
		p.log = env.Log
	}
	if env.Metrics != nil {
		p.metrics = newMetrics(serverVersion(), func(c prometheus.Collector) prometheus.Collector { return pipeline.Register(env, c) })
	}
	o, err := admission.NewObjects(env)
	if err != nil {
		return err
	}
	s := &storage{prefix: env.Shared.StoragePrefix}
	if s.namespaces, err = o.Resource("", "v1", "namespaces"); err != nil {
		return err
	}
	if s.pods, err = o.Resource("", "v1", "pods"); err != nil {
		return err
	}
	p.Namespaces, p.Pods = s, s
	return nil
}

// serverVersion is the minor the server reports: policy versions above it
// are "future" in the metrics.
func serverVersion() psaapi.Version {
	info := version.Get()
	var major, minor int
	if _, err := fmt.Sscanf(info.Major+"."+info.Minor, "%d.%d", &major, &minor); err != nil {
		return psaapi.LatestVersion()
	}
	return psaapi.MajorMinorVersion(major, minor)
}

// Handles implements admission.Handles: creates and updates, as kube's.
func (*Plugin) Handles(op string) bool { return op == admission.Create || op == admission.Update }

// req is one admission request as the evaluation sees it.
type req struct {
	operation   string
	resource    schema.GroupResource
	kind        schema.GroupKind
	subresource string
	namespace   string
	name        string
	user        string
	object, old runtime.Object
}

// result is the evaluation's answer: a rejection, warnings and the audit
// annotations (keys without kube's pod-security.kubernetes.io/ prefix).
type result struct {
	err         error
	warnings    []string
	annotations map[string]string
}

// Validate implements admission.Validator.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	gr := a.Op.Resource.GroupResource()
	if gr != podsResource && gr != namespacesResource && !podSpecResources[gr] {
		return nil
	}
	r := &req{
		operation:   a.Operation,
		resource:    gr,
		kind:        schema.GroupKind{Group: gr.Group, Kind: a.Op.Resource.Kind},
		subresource: a.Op.Subresource,
		namespace:   a.Op.Namespace,
		name:        a.Name(),
		object:      a.Op.Object,
		old:         a.Op.Old,
	}
	if r.operation == admission.Update && r.old == nil {
		r.operation = admission.Create // a PUT that creates, which kube admits as a create
	}
	if u, ok := request.UserFrom(ctx); ok {
		r.user = u.Name
	}
	res := p.validate(ctx, r)
	for _, w := range res.warnings {
		a.Warn(w)
	}
	keys := make([]string, 0, len(res.annotations))
	for k := range res.annotations {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		key, value := psaapi.AuditAnnotationPrefix+k, res.annotations[k]
		// kube logs a conflicting annotation and goes on.
		if err := a.AddAnnotation(key, value); err != nil {
			p.log.Warn("audit annotation", zap.Error(err))
		}
		// The request's audit event gets it now, as kube's
		// audit.AddAuditAnnotations, rejected or not.
		request.AddAuditAnnotation(ctx, key, value)
	}
	return res.err
}

func (p *Plugin) validate(ctx context.Context, r *req) result {
	switch r.resource {
	case namespacesResource:
		return p.validateNamespace(ctx, r)
	case podsResource:
		return p.validatePod(ctx, r)
	}
	return p.validatePodController(ctx, r)
}

func exempt(reason string) result {
	return result{annotations: map[string]string{psaapi.ExemptionReasonAnnotationKey: reason}}
}

// validateNamespace refuses invalid labels, and on an update that
// tightens enforce warns about the existing pods that would violate it.
func (p *Plugin) validateNamespace(ctx context.Context, r *req) result {
	if r.subresource != "" {
		return result{}
	}
	ns, ok := r.object.(*corev1.Namespace)
	if !ok {
		return errResult(apierrors.NewBadRequest("failed to decode namespace"), nil)
	}
	newPolicy, newErrs := psaapi.PolicyToEvaluate(ns.Labels, p.defaults)
	switch r.operation {
	case admission.Create:
		if len(newErrs) > 0 {
			return result{err: apierrors.NewInvalid(r.kind, r.name, newErrs)}
		}
		if p.exemptNamespace(r.namespace) {
			if w := p.exemptNamespaceWarning(ns.Name, newPolicy, ns.Labels); w != "" {
				return result{warnings: []string{w}}
			}
		}
		return result{}
	case admission.Update:
		old, ok := r.old.(*corev1.Namespace)
		if !ok {
			return errResult(apierrors.NewBadRequest("failed to decode  old namespace"), nil)
		}
		oldPolicy, oldErrs := psaapi.PolicyToEvaluate(old.Labels, p.defaults)
		// Invalid labels are refused only when they changed.
		if len(newErrs) > 0 && (len(oldErrs) == 0 || !reflect.DeepEqual(newErrs, oldErrs)) {
			return result{err: apierrors.NewInvalid(r.kind, r.name, newErrs)}
		}
		// The existing pods are checked only when enforce tightened.
		switch {
		case newPolicy.Enforce == oldPolicy.Enforce,
			newPolicy.Enforce.Level == psaapi.LevelPrivileged,
			newPolicy.Enforce.Version == oldPolicy.Enforce.Version && psaapi.CompareLevels(newPolicy.Enforce.Level, oldPolicy.Enforce.Level) < 1:
			return result{}
		}
		if p.exemptNamespace(r.namespace) {
			if w := p.exemptNamespaceWarning(ns.Name, newPolicy, ns.Labels); w != "" {
				return result{warnings: []string{w}}
			}
			return result{}
		}
		return result{warnings: p.evaluatePodsInNamespace(ctx, ns.Name, newPolicy.Enforce)}
	}
	return result{}
}

// errResult is kube's errorResponse: the error, and an "error" audit
// annotation with its message and cause.
func errResult(err *apierrors.StatusError, cause error) result {
	detail := err.ErrStatus.Message
	if cause != nil {
		detail = fmt.Sprintf("%s: %v", detail, cause)
	}
	return result{err: err, annotations: map[string]string{"error": detail}}
}

// validatePod evaluates a pod create or update against the namespace's
// policy: enforce rejects, audit annotates, warn warns.
func (p *Plugin) validatePod(ctx context.Context, r *req) result {
	if ignoredPodSubresources[r.subresource] {
		return result{}
	}
	if p.exemptNamespace(r.namespace) {
		p.metrics.exemption(r)
		return exempt("namespace")
	}
	if p.exemptUser(r.user) {
		p.metrics.exemption(r)
		return exempt("user")
	}
	ns, err := p.Namespaces.GetNamespace(ctx, r.namespace)
	if err != nil {
		p.log.Error("failed to fetch pod namespace", zap.String("namespace", r.namespace), zap.Error(err))
		p.metrics.error(true, r)
		return errResult(apierrors.NewInternalError(fmt.Errorf("failed to lookup namespace %q", r.namespace)), err)
	}
	nsPolicy, nsPolicyErrs := psaapi.PolicyToEvaluate(ns.Labels, p.defaults)
	if len(nsPolicyErrs) == 0 && nsPolicy.FullyPrivileged() {
		p.metrics.evaluation(decisionAllow, nsPolicy.Enforce, modeEnforce, r)
		return result{annotations: map[string]string{
			psaapi.EnforcedPolicyAnnotationKey: psaapi.LevelVersion{Level: psaapi.LevelPrivileged, Version: psaapi.LatestVersion()}.String(),
		}}
	}
	pod, ok := r.object.(*corev1.Pod)
	if !ok {
		p.metrics.error(true, r)
		return errResult(apierrors.NewBadRequest("failed to decode pod"), nil)
	}
	if r.operation == admission.Update {
		old, ok := r.old.(*corev1.Pod)
		if !ok {
			p.metrics.error(true, r)
			return errResult(apierrors.NewBadRequest("failed to decode old pod"), nil)
		}
		if !significantPodUpdate(pod, old) {
			return result{} // nothing the policy looks at changed
		}
	}
	return p.evaluatePod(nsPolicy, nsPolicyErrs.ToAggregate(), &pod.ObjectMeta, &pod.Spec, r, true)
}

// validatePodController evaluates a controller's pod template for warn
// and audit; it never rejects.
func (p *Plugin) validatePodController(ctx context.Context, r *req) result {
	if r.subresource != "" {
		return result{}
	}
	if p.exemptNamespace(r.namespace) {
		p.metrics.exemption(r)
		return exempt("namespace")
	}
	if p.exemptUser(r.user) {
		p.metrics.exemption(r)
		return exempt("user")
	}
	ns, err := p.Namespaces.GetNamespace(ctx, r.namespace)
	if err != nil {
		p.log.Error("failed to fetch pod namespace", zap.String("namespace", r.namespace), zap.Error(err))
		p.metrics.error(true, r)
		return result{annotations: map[string]string{"error": fmt.Sprintf("failed to lookup namespace %q: %v", r.namespace, err)}}
	}
	nsPolicy, nsPolicyErrs := psaapi.PolicyToEvaluate(ns.Labels, p.defaults)
	if len(nsPolicyErrs) == 0 && nsPolicy.Warn.Level == psaapi.LevelPrivileged && nsPolicy.Audit.Level == psaapi.LevelPrivileged {
		return result{}
	}
	meta, spec, err := extractPodSpec(r.object)
	if err != nil {
		p.log.Error("failed to extract pod spec", zap.Error(err))
		p.metrics.error(true, r)
		return result{annotations: map[string]string{"error": fmt.Sprintf("failed to extract pod template: %v", err)}}
	}
	if meta == nil && spec == nil {
		return result{} // no pod template to evaluate
	}
	return p.evaluatePod(nsPolicy, nsPolicyErrs.ToAggregate(), meta, spec, r, false)
}

// extractPodSpec finds a controller's pod template.
func extractPodSpec(obj runtime.Object) (*metav1.ObjectMeta, *corev1.PodSpec, error) {
	var t *corev1.PodTemplateSpec
	switch o := obj.(type) {
	case *corev1.Pod:
		return &o.ObjectMeta, &o.Spec, nil
	case *corev1.PodTemplate:
		t = &o.Template
	case *corev1.ReplicationController:
		t = o.Spec.Template
	case *appsv1.ReplicaSet:
		t = &o.Spec.Template
	case *appsv1.Deployment:
		t = &o.Spec.Template
	case *appsv1.DaemonSet:
		t = &o.Spec.Template
	case *appsv1.StatefulSet:
		t = &o.Spec.Template
	case *batchv1.Job:
		t = &o.Spec.Template
	case *batchv1.CronJob:
		t = &o.Spec.JobTemplate.Spec.Template
	default:
		return nil, nil, fmt.Errorf("unexpected object type: %T", obj)
	}
	if t == nil {
		return nil, nil, nil
	}
	return &t.ObjectMeta, &t.Spec, nil
}

// evaluatePod checks a pod (or template) against the namespace's enforce
// (only when enforce is set), audit and warn levels, each level and
// version evaluated once.
func (p *Plugin) evaluatePod(nsPolicy psaapi.Policy, nsPolicyErr error, meta *metav1.ObjectMeta, spec *corev1.PodSpec, r *req, enforce bool) result {
	if p.exemptRuntimeClass(spec.RuntimeClassName) {
		p.metrics.exemption(r)
		return exempt("runtimeClass")
	}
	res := result{annotations: map[string]string{}}
	if nsPolicyErr != nil {
		p.log.Debug("failed to parse PodSecurity namespace labels", zap.Error(nsPolicyErr))
		res.annotations["error"] = fmt.Sprintf("Failed to parse policy: %v", nsPolicyErr)
		p.metrics.error(false, r)
	}
	cached := map[psaapi.LevelVersion]policy.AggregateCheckResult{}
	check := func(lv psaapi.LevelVersion) policy.AggregateCheckResult {
		if c, ok := cached[lv]; ok {
			return c
		}
		c := policy.AggregateCheckResults(p.evaluator.EvaluatePod(lv, meta, spec))
		cached[lv] = c
		return c
	}
	if enforce {
		res.annotations[psaapi.EnforcedPolicyAnnotationKey] = nsPolicy.Enforce.String()
		if c := check(nsPolicy.Enforce); !c.Allowed {
			res.err = apierrors.NewForbidden(r.resource, r.name, fmt.Errorf("violates PodSecurity %q: %s", nsPolicy.Enforce.String(), c.ForbiddenDetail()))
			p.metrics.evaluation(decisionDeny, nsPolicy.Enforce, modeEnforce, r)
		} else {
			p.metrics.evaluation(decisionAllow, nsPolicy.Enforce, modeEnforce, r)
		}
	}
	if c := check(nsPolicy.Audit); !c.Allowed {
		res.annotations[psaapi.AuditViolationsAnnotationKey] = fmt.Sprintf("would violate PodSecurity %q: %s", nsPolicy.Audit.String(), c.ForbiddenDetail())
		p.metrics.evaluation(decisionDeny, nsPolicy.Audit, modeAudit, r)
	}
	// No warnings on a request already rejected.
	if res.err == nil {
		if c := check(nsPolicy.Warn); !c.Allowed {
			res.warnings = append(res.warnings, fmt.Sprintf("would violate PodSecurity %q: %s", nsPolicy.Warn.String(), c.ForbiddenDetail()))
			p.metrics.evaluation(decisionDeny, nsPolicy.Warn, modeWarn, r)
		}
	}
	return res
}

// podCount tracks the pods sharing one warning: the lexically first
// name and how many.
type podCount struct {
	name  string
	count int
}

// evaluatePodsInNamespace checks the namespace's existing pods against a
// new enforce level, within kube's limits: at most maxPodsToCheck pods, and
// the timeout or half the request's remaining time, whichever is less.
func (p *Plugin) evaluatePodsInNamespace(ctx context.Context, namespace string, enforce psaapi.LevelVersion) []string {
	timeout := p.podCheckTimeout
	if deadline, ok := ctx.Deadline(); ok {
		if remaining := time.Until(deadline) / 2; timeout > remaining {
			timeout = remaining
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	pods, err := p.Pods.ListPods(ctx, namespace)
	if err != nil {
		p.log.Error("failed to list pods", zap.String("namespace", namespace), zap.Error(err))
		return []string{"failed to list pods while checking new PodSecurity enforce level"}
	}
	pods = p.prioritizePods(pods)
	total := len(pods)
	if len(pods) > p.maxPodsToCheck {
		pods = pods[:p.maxPodsToCheck]
	}
	checked := len(pods)
	var podWarnings []string
	counts := map[string]podCount{}
	for i, pod := range pods {
		c := policy.AggregateCheckResults(p.evaluator.EvaluatePod(enforce, &pod.ObjectMeta, &pod.Spec))
		if !c.Allowed {
			w := c.ForbiddenReason()
			pc, seen := counts[w]
			if !seen {
				pc.name = pod.Name
				podWarnings = append(podWarnings, w)
			} else if pod.Name < pc.name {
				pc.name = pod.Name
			}
			pc.count++
			counts[w] = pc
		}
		if ctx.Err() != nil { // out of time
			checked = i + 1
			break
		}
	}
	var warnings []string
	if checked < total {
		warnings = append(warnings, fmt.Sprintf("new PodSecurity enforce level only checked against the first %d of %d existing pods", checked, total))
	}
	if len(podWarnings) > 0 {
		warnings = append(warnings, fmt.Sprintf("existing pods in namespace %q violate the new PodSecurity enforce level %q", namespace, enforce.String()))
	}
	for i, w := range podWarnings {
		switch c := counts[w]; c.count {
		case 1:
			podWarnings[i] = fmt.Sprintf("%s: %s", c.name, w)
		case 2:
			podWarnings[i] = fmt.Sprintf("%s (and 1 other pod): %s", c.name, w)
		default:
			podWarnings[i] = fmt.Sprintf("%s (and %d other pods): %s", c.name, c.count-1, w)
		}
	}
	sort.Strings(podWarnings)
	return append(warnings, podWarnings...)
}

// prioritizePods drops pods of exempt runtime classes and puts one pod
// per controller first, the other replicas after, so a limited check sees
// as many distinct templates as it can. It reuses pods' backing array.
func (p *Plugin) prioritizePods(pods []*corev1.Pod) []*corev1.Pod {
	out := pods[:0]
	var replicas []*corev1.Pod
	seen := map[types.UID]bool{}
	for _, pod := range pods {
		if p.exemptRuntimeClass(pod.Spec.RuntimeClassName) {
			continue
		}
		ref := metav1.GetControllerOfNoCopy(pod)
		switch {
		case ref == nil:
			out = append(out, pod)
		case seen[ref.UID]:
			replicas = append(replicas, pod)
		default:
			seen[ref.UID] = true
			out = append(out, pod)
		}
	}
	return append(out, replicas...)
}

// significantPodUpdate reports an update that changes what the policy
// may look at: the containers' number or images, or an ephemeral
// container added or changed. Other pod fields are immutable.
func significantPodUpdate(pod, old *corev1.Pod) bool {
	if len(pod.Spec.Containers) != len(old.Spec.Containers) || len(pod.Spec.InitContainers) != len(old.Spec.InitContainers) {
		return true
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Image != old.Spec.Containers[i].Image {
			return true
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Image != old.Spec.InitContainers[i].Image {
			return true
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		found := false
		for _, oc := range old.Spec.EphemeralContainers {
			if oc.Name == c.Name {
				if oc.Image != c.Image {
					return true
				}
				found = true
				break
			}
		}
		if !found {
			return true // added
		}
	}
	return false
}

func (p *Plugin) exemptNamespace(ns string) bool { return ns != "" && p.exemptNS[ns] }
func (p *Plugin) exemptUser(user string) bool    { return user != "" && p.exemptUsers[user] }
func (p *Plugin) exemptRuntimeClass(rc *string) bool {
	return rc != nil && *rc != "" && p.exemptRuntimes[*rc]
}

// exemptNamespaceWarning tells that an exempt namespace's own non-default,
// non-privileged policy labels are ignored; "" when there is nothing to say.
func (p *Plugin) exemptNamespaceWarning(namespace string, pol psaapi.Policy, labels map[string]string) string {
	if pol.FullyPrivileged() || pol.Equivalent(&p.defaults) {
		return ""
	}
	var parts []string
	for _, m := range []struct {
		mode                 string
		lv                   psaapi.LevelVersion
		levelKey, versionKey string
	}{
		{"enforce", pol.Enforce, psaapi.EnforceLevelLabel, psaapi.EnforceVersionLabel},
		{"audit", pol.Audit, psaapi.AuditLevelLabel, psaapi.AuditVersionLabel},
		{"warn", pol.Warn, psaapi.WarnLevelLabel, psaapi.WarnVersionLabel},
	} {
		_, hasLevel := labels[m.levelKey]
		_, hasVersion := labels[m.versionKey]
		if m.lv.Level != psaapi.LevelPrivileged && (hasLevel || hasVersion) {
			parts = append(parts, m.mode+"="+m.lv.String())
		}
	}
	return fmt.Sprintf("namespace %q is exempt from Pod Security, and the policy (%s) will be ignored", namespace, strings.Join(parts, ", "))
}

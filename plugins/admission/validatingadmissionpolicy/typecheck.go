package validatingadmissionpolicy

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	admissionregistrationv1ac "k8s.io/client-go/applyconfigurations/admissionregistration/v1"
	"k8s.io/client-go/kubernetes"

	policycel "github.com/kpipe/kpipe/internal/admission/cel"
	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// ControllerName is kube's typechecking controller, its field manager.
const ControllerName = "validatingadmissionpolicy-status-controller"

// maxTypesToCheck is kube's bound on the kinds checked per policy.
const maxTypesToCheck = 10

// PostStartHooks implements pipeline.HookProvider: the typechecking
// controller, which writes each policy's status.typeChecking and
// status.observedGeneration once per generation.
func (p *Plugin) PostStartHooks() []pipeline.NamedHook {
	return []pipeline.NamedHook{{Name: ControllerName, Hook: statusController{p}}}
}

type statusController struct{ p *Plugin }

func (c statusController) Run(ctx context.Context, env *pipeline.HookEnv) error {
	cs, err := kubernetes.NewForConfig(env.Loopback)
	if err != nil {
		return err
	}
	go c.loop(ctx, cs)
	return nil
}

// loop checks policies whenever the policy informer moves, and every
// few seconds so that a failed write is tried again.
func (c statusController) loop(ctx context.Context, cs kubernetes.Interface) {
	p := c.p
	select {
	case <-p.policies.Synced():
	case <-ctx.Done():
		return
	}
	var seen uint64
	last := time.Time{}
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		if g := p.policies.Generation(); g != seen || time.Since(last) > 5*time.Second {
			seen, last = g, time.Now()
			for _, o := range p.policies.List() {
				pol := o.(*admissionregistrationv1.ValidatingAdmissionPolicy)
				if pol.Generation <= pol.Status.ObservedGeneration {
					continue
				}
				if err := c.reconcile(ctx, cs, pol); err != nil && ctx.Err() == nil {
					p.log.Info("typechecking: status not written", zap.String("policy", pol.Name), zap.Error(err))
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (c statusController) reconcile(ctx context.Context, cs kubernetes.Interface, pol *admissionregistrationv1.ValidatingAdmissionPolicy) error {
	warnings := c.p.typeCheck(pol)
	tc := admissionregistrationv1ac.TypeChecking()
	for _, w := range warnings {
		tc.WithExpressionWarnings(admissionregistrationv1ac.ExpressionWarning().WithFieldRef(w.FieldRef).WithWarning(w.Warning))
	}
	// As kube's controller: a forced apply of the status, so the
	// controller owns observedGeneration and typeChecking.
	ac := admissionregistrationv1ac.ValidatingAdmissionPolicy(pol.Name).WithStatus(
		admissionregistrationv1ac.ValidatingAdmissionPolicyStatus().WithObservedGeneration(pol.Generation).WithTypeChecking(tc))
	_, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().ApplyStatus(ctx, ac, metav1.ApplyOptions{FieldManager: ControllerName, Force: true})
	return err
}

// typeCheck is kube's TypeChecker.Check: each validation's expression and
// messageExpression compiled against the OpenAPI type of every kind the
// policy's resource rules name (no wildcards), with params typed by the
// paramKind's schema. A failure becomes a warning per field, one line per
// kind: "<group/version, Kind=K>: <compile error>".
func (p *Plugin) typeCheck(pol *admissionregistrationv1.ValidatingAdmissionPolicy) []admissionregistrationv1.ExpressionWarning {
	gvks := p.typesToCheck(pol)
	paramsModel := ""
	if k := pol.Spec.ParamKind; k != nil {
		if res, ok := p.paramResource(k); ok {
			paramsModel = modelOf(res)
		}
	}
	var warnings []admissionregistrationv1.ExpressionWarning
	check := func(src string, path *field.Path) {
		var msgs []string
		for _, g := range gvks {
			err := policycel.CheckExpression(&pol.Spec, policycel.Options{
				HasParams: pol.Spec.ParamKind != nil, ObjectModel: g.model, ParamsModel: paramsModel,
			}, src)
			if err == nil {
				continue
			}
			if err.Type == policycel.ErrorInvalid {
				msgs = append(msgs, fmt.Sprintf("%v: %s\n", g.gvk, err.Detail))
			} else {
				msgs = append(msgs, fmt.Sprintf("%v: type checking error: %v\n", g.gvk, err))
			}
		}
		if len(msgs) > 0 {
			warnings = append(warnings, admissionregistrationv1.ExpressionWarning{FieldRef: path.String(), Warning: strings.Join(msgs, "\n")})
		}
	}
	if len(gvks) == 0 {
		return nil
	}
	fp := field.NewPath("spec", "validations")
	for i, v := range pol.Spec.Validations {
		check(v.Expression, fp.Index(i).Child("expression"))
		if v.MessageExpression != "" {
			check(v.MessageExpression, fp.Index(i).Child("messageExpression"))
		}
	}
	return warnings
}

type checkedKind struct {
	gvk   schema.GroupVersionKind
	model string
}

// modelOf is the generated OpenAPI model name of a resource's kind.
func modelOf(res *api.Resource) string {
	if m, ok := res.New().(interface{ OpenAPIModelName() string }); ok && policycel.HasModel(m.OpenAPIModelName()) {
		return m.OpenAPIModelName()
	}
	return ""
}

func (p *Plugin) typesToCheck(pol *admissionregistrationv1.ValidatingAdmissionPolicy) []checkedKind {
	mc := pol.Spec.MatchConstraints
	if mc == nil {
		return nil
	}
	seen := map[schema.GroupVersionKind]bool{}
	var out []checkedKind
	wild := func(xs []string, chars string) bool {
		for _, x := range xs {
			if strings.ContainsAny(x, chars) {
				return true
			}
		}
		return false
	}
	count := 0
	for _, rule := range mc.ResourceRules {
		if wild(rule.APIGroups, "*") || wild(rule.APIVersions, "*") {
			continue
		}
		groups := append([]string(nil), rule.APIGroups...)
		versions := append([]string(nil), rule.APIVersions...)
		var resources []string
		for _, r := range rule.Resources {
			if !strings.ContainsAny(r, "*/") {
				resources = append(resources, r)
			}
		}
		sort.Strings(groups)
		sort.Strings(versions)
		sort.Strings(resources)
		for _, g := range groups {
			for _, v := range versions {
				for _, r := range resources {
					res, ok := p.resources.Lookup(g, v, r)
					if !ok {
						continue
					}
					gvk := res.GroupVersionKind()
					model := modelOf(res)
					if model != "" && !seen[gvk] {
						seen[gvk] = true
						out = append(out, checkedKind{gvk: gvk, model: model})
					}
					if count++; count == maxTypesToCheck {
						return sortKinds(out)
					}
				}
			}
		}
	}
	return sortKinds(out)
}

func sortKinds(ks []checkedKind) []checkedKind {
	sort.Slice(ks, func(i, j int) bool {
		a, b := ks[i].gvk, ks[j].gvk
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Kind < b.Kind
	})
	return ks
}

// Package matching decides which admission requests a webhook or a CEL
// policy sees: kube's rules (operations, groups, versions, resources with
// subresources, scope), object selectors and namespace selectors. The
// webhook plugins and ValidatingAdmissionPolicy share it, so both read a
// rule the same way.
package matching

import (
	"context"
	"errors"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kpipe/kpipe/internal/admission"
	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/storage/store"
)

// Request is what matching looks at.
type Request struct {
	Operation   string // CREATE, UPDATE, DELETE, CONNECT
	Resource    schema.GroupVersionResource
	Subresource string
	Kind        schema.GroupVersionKind
	// Namespace is the object's namespace; for a Namespace object it is
	// the namespace's own name, as kube's admission attributes have it.
	Namespace string
	Name      string
	Object    runtime.Object
	OldObject runtime.Object
}

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// FromAttributes builds the Request of an admission call.
func FromAttributes(a *admission.Attributes) Request {
	op := a.Op
	r := Request{
		Operation:   a.Operation,
		Subresource: op.Subresource,
		Namespace:   op.Namespace,
		Name:        a.Name(),
		Object:      op.Object,
		OldObject:   op.Old,
	}
	if op.Resource != nil {
		r.Resource = op.Resource.GroupVersion.WithResource(op.Resource.Name)
		r.Kind = op.Resource.GroupVersion.WithKind(op.Resource.Kind)
		if sub, ok := op.Resource.Subresources[op.Subresource]; ok && sub != nil && sub.Kind != "" {
			gv := sub.GroupVersion
			if gv.Version == "" {
				gv = op.Resource.GroupVersion
			}
			r.Kind = gv.WithKind(sub.Kind)
		}
	}
	if r.Resource == namespacesGVR && r.Namespace == "" {
		r.Namespace = r.Name
	}
	return r
}

// IsExemptConfigurationResource reports the admission configuration
// kinds, which neither webhooks nor policies intercept, so a broken one
// can always be fixed or removed.
func IsExemptConfigurationResource(r Request) bool {
	if r.Kind.Group != admissionregistrationv1.GroupName {
		return false
	}
	switch r.Kind.Kind {
	case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
		"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
		"MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding":
		return true
	}
	return false
}

// Rules reports whether any rule matches r.
func Rules(rules []admissionregistrationv1.RuleWithOperations, r Request) bool {
	for i := range rules {
		if Rule(rules[i], r) {
			return true
		}
	}
	return false
}

// Rule reports whether one rule matches r: scope, operation, group,
// version and resource (with "*", "res/*", "*/sub" and "*/*").
func Rule(rule admissionregistrationv1.RuleWithOperations, r Request) bool {
	return scope(rule.Scope, r) && operation(rule.Operations, r.Operation) &&
		exactOrWildcard(rule.APIGroups, r.Resource.Group) &&
		exactOrWildcard(rule.APIVersions, r.Resource.Version) &&
		resource(rule.Resources, r.Resource.Resource, r.Subresource)
}

// Resource reports whether a rule without operations (a policy's
// excludeResourceRules, a NamedRuleWithOperations' rule) matches r's
// resource, ignoring resourceNames.
func Resource(rule admissionregistrationv1.Rule, r Request) bool {
	return scope(rule.Scope, r) && exactOrWildcard(rule.APIGroups, r.Resource.Group) &&
		exactOrWildcard(rule.APIVersions, r.Resource.Version) &&
		resource(rule.Resources, r.Resource.Resource, r.Subresource)
}

// NamedRules reports whether a policy's resource rule matches r,
// resourceNames included (an empty list matches every name).
func NamedRules(rules []admissionregistrationv1.NamedRuleWithOperations, r Request) bool {
	for _, rule := range rules {
		if !operation(rule.Operations, r.Operation) || !Resource(rule.Rule, r) {
			continue
		}
		if len(rule.ResourceNames) == 0 {
			return true
		}
		for _, n := range rule.ResourceNames {
			if n == r.Name {
				return true
			}
		}
	}
	return false
}

func exactOrWildcard(items []string, requested string) bool {
	for _, it := range items {
		if it == "*" || it == requested {
			return true
		}
	}
	return false
}

func scope(s *admissionregistrationv1.ScopeType, r Request) bool {
	if s == nil || *s == admissionregistrationv1.AllScopes {
		return true
	}
	isNamespace := r.Resource == namespacesGVR
	switch *s {
	case admissionregistrationv1.NamespacedScope:
		return !isNamespace && r.Namespace != ""
	case admissionregistrationv1.ClusterScope:
		return isNamespace || r.Namespace == ""
	}
	return false
}

func operation(ops []admissionregistrationv1.OperationType, op string) bool {
	for _, o := range ops {
		if o == admissionregistrationv1.OperationAll || string(o) == op {
			return true
		}
	}
	return false
}

func resource(resources []string, res, sub string) bool {
	for _, rs := range resources {
		r, s, _ := strings.Cut(rs, "/")
		if (r == "*" || r == res) && (s == "*" || s == sub) {
			return true
		}
	}
	return false
}

// ObjectSelector reports whether the object or the old object carries
// labels that sel selects; an empty selector selects everything.
func ObjectSelector(sel *metav1.LabelSelector, r Request) (bool, error) {
	s, err := parse(sel)
	if err != nil || s.Empty() {
		return err == nil, err
	}
	return selects(s, r.Object) || selects(s, r.OldObject), nil
}

func selects(s labels.Selector, obj runtime.Object) bool {
	if obj == nil {
		return false
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	return s.Matches(labels.Set(m.GetLabels()))
}

func parse(sel *metav1.LabelSelector) (labels.Selector, error) {
	if sel == nil {
		return labels.Everything(), nil
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return s, nil
}

// Namespaces looks up namespaces for namespace selectors and for CEL's
// namespaceObject.
type Namespaces struct {
	res    *api.Resource
	prefix string
}

// NewNamespaces returns a lookup over the served namespaces.
func NewNamespaces(o *admission.Objects) (*Namespaces, error) {
	res, err := o.Resource("", "v1", "namespaces")
	if err != nil {
		return nil, err
	}
	return &Namespaces{res: res, prefix: o.Prefix()}, nil
}

// Get reads a namespace from the watch cache (resourceVersion 0), and
// from etcd when the cache has not seen it yet, as kube's lister-then-
// client lookup does for a namespace created a moment ago.
func (n *Namespaces) Get(ctx context.Context, name string) (*corev1.Namespace, error) {
	if name == "" {
		return nil, errors.New("no namespace name")
	}
	ns := &corev1.Namespace{}
	key := n.res.Key(n.prefix, "", name)
	err := n.res.Store.Get(ctx, key, store.GetOptions{ResourceVersion: "0"}, ns)
	if apierrors.IsNotFound(err) {
		err = n.res.Store.Get(ctx, key, store.GetOptions{}, ns)
	}
	if err != nil {
		return nil, err
	}
	return ns, nil
}

// Labels are the labels a namespace selector sees for r: a Namespace's
// own (from the object being written) for a create or update of one,
// otherwise the stored namespace's.
func (n *Namespaces) Labels(ctx context.Context, r Request) (map[string]string, error) {
	if r.Resource == namespacesGVR && r.Subresource == "" &&
		(r.Operation == admission.Create || r.Operation == admission.Update) && r.Object != nil {
		m, err := meta.Accessor(r.Object)
		if err != nil {
			return nil, err
		}
		return m.GetLabels(), nil
	}
	ns, err := n.Get(ctx, r.Namespace)
	if err != nil {
		return nil, err
	}
	return ns.Labels, nil
}

// Selector reports whether sel selects r's namespace. Cluster-scoped
// requests (other than for a Namespace) always match; a namespace that
// does not exist is its NotFound error, anything else an internal error.
func (n *Namespaces) Selector(ctx context.Context, sel *metav1.LabelSelector, r Request) (bool, error) {
	if r.Namespace == "" && r.Resource.Resource != "namespaces" {
		return true, nil
	}
	s, err := parse(sel)
	if err != nil || s.Empty() {
		return err == nil, err
	}
	lbls, err := n.Labels(ctx, r)
	if apierrors.IsNotFound(err) {
		return false, err
	}
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	return s.Matches(labels.Set(lbls)), nil
}

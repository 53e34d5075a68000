// Package api describes the resources kpipe serves: one registry entry per
// resource (scope, kind, names, verbs, subresources, strategy, storage key),
// the scheme and codecs, and content negotiation.
package api

import (
	"context"
	"fmt"
	"path"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kpipe/kpipe/internal/storage/store"
)

// Resource is one served resource. Adding a resource means one entry in
// resources.go plus its strategy.
type Resource struct {
	GroupVersion schema.GroupVersion
	// Name is the plural, as in the URL: "deployments".
	Name         string
	SingularName string
	Kind         string
	Namespaced   bool
	ShortNames   []string
	Categories   []string
	// Verbs are what discovery advertises and the terminal stage serves.
	Verbs []string
	// Subresources by name: status, scale, finalize.
	Subresources map[string]*Subresource
	Strategy     Strategy
	// StoragePath is the key segment after the prefix when kube's differs
	// from Name (services/specs, minions).
	StoragePath string
	// AllowCreateOnUpdate lets PUT create a missing object, where kube does.
	AllowCreateOnUpdate bool
	// RequireResourceVersion refuses a PUT without metadata.resourceVersion
	// (kube's strategies whose AllowUnconditionalUpdate is false).
	RequireResourceVersion bool
	// ReturnDeletedObject answers a delete with the object rather than a
	// Status, for the types where kube does (pods, services, namespaces...).
	ReturnDeletedObject bool
	// TTL, when set, gives stored objects an etcd lease (Events).
	TTL func(runtime.Object) time.Duration
	// FieldAttrs adds the type's selectable fields to metadata.name and
	// metadata.namespace.
	FieldAttrs func(runtime.Object) fields.Set

	// Create, when set, makes the resource virtual: nothing is stored, and
	// the terminal stage answers a create with what Create returns, as
	// kube's access reviews do. Verbs must then be just "create".
	Create CreateFunc
	// WriteCheck, when set, runs before a create or update is validated
	// (validate stage) or, without that stage, stored (terminal stage), so
	// no list in apiserver.yaml can switch it off, as kube's
	// registry-level RBAC escalation check.
	WriteCheck func(ctx context.Context, obj, old runtime.Object) error

	// Store is the resource's storage, attached by the server at start.
	Store store.Interface
	// Hooks, when set, run around the terminal stage's storage writes
	// (Service IP and port allocation), attached by the server at start.
	Hooks WriteHooks
}

// WriteHooks are side effects of a resource's writes outside its own key,
// as kube's BeginCreate, BeginUpdate and AfterDelete. finish(false) undoes
// what Begin did when the write fails. DryRunCreate and DryRunUpdate run
// instead of Begin on a dry run: they fill in what the write would show
// (kube's dry-run allocators) and change nothing outside the object.
type WriteHooks interface {
	BeginCreate(ctx context.Context, obj runtime.Object) (finish func(ok bool), err error)
	BeginUpdate(ctx context.Context, obj, old runtime.Object) (finish func(ok bool), err error)
	DryRunCreate(ctx context.Context, obj runtime.Object) error
	DryRunUpdate(ctx context.Context, obj, old runtime.Object) error
	AfterDelete(ctx context.Context, obj runtime.Object)
}

// CreateFunc answers a create of a virtual resource or subresource. obj
// is the decoded object, past admission and validation; namespace and name
// are the URL's (name is the parent object's for a subresource). The
// result is sent with 201 Created.
type CreateFunc func(ctx context.Context, namespace, name string, obj runtime.Object) (runtime.Object, error)

// VirtualCreate returns the Create func that answers the resource, or its
// subresource sub, instead of storage; nil when it is stored.
func (r *Resource) VirtualCreate(sub string) CreateFunc {
	if sub == "" {
		return r.Create
	}
	if s := r.Subresources[sub]; s != nil {
		return s.Create
	}
	return nil
}

// Subresource is a path below an object: /status, /scale, /finalize.
type Subresource struct {
	Name string
	// Kind and GroupVersion of what the subresource reads and writes:
	// the parent's for status, autoscaling/v1 Scale for scale.
	Kind         string
	GroupVersion schema.GroupVersion
	Verbs        []string
	// Strategy of writes to the subresource; nil means GenericStatus for
	// status.
	Strategy StatusStrategy
	// Create, when set, makes the subresource virtual (TokenRequest): see
	// Resource.Create.
	Create CreateFunc
	// CheckedByWriter marks a subresource whose body is not the parent
	// object (scale, eviction): the validate stage leaves it to the
	// terminal stage, which checks it where it applies it.
	CheckedByWriter bool
	// Kubelet marks the pod subresources kube answers from the pod's
	// node (log, exec, attach, portforward): no body is decoded and
	// nothing is stored; the terminal stage finds the node's kubelet.
	Kubelet bool
}

// IsKubelet reports whether s is served from the pod's kubelet; false for
// no subresource.
func (s *Subresource) IsKubelet() bool { return s != nil && s.Kubelet }

// CheckedByWriter reports whether writes to sub are checked by the
// terminal stage rather than the validate stage.
func (r *Resource) CheckedByWriter(sub string) bool {
	s := r.Subresources[sub]
	return s != nil && s.CheckedByWriter
}

// GroupVersionKind of the resource's objects.
func (r *Resource) GroupVersionKind() schema.GroupVersionKind {
	return r.GroupVersion.WithKind(r.Kind)
}

// GroupResource names the resource in errors ("deployments.apps").
func (r *Resource) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: r.GroupVersion.Group, Resource: r.Name}
}

// New returns an empty object of the resource's kind.
func (r *Resource) New() runtime.Object {
	obj, err := Scheme.New(r.GroupVersionKind())
	if err != nil {
		panic(fmt.Sprintf("api: %s is not in the scheme: %v", r.GroupVersionKind(), err))
	}
	return obj
}

// NewList returns an empty list of the resource's kind.
func (r *Resource) NewList() runtime.Object {
	obj, err := Scheme.New(r.GroupVersion.WithKind(r.Kind + "List"))
	if err != nil {
		panic(fmt.Sprintf("api: %sList is not in the scheme: %v", r.Kind, err))
	}
	return obj
}

// storagePath is the segment after the prefix.
func (r *Resource) storagePath() string {
	if r.StoragePath != "" {
		return r.StoragePath
	}
	return r.Name
}

// Key is the etcd key of one object: <prefix>/<resource>/<namespace>/<name>,
// or <prefix>/<resource>/<name> for cluster-scoped resources. The namespace
// and name are joined as they are, never cleaned: path.Join would turn the
// namespace "." into the prefix of every namespace's objects. A "." or ".."
// segment stays in the key, and storage refuses it.
func (r *Resource) Key(prefix, namespace, name string) string {
	if r.Namespaced {
		return r.StoragePrefix(prefix) + "/" + namespace + "/" + name
	}
	return r.StoragePrefix(prefix) + "/" + name
}

// RequestKey is Key for a name taken from a request's path: a name that
// cannot be one path segment gets kube's 400 before storage is touched.
func (r *Resource) RequestKey(prefix, namespace, name string) (string, error) {
	if err := CheckPathName(name); err != nil {
		return "", err
	}
	return r.Key(prefix, namespace, name), nil
}

// CollectionKey is the prefix of a list: every object, or one namespace's.
// It ends in "/" so "pods" does not also match "podsecuritypolicies". The
// namespace is not cleaned either (see Key).
func (r *Resource) CollectionKey(prefix, namespace string) string {
	if r.Namespaced && namespace != "" {
		return r.StoragePrefix(prefix) + "/" + namespace + "/"
	}
	return r.StoragePrefix(prefix) + "/"
}

// Attrs returns the labels and selectable fields of obj, for selectors.
func (r *Resource) Attrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	ls, fs, err := store.DefaultAttrs(obj)
	if err != nil {
		return nil, nil, err
	}
	if !r.Namespaced {
		delete(fs, "metadata.namespace")
	}
	if r.FieldAttrs != nil {
		for k, v := range r.FieldAttrs(obj) {
			fs[k] = v
		}
	}
	return ls, fs, nil
}

// HasVerb reports whether the resource serves verb.
func (r *Resource) HasVerb(verb string) bool {
	for _, v := range r.Verbs {
		if v == verb {
			return true
		}
	}
	return false
}

// Registry is every served resource, by group, version and plural.
type Registry struct {
	byGVR map[schema.GroupVersionResource]*Resource
	list  []*Resource
}

// NewRegistry indexes resources. A duplicate is a programming error.
func NewRegistry(resources []*Resource) *Registry {
	r := &Registry{byGVR: map[schema.GroupVersionResource]*Resource{}}
	for _, res := range resources {
		gvr := res.GroupVersion.WithResource(res.Name)
		if _, dup := r.byGVR[gvr]; dup {
			panic(fmt.Sprintf("api: %s registered twice", gvr))
		}
		r.byGVR[gvr] = res
		r.list = append(r.list, res)
	}
	sort.SliceStable(r.list, func(i, j int) bool {
		a, b := r.list[i].GroupVersion, r.list[j].GroupVersion
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		return r.list[i].Name < r.list[j].Name
	})
	return r
}

// Lookup finds a resource.
func (r *Registry) Lookup(group, version, resource string) (*Resource, bool) {
	res, ok := r.byGVR[schema.GroupVersionResource{Group: group, Version: version, Resource: resource}]
	return res, ok
}

// All lists the resources, core first, then by group and name.
func (r *Registry) All() []*Resource { return r.list }

// StoragePrefix is the key prefix of every object of the resource. Only
// configured parts are joined here, so cleaning them is safe.
func (r *Resource) StoragePrefix(prefix string) string {
	return path.Join(prefix, r.storagePath())
}

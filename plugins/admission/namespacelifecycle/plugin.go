// Package namespacelifecycle is kube's NamespaceLifecycle admission
// plugin: no new objects in a missing or terminating namespace, and the
// system namespaces cannot be deleted.
package namespacelifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpipe/kpipe/internal/admission"
	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/storage/store"
)

// Name is the plugin's name in the validating-admission list.
const Name = "NamespaceLifecycle"

// Register adds the plugin to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindValidatingAdmission,
		Description: "refuses creates in missing or terminating namespaces and the deletion of system namespaces.",
		New:         func(any) (any, error) { return &Plugin{}, nil },
	})
}

// immortal are kube's namespaces that may not be deleted.
var immortal = map[string]bool{
	metav1.NamespaceDefault: true,
	metav1.NamespaceSystem:  true,
	metav1.NamespacePublic:  true,
}

// Plugin is the admission plugin.
type Plugin struct {
	namespaces *api.Resource
	prefix     string
	// deleted remembers namespaces deleted through this server lately:
	// the cache may still show them Active, so they are read live.
	deleted recentlyDeleted
}

var _ admission.Validator = (*Plugin)(nil)

// Provision implements pipeline.Provisioner.
func (p *Plugin) Provision(env *pipeline.Env) error {
	if env.Shared == nil || env.Shared.Resources == nil {
		return errors.New("needs the resource registry")
	}
	ns, ok := env.Shared.Resources.Lookup("", "v1", "namespaces")
	if !ok {
		return errors.New("namespaces are not served")
	}
	p.namespaces, p.prefix = ns, env.Shared.StoragePrefix
	return nil
}

// Validate implements admission.Validator.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	info := a.Info
	if info.Resource == "namespaces" && info.Subresource == "" {
		if a.Operation == admission.Delete && immortal[info.Name] {
			return apierrors.NewForbidden(a.Op.Resource.GroupResource(), info.Name, errors.New("this namespace may not be deleted"))
		}
		if a.Operation == admission.Delete {
			p.deleted.add(info.Name, time.Now())
		}
		return nil
	}
	if a.Operation != admission.Create || info.Namespace == "" || !a.Op.Resource.Namespaced {
		return nil
	}
	if info.APIGroup == "authorization.k8s.io" && info.Resource == "localsubjectaccessreviews" {
		return nil // kube's access review exemption: nothing is created
	}
	// As kube's plugin reads its informer: the watch cache answers
	// (resourceVersion "0"). A namespace it does not know yet is read live
	// from etcd, since it may have been created a moment ago, and so is one
	// it shows Active that was deleted here lately.
	ns := &corev1.Namespace{}
	key := p.namespaces.Key(p.prefix, "", info.Namespace)
	err := p.namespaces.Store.Get(ctx, key, store.GetOptions{ResourceVersion: "0"}, ns)
	if apierrors.IsNotFound(err) ||
		(err == nil && ns.Status.Phase == corev1.NamespaceActive && p.deleted.has(info.Namespace, time.Now())) {
		ns = &corev1.Namespace{}
		err = p.namespaces.Store.Get(ctx, key, store.GetOptions{}, ns)
	}
	if err != nil {
		return err // NotFound reads `namespaces "x" not found`, as kube's
	}
	if ns.Status.Phase == corev1.NamespaceTerminating {
		err := apierrors.NewForbidden(a.Op.Resource.GroupResource(), a.Op.Name,
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", info.Namespace))
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
			Type:    corev1.NamespaceTerminatingCause,
			Message: fmt.Sprintf("namespace %s is being terminated", info.Namespace),
			Field:   "metadata.namespace",
		})
		return err
	}
	return nil
}

// forceLiveLookupTTL is how long a deleted namespace is read live, kube's
// figure.
const forceLiveLookupTTL = 30 * time.Second

// maxDeleted bounds recentlyDeleted; past it, expired names go first and
// then the whole set (a live read too many is only slower).
const maxDeleted = 4096

type recentlyDeleted struct {
	mu    sync.Mutex
	names map[string]time.Time // name -> until
}

func (d *recentlyDeleted) add(name string, now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.names == nil {
		d.names = map[string]time.Time{}
	}
	if len(d.names) >= maxDeleted {
		for n, until := range d.names {
			if now.After(until) {
				delete(d.names, n)
			}
		}
		if len(d.names) >= maxDeleted {
			clear(d.names)
		}
	}
	d.names[name] = now.Add(forceLiveLookupTTL)
}

func (d *recentlyDeleted) has(name string, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	until, ok := d.names[name]
	if ok && now.After(until) {
		delete(d.names, name)
		return false
	}
	return ok
}

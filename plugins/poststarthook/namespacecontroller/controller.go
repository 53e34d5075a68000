package namespacecontroller

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/internal/pipeline"
)

// Controller is the hook instance.
type Controller struct {
	cfg       *Config
	log       *zap.Logger
	resources []schema.GroupVersionResource // namespaced, with deletecollection
}

var (
	_ pipeline.PostStartHook = (*Controller)(nil)
	_ pipeline.Provisioner   = (*Controller)(nil)
)

// Provision implements pipeline.Provisioner.
func (c *Controller) Provision(env *pipeline.Env) error {
	c.log = env.Log
	if env.Shared == nil || env.Shared.Resources == nil {
		return errors.New("needs the resource registry")
	}
	for _, res := range env.Shared.Resources.All() {
		if res.Namespaced && res.HasVerb("deletecollection") {
			c.resources = append(c.resources, res.GroupVersion.WithResource(res.Name))
		}
	}
	return nil
}

// Run starts the loop and returns: the controller is ready at once.
func (c *Controller) Run(ctx context.Context, env *pipeline.HookEnv) error {
	cs, err := kubernetes.NewForConfig(env.Loopback)
	if err != nil {
		return err
	}
	dc, err := dynamic.NewForConfig(env.Loopback)
	if err != nil {
		return err
	}
	go func() {
		t := time.NewTicker(c.cfg.Interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if err := c.sync(ctx, cs, dc); err != nil && ctx.Err() == nil {
				c.log.Warn("namespace controller", zap.Error(err))
			}
		}
	}()
	return nil
}

// sync empties each terminating namespace and finalizes the empty ones.
func (c *Controller) sync(ctx context.Context, cs kubernetes.Interface, dc dynamic.Interface) error {
	list, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{FieldSelector: "status.phase=Terminating"})
	if err != nil {
		return err
	}
	var errs []error
	for i := range list.Items {
		ns := &list.Items[i]
		if ns.DeletionTimestamp == nil {
			continue
		}
		if len(ns.Spec.Finalizers) == 0 {
			// Finalized already: remove it, as kube's controller does.
			uid := ns.UID
			err := cs.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				errs = append(errs, err)
			}
			continue
		}
		if !hasKubernetesFinalizer(ns) {
			continue
		}
		empty, err := c.empty(ctx, dc, ns.Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !empty {
			continue // objects held by finalizers go later
		}
		if err := finalize(ctx, cs, ns); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, err)
			continue
		}
		c.log.Info("namespace finalized", zap.String("namespace", ns.Name))
	}
	return errors.Join(errs...)
}

// empty deletes what is left in namespace and reports whether it is empty.
func (c *Controller) empty(ctx context.Context, dc dynamic.Interface, namespace string) (bool, error) {
	empty := true
	for _, gvr := range c.resources {
		ri := dc.Resource(gvr).Namespace(namespace)
		if err := ri.DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &background}, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return false, err
		}
		left, err := ri.List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return false, err
		}
		if len(left.Items) > 0 {
			empty = false
		}
	}
	return empty, nil
}

// background is the policy kube's namespace controller deletes with.
var background = metav1.DeletePropagationBackground

func hasKubernetesFinalizer(ns *corev1.Namespace) bool {
	for _, f := range ns.Spec.Finalizers {
		if f == corev1.FinalizerKubernetes {
			return true
		}
	}
	return false
}

// finalize removes the kubernetes finalizer through /finalize; with no
// finalizer left the server removes the namespace.
func finalize(ctx context.Context, cs kubernetes.Interface, ns *corev1.Namespace) error {
	out := ns.DeepCopy()
	out.Spec.Finalizers = nil
	for _, f := range ns.Spec.Finalizers {
		if f != corev1.FinalizerKubernetes {
			out.Spec.Finalizers = append(out.Spec.Finalizers, f)
		}
	}
	_, err := cs.CoreV1().Namespaces().Finalize(ctx, out, metav1.UpdateOptions{})
	return err
}

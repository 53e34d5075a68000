package serviceaccountcontroller

import (
	"context"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"

	"github.com/kpipe/kpipe/internal/admission"
	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Controller is the hook instance.
type Controller struct {
	cfg        *Config
	log        *zap.Logger
	objects    *admission.Objects
	namespaces *api.Resource
	accounts   *api.Resource
}

var (
	_ pipeline.PostStartHook = (*Controller)(nil)
	_ pipeline.Provisioner   = (*Controller)(nil)
)

// Provision implements pipeline.Provisioner.
func (c *Controller) Provision(env *pipeline.Env) error {
	c.log = env.Log
	o, err := admission.NewObjects(env)
	if err != nil {
		return err
	}
	c.objects = o
	if c.namespaces, err = o.Resource("", "v1", "namespaces"); err != nil {
		return err
	}
	c.accounts, err = o.Resource("", "v1", "serviceaccounts")
	return err
}

// Run starts the watches and the worker and returns: the controller is
// ready at once. Namespaces are checked when they appear or change, when
// one of their accounts is deleted, and every resync period.
func (c *Controller) Run(ctx context.Context, env *pipeline.HookEnv) error {
	cs, err := kubernetes.NewForConfig(env.Loopback)
	if err != nil {
		return err
	}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	go c.objects.Watch(ctx, c.namespaces, func(ev watch.Event) {
		if ns, ok := ev.Object.(*corev1.Namespace); ok && ev.Type != watch.Deleted {
			q.Add(ns.Name)
		}
	})
	go c.objects.Watch(ctx, c.accounts, func(ev watch.Event) {
		if sa, ok := ev.Object.(*corev1.ServiceAccount); ok && ev.Type == watch.Deleted {
			q.Add(sa.Namespace)
		}
	})
	go func() {
		t := time.NewTicker(c.cfg.Resync)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				q.ShutDown()
				return
			case <-t.C:
				list := &corev1.NamespaceList{}
				if err := c.objects.List(ctx, c.namespaces, "", list); err == nil {
					for _, ns := range list.Items {
						q.Add(ns.Name)
					}
				}
			}
		}
	}()
	go func() {
		for {
			ns, quit := q.Get()
			if quit {
				return
			}
			if err := c.sync(ctx, cs, ns); err != nil && ctx.Err() == nil {
				c.log.Warn("service account controller", zap.String("namespace", ns), zap.Error(err))
				q.AddRateLimited(ns)
			} else {
				q.Forget(ns)
			}
			q.Done(ns)
		}
	}()
	return nil
}

// sync creates the missing accounts of one active namespace.
func (c *Controller) sync(ctx context.Context, cs kubernetes.Interface, name string) error {
	ns := &corev1.Namespace{}
	if err := c.objects.Get(ctx, c.namespaces, "", name, ns); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	if ns.Status.Phase != corev1.NamespaceActive || ns.DeletionTimestamp != nil {
		return nil
	}
	for _, sa := range c.cfg.ServiceAccounts {
		err := c.objects.Get(ctx, c.accounts, name, sa, &corev1.ServiceAccount{})
		if err == nil {
			continue
		}
		if !apierrors.IsNotFound(err) {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err = cs.CoreV1().ServiceAccounts(name).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
		cancel()
		if err != nil && !apierrors.IsAlreadyExists(err) {
			if apierrors.IsForbidden(err) {
				return nil // the namespace began terminating
			}
			return err
		}
	}
	return nil
}

package serviceaccountcontroller

import (
	"context"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/kpipe/kpipe/internal/pipeline"
)

// Controller is the hook instance.
type Controller struct {
	cfg *Config
	log *zap.Logger
}

var (
	_ pipeline.PostStartHook = (*Controller)(nil)
	_ pipeline.Provisioner   = (*Controller)(nil)
)

// Provision implements pipeline.Provisioner.
func (c *Controller) Provision(env *pipeline.Env) error {
	c.log = env.Log
	return nil
}

// Run starts the informers and the worker and returns once the caches
// have synced.
func (c *Controller) Run(ctx context.Context, env *pipeline.HookEnv) error {
	cs, err := kubernetes.NewForConfig(env.Loopback)
	if err != nil {
		return err
	}
	f := informers.NewSharedInformerFactory(cs, c.cfg.Resync)
	nsInf := f.Core().V1().Namespaces().Informer()
	saInf := f.Core().V1().ServiceAccounts().Informer()
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	enqueue := func(obj any) {
		if ns, ok := obj.(*corev1.Namespace); ok {
			q.Add(ns.Name)
		}
	}
	if _, err := nsInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return err
	}
	if _, err := saInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if sa, ok := obj.(*corev1.ServiceAccount); ok {
				q.Add(sa.Namespace)
			}
		},
	}); err != nil {
		return err
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), nsInf.HasSynced, saInf.HasSynced) {
		q.ShutDown()
		return ctx.Err()
	}
	go func() {
		<-ctx.Done()
		q.ShutDown()
	}()
	go func() {
		for {
			ns, quit := q.Get()
			if quit {
				return
			}
			if err := c.sync(ctx, cs, nsInf.GetIndexer(), saInf.GetIndexer(), ns); err != nil && ctx.Err() == nil {
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
func (c *Controller) sync(ctx context.Context, cs kubernetes.Interface, namespaces, accounts cache.Indexer, name string) error {
	obj, ok, err := namespaces.GetByKey(name)
	if err != nil || !ok {
		return err
	}
	if ns := obj.(*corev1.Namespace); ns.Status.Phase != corev1.NamespaceActive || ns.DeletionTimestamp != nil {
		return nil
	}
	for _, sa := range c.cfg.ServiceAccounts {
		if _, ok, _ := accounts.GetByKey(name + "/" + sa); ok {
			continue
		}
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := cs.CoreV1().ServiceAccounts(name).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
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

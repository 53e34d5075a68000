package resourcequotacontroller

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/kpipe/kpipe/internal/admission"
	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/quota"
)

// Controller is the hook instance.
type Controller struct {
	cfg       *Config
	log       *zap.Logger
	objects   *admission.Objects
	resources []*api.Resource // namespaced, served
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
	for _, res := range env.Shared.Resources.All() {
		if res.Namespaced && res.HasVerb("list") {
			c.resources = append(c.resources, res)
		}
	}
	return nil
}

// Run starts the watches and workers and returns: the controller is
// ready at once. It watches storage directly, so its watches keep no
// pipeline generation alive.
func (c *Controller) Run(ctx context.Context, env *pipeline.HookEnv) error {
	cs, err := kubernetes.NewForConfig(env.Loopback)
	if err != nil {
		return err
	}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	var mu sync.Mutex
	byNamespace := map[string]map[string]bool{} // quota names
	quotas, err := c.objects.Resource("", "v1", "resourcequotas")
	if err != nil {
		return err
	}
	// A quota is recalculated when new or when its spec changed; the
	// admission plugin's charges (status updates) must not trigger it.
	go c.objects.Watch(ctx, quotas, func(ev watch.Event) {
		rq, ok := ev.Object.(*corev1.ResourceQuota)
		if !ok {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if ev.Type == watch.Deleted {
			delete(byNamespace[rq.Namespace], rq.Name)
			return
		}
		if byNamespace[rq.Namespace] == nil {
			byNamespace[rq.Namespace] = map[string]bool{}
		}
		byNamespace[rq.Namespace][rq.Name] = true
		if ev.Type == watch.Added || needsSync(rq) {
			q.Add(rq.Namespace + "/" + rq.Name)
		}
	})
	// A deleted object, or a pod that finished, releases its usage.
	release := func(ns string) {
		mu.Lock()
		defer mu.Unlock()
		for name := range byNamespace[ns] {
			q.Add(ns + "/" + name)
		}
	}
	for _, name := range []string{"pods", "services", "configmaps", "secrets", "persistentvolumeclaims"} {
		res, err := c.objects.Resource("", "v1", name)
		if err != nil {
			continue
		}
		go c.objects.Watch(ctx, res, func(ev watch.Event) {
			m, err := meta.Accessor(ev.Object)
			if err != nil {
				return
			}
			pod, isPod := ev.Object.(*corev1.Pod)
			if ev.Type == watch.Deleted || isPod && ev.Type == watch.Modified && finished(pod) {
				release(m.GetNamespace())
			}
		})
	}
	go func() {
		t := time.NewTicker(c.cfg.Resync)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				q.ShutDown()
				return
			case <-t.C:
				mu.Lock()
				for ns, names := range byNamespace {
					for name := range names {
						q.Add(ns + "/" + name)
					}
				}
				mu.Unlock()
			}
		}
	}()
	for i := 0; i < c.cfg.Workers; i++ {
		go c.work(ctx, cs, q)
	}
	return nil
}

func (c *Controller) work(ctx context.Context, cs kubernetes.Interface, q workqueue.TypedRateLimitingInterface[string]) {
	for {
		key, quit := q.Get()
		if quit {
			return
		}
		if err := c.sync(ctx, cs, key); err != nil && ctx.Err() == nil {
			if !apierrors.IsConflict(err) {
				c.log.Warn("quota controller", zap.String("quota", key), zap.Error(err))
			}
			q.AddRateLimited(key)
		} else {
			q.Forget(key)
		}
		q.Done(key)
	}
}

func finished(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// needsSync reports a quota whose status does not yet reflect its spec.
func needsSync(rq *corev1.ResourceQuota) bool {
	if !quota.Equal(rq.Spec.Hard, rq.Status.Hard) {
		return true
	}
	for n := range rq.Spec.Hard {
		if _, ok := rq.Status.Used[n]; !ok {
			return true
		}
	}
	return false
}

// sync recalculates one quota from the objects in its namespace and
// writes its status, conditional on the quota read first.
func (c *Controller) sync(ctx context.Context, cs kubernetes.Interface, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	rq, err := cs.CoreV1().ResourceQuotas(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	used, err := c.usage(ctx, rq)
	if err != nil {
		return err
	}
	if quota.Equal(rq.Status.Hard, rq.Spec.Hard) && quota.Equal(rq.Status.Used, used) {
		return nil
	}
	rq.Status.Hard = rq.Spec.Hard
	rq.Status.Used = used
	_, err = cs.CoreV1().ResourceQuotas(ns).UpdateStatus(ctx, rq, metav1.UpdateOptions{})
	return err
}

// usage sums what the namespace's objects use of the quota's hard names.
func (c *Controller) usage(ctx context.Context, rq *corev1.ResourceQuota) (corev1.ResourceList, error) {
	hard := quota.NamesOf(rq.Spec.Hard)
	used := corev1.ResourceList{}
	for _, n := range hard {
		used[n] = *zero(rq.Spec.Hard[n])
	}
	for _, res := range c.resources {
		names := quota.NamesOf(quota.Mask(rq.Spec.Hard, quota.Names(res)))
		if len(names) == 0 {
			continue
		}
		list := res.NewList()
		if err := c.objects.List(ctx, res, rq.Namespace, list); err != nil {
			return nil, err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, err
		}
		for _, obj := range items {
			if quota.Matches(rq, res, obj) {
				used = quota.Add(used, quota.Mask(quota.Usage(res, obj), names))
			}
		}
	}
	return used, nil
}

// zero is a zero quantity in the format of q.
func zero(q resource.Quantity) *resource.Quantity {
	return resource.NewQuantity(0, q.Format)
}

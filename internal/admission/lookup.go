package admission

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/storage/informer"
	"github.com/kpipe/kpipe/internal/storage/store"
)

// Objects reads served objects straight from storage, for plugins that
// look up namespaces, service accounts, limit ranges or quotas.
type Objects struct {
	resources *api.Registry
	prefix    string
	ctx       context.Context // the pipeline generation's: informers end with it
	log       *zap.Logger
}

// NewObjects returns an Objects over the server's resources.
func NewObjects(env *pipeline.Env) (*Objects, error) {
	if env.Shared == nil || env.Shared.Resources == nil {
		return nil, fmt.Errorf("needs the resource registry")
	}
	return &Objects{resources: env.Shared.Resources, prefix: env.Shared.StoragePrefix, ctx: env.Context, log: env.Log}, nil
}

// Informer starts an in-memory mirror of res's objects in every
// namespace, fed by a storage watch (through the watch cache where it is
// on) until the pipeline generation that provisioned o retires. Readers
// wait for Synced before trusting it.
func (o *Objects) Informer(res *api.Resource) *informer.Informer {
	inf := informer.New(informer.Source{Store: res.Store, Key: res.CollectionKey(o.prefix, ""), NewList: res.NewList}, o.log)
	ctx := o.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	go inf.Run(ctx)
	return inf
}

// Resource returns a served resource.
func (o *Objects) Resource(group, version, resource string) (*api.Resource, error) {
	res, ok := o.resources.Lookup(group, version, resource)
	if !ok {
		return nil, fmt.Errorf("%s is not served", resource)
	}
	return res, nil
}

// Get reads one object into out.
func (o *Objects) Get(ctx context.Context, res *api.Resource, namespace, name string, out runtime.Object) error {
	return res.Store.Get(ctx, res.Key(o.prefix, namespace, name), store.GetOptions{}, out)
}

// List reads a namespace's objects (every namespace's with "") into list.
func (o *Objects) List(ctx context.Context, res *api.Resource, namespace string, list runtime.Object) error {
	return res.Store.GetList(ctx, res.CollectionKey(o.prefix, namespace), store.ListOptions{Recursive: true}, list)
}

// Key is an object's storage key.
func (o *Objects) Key(res *api.Resource, namespace, name string) string {
	return res.Key(o.prefix, namespace, name)
}

// Client is a loopback clientset a plugin gets from its post-start hook,
// for writes that must go through the whole pipeline (kube's plugins use
// a client for them too). It is nil until the listener serves.
type Client struct {
	cs atomic.Pointer[kubernetes.Clientset]
}

// Get returns the clientset, or nil before the hook ran.
func (c *Client) Get() kubernetes.Interface {
	if cs := c.cs.Load(); cs != nil {
		return cs
	}
	return nil
}

// Hook is the post-start hook that fills the client, named name.
func (c *Client) Hook(name string) pipeline.NamedHook {
	return pipeline.NamedHook{Name: name, Hook: clientHook{c}}
}

type clientHook struct{ c *Client }

func (h clientHook) Run(_ context.Context, env *pipeline.HookEnv) error {
	cs, err := kubernetes.NewForConfig(env.Loopback)
	if err != nil {
		return err
	}
	h.c.cs.Store(cs)
	return nil
}

// Watch calls fn with every event on res's objects in every namespace,
// starting with an ADDED event for each existing object, until ctx ends.
// It watches storage directly, not through the pipeline: a controller's
// long-running watch must not keep a retired pipeline generation alive.
// A broken watch starts over from the last revision seen.
func (o *Objects) Watch(ctx context.Context, res *api.Resource, fn func(watch.Event)) {
	rv := ""
	initial := true
	for ctx.Err() == nil {
		w, err := res.Store.Watch(ctx, res.CollectionKey(o.prefix, ""), store.ListOptions{
			ResourceVersion: rv, Recursive: true, SendInitialEvents: &initial,
		})
		if err != nil {
			rv, initial = "", true
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				rv, initial = "", true // e.g. compacted: list again
				break
			}
			if m, err := meta.Accessor(ev.Object); err == nil {
				rv, initial = m.GetResourceVersion(), false
			}
			if ev.Type != watch.Bookmark {
				fn(ev)
			}
		}
		w.Stop()
	}
}

// Prefix is the storage key prefix (/registry by default).
func (o *Objects) Prefix() string { return o.prefix }

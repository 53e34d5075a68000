package api

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kpipe/kpipe/internal/storage/cacher"
	"github.com/kpipe/kpipe/internal/storage/store"
)

// StorageOptions shape each resource's storage.
type StorageOptions struct {
	// Store are options for every store.
	Store []store.Option
	// Encrypt returns a resource's transformer: encryption at rest (nil:
	// plaintext). May be nil.
	Encrypt func(schema.GroupResource) store.Transformer
	// Cache reports whether a resource is served through the watch cache.
	// May be nil: no caches.
	Cache func(schema.GroupResource) bool
}

// cacheIndexes are the fields the watch caches index, kube's: pods by
// spec.nodeName (every kubelet lists and watches its node's pods). Every
// cache also serves a namespace from its range of keys.
var cacheIndexes = map[schema.GroupResource][]string{
	{Resource: "pods"}: {"spec.nodeName"},
}

// AttachStorage gives every resource its etcd store under prefix, behind a
// watch cache where o.Cache says so. Objects are stored as JSON in their
// served version, as kube stores them. The returned function stops the
// caches; call it before closing the etcd client.
func (r *Registry) AttachStorage(client *clientv3.Client, prefix string, reg prometheus.Registerer, log *zap.Logger, o StorageOptions) (stop func()) {
	var caches []*cacher.Cacher
	var cm *cacher.Metrics
	if o.Cache != nil {
		cm = cacher.NewMetrics(reg)
	}
	for _, res := range r.list {
		if res.Create != nil {
			continue // virtual: nothing to store
		}
		codec := store.NewJSONCodec(Scheme, res.GroupVersion)
		opts := append([]store.Option{store.WithRegisterer(reg), store.WithLogger(log.Named(res.Name)), store.WithKeyRoot(prefix)}, o.Store...)
		gr := res.GroupResource()
		if o.Encrypt != nil {
			if t := o.Encrypt(gr); t != nil {
				opts = append(opts, store.WithTransformer(t))
			}
		}
		st := store.New(client, codec, res.New, res.NewList, res.StoragePrefix(prefix), gr, opts...)
		res.Store = st
		if o.Cache != nil && o.Cache(gr) {
			var copts []cacher.Option
			for _, f := range cacheIndexes[gr] {
				copts = append(copts, cacher.WithIndex(f, func(o runtime.Object) string { return res.FieldAttrs(o)[f] }))
			}
			c := cacher.New(st, log.Named(res.Name).Named("cache"), cm, copts...)
			caches = append(caches, c)
			res.Store = c
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	go cacher.ReleaseAfterFill(ctx, caches)
	return func() {
		cancel()
		for _, c := range caches {
			c.Stop()
		}
	}
}

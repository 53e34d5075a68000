package api

import (
	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/kpipe/kpipe/internal/storage/store"
)

// AttachStorage gives every resource its etcd store under prefix. Objects
// are stored as JSON in their served version, as kube stores them.
func (r *Registry) AttachStorage(client *clientv3.Client, prefix string, reg prometheus.Registerer, log *zap.Logger) {
	for _, res := range r.list {
		if res.Create != nil {
			continue // virtual: nothing to store
		}
		codec := store.NewJSONCodec(Scheme, res.GroupVersion)
		res.Store = store.New(client, codec, res.New, res.NewList, res.StoragePrefix(prefix), res.GroupResource(),
			store.WithRegisterer(reg), store.WithLogger(log.Named(res.Name)))
	}
}

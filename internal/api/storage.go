package api

import (
	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/kpipe/kpipe/internal/storage/store"
)

// AttachStorage gives every resource its etcd store under prefix. Objects
// are stored as JSON in their served version, as kube stores them. opts
// apply to every store.
func (r *Registry) AttachStorage(client *clientv3.Client, prefix string, reg prometheus.Registerer, log *zap.Logger, opts ...store.Option) {
	for _, res := range r.list {
		codec := store.NewJSONCodec(Scheme, res.GroupVersion)
		o := append([]store.Option{store.WithRegisterer(reg), store.WithLogger(log.Named(res.Name))}, opts...)
		res.Store = store.New(client, codec, res.New, res.NewList, res.StoragePrefix(prefix), res.GroupResource(), o...)
	}
}

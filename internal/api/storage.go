package api

import (
	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kpipe/kpipe/internal/storage/store"
)

// AttachStorage gives every resource its etcd store under prefix. Objects
// are stored as JSON in their served version, as kube stores them, through
// the transformer that encrypt returns for the resource (nil: plaintext;
// encrypt may be nil).
func (r *Registry) AttachStorage(client *clientv3.Client, prefix string, reg prometheus.Registerer, log *zap.Logger, encrypt func(schema.GroupResource) store.Transformer) {
	for _, res := range r.list {
		codec := store.NewJSONCodec(Scheme, res.GroupVersion)
		opts := []store.Option{store.WithRegisterer(reg), store.WithLogger(log.Named(res.Name))}
		if encrypt != nil {
			if t := encrypt(res.GroupResource()); t != nil {
				opts = append(opts, store.WithTransformer(t))
			}
		}
		res.Store = store.New(client, codec, res.New, res.NewList, res.StoragePrefix(prefix), res.GroupResource(), opts...)
	}
}

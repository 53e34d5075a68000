package admission

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/storage/store"
)

// GetCached is Get at resourceVersion "0": from the watch cache's memory,
// as a kube plugin's lister reads. A miss may be an object too new for the
// cache; callers that must not refuse on it check with Get.
func (o *Objects) GetCached(ctx context.Context, res *api.Resource, namespace, name string, out runtime.Object) error {
	return res.Store.Get(ctx, res.Key(o.prefix, namespace, name), store.GetOptions{ResourceVersion: "0"}, out)
}

// ListCached is List at resourceVersion "0": the watch cache answers from
// memory, as a kube plugin's informer would, without asking etcd for its
// current revision first. The answer may lag etcd by the cache's delay.
func (o *Objects) ListCached(ctx context.Context, res *api.Resource, namespace string, list runtime.Object) error {
	return res.Store.GetList(ctx, res.CollectionKey(o.prefix, namespace), store.ListOptions{Recursive: true, ResourceVersion: "0"}, list)
}

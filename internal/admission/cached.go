package admission

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/storage/store"
)

// ListCached is List at resourceVersion "0": the watch cache answers from
// memory, as a kube plugin's informer would, without asking etcd for its
// current revision first. The answer may lag etcd by the cache's delay.
func (o *Objects) ListCached(ctx context.Context, res *api.Resource, namespace string, list runtime.Object) error {
	return res.Store.GetList(ctx, res.CollectionKey(o.prefix, namespace), store.ListOptions{Recursive: true, ResourceVersion: "0"}, list)
}

package podsecurity

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/storage/store"
)

// storage reads namespaces and pods as kube's plugin reads them through
// its informers: from the watch cache (resourceVersion "0").
type storage struct {
	prefix     string
	namespaces *api.Resource
	pods       *api.Resource
}

// GetNamespace implements NamespaceGetter. A namespace the cache does not
// have yet (created a moment ago) is read from etcd, as kube falls back
// from its lister to a live read.
func (s *storage) GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	key := s.namespaces.Key(s.prefix, "", name)
	ns := &corev1.Namespace{}
	err := s.namespaces.Store.Get(ctx, key, store.GetOptions{ResourceVersion: "0"}, ns)
	if apierrors.IsNotFound(err) {
		ns = &corev1.Namespace{}
		err = s.namespaces.Store.Get(ctx, key, store.GetOptions{}, ns)
	}
	if err != nil {
		return nil, err
	}
	return ns, nil
}

// ListPods implements PodLister.
func (s *storage) ListPods(ctx context.Context, namespace string) ([]*corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := s.pods.Store.GetList(ctx, s.pods.CollectionKey(s.prefix, namespace), store.ListOptions{ResourceVersion: "0", Recursive: true}, list); err != nil {
		return nil, err
	}
	pods := make([]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		pods[i] = &list.Items[i]
	}
	return pods, nil
}

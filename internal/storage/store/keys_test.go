package store

import (
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// A key with a "." or ".." segment never reaches etcd, whatever the verb:
// it is kube's storage error, a 500 with no reason quoting the key without
// the etcd prefix. The namespace "." of a request path would otherwise be
// every namespace's prefix.
func TestDotSegmentKeys(t *testing.T) {
	t.Parallel()
	p := uniquePrefix(t, "configmaps")
	root := strings.TrimSuffix(p, "/configmaps")
	s := New(cli, codec(),
		func() runtime.Object { return &corev1.ConfigMap{} },
		func() runtime.Object { return &corev1.ConfigMapList{} },
		p, configMaps, WithKeyRoot(root))
	ctx := testCtx(t)
	// Objects in two namespaces that a collapsed key would reach.
	mustCreate(t, s, key(p, "a", "x"), cm("a", "x", nil, nil))
	mustCreate(t, s, key(p, "b", "x"), cm("b", "x", nil, nil))

	noop := func(in runtime.Object, _ ResponseMeta) (runtime.Object, *time.Duration, error) { return in, nil, nil }
	tests := []struct {
		name string
		run  func() error
		msg  string
	}{
		{"get in namespace .", func() error { return s.Get(ctx, p+"/./x", GetOptions{}, &corev1.ConfigMap{}) }, `invalid key: "/configmaps/./x"`},
		{"get named ..", func() error { return s.Get(ctx, p+"/a/..", GetOptions{}, &corev1.ConfigMap{}) }, `invalid key: "/configmaps/a/.."`},
		{"get named .", func() error { return s.Get(ctx, p+"/a/.", GetOptions{}, &corev1.ConfigMap{}) }, `invalid key: "/configmaps/a/."`},
		{"list of namespace .", func() error {
			return s.GetList(ctx, p+"/./", ListOptions{Recursive: true}, &corev1.ConfigMapList{})
		}, `invalid key: "/configmaps/."`},
		{"list of namespace ..", func() error {
			return s.GetList(ctx, p+"/../", ListOptions{Recursive: true}, &corev1.ConfigMapList{})
		}, `invalid key: "/configmaps/.."`},
		{"list of namespace . without the slash", func() error {
			return s.GetList(ctx, p+"/.", ListOptions{Recursive: true}, &corev1.ConfigMapList{})
		}, `invalid key: "/configmaps/."`},
		{"watch of namespace .", func() error {
			w, err := s.Watch(ctx, p+"/./", ListOptions{Recursive: true})
			if w != nil {
				w.Stop()
			}
			return err
		}, `invalid key: "/configmaps/."`},
		{"count of namespace .", func() error { _, err := s.Count(ctx, p+"/./"); return err }, `invalid key: "/configmaps/."`},
		{"create in namespace .", func() error { return s.Create(ctx, p+"/./y", cm(".", "y", nil, nil), nil, 0) }, `invalid key: "/configmaps/./y"`},
		{"update in namespace ..", func() error {
			return s.GuaranteedUpdate(ctx, p+"/../x", &corev1.ConfigMap{}, true, nil, noop)
		}, `invalid key: "/configmaps/../x"`},
		{"delete in namespace .", func() error { return s.Delete(ctx, p+"/./x", &corev1.ConfigMap{}, nil, nil) }, `invalid key: "/configmaps/./x"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantStatus(t, tc.run(), http.StatusInternalServerError, metav1.StatusReasonUnknown, tc.msg)
		})
	}

	// Both objects are still there, and nothing was created.
	list := &corev1.ConfigMapList{}
	if err := s.GetList(ctx, p+"/", ListOptions{Recursive: true}, list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 {
		t.Errorf("after the refused keys: %d objects, want 2", len(list.Items))
	}
}

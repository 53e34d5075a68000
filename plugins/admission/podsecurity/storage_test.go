package podsecurity

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/storage/store"
)

// cacheBehind is a store whose watch cache (resourceVersion "0") has not
// seen the namespace yet, while etcd has.
type cacheBehind struct {
	store.Interface
	reads []string // the resourceVersion of each read
}

func (s *cacheBehind) Get(_ context.Context, key string, opts store.GetOptions, out runtime.Object) error {
	s.reads = append(s.reads, opts.ResourceVersion)
	if opts.ResourceVersion == "0" {
		return apierrors.NewNotFound(corev1.Resource("namespaces"), "fresh")
	}
	*out.(*corev1.Namespace) = *ns("fresh", "enforce", "restricted")
	return nil
}

func (s *cacheBehind) GetList(_ context.Context, key string, opts store.ListOptions, list runtime.Object) error {
	s.reads = append(s.reads, "list "+key+" rv="+opts.ResourceVersion)
	list.(*corev1.PodList).Items = []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, {ObjectMeta: metav1.ObjectMeta{Name: "b"}}}
	return nil
}

func TestStorageReads(t *testing.T) {
	st := &cacheBehind{}
	s := &storage{
		prefix:     "/registry",
		namespaces: &api.Resource{GroupVersion: schema.GroupVersion{Version: "v1"}, Name: "namespaces", Store: st},
		pods:       &api.Resource{GroupVersion: schema.GroupVersion{Version: "v1"}, Name: "pods", Namespaced: true, Store: st},
	}
	got, err := s.GetNamespace(context.Background(), "fresh")
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Errorf("namespace %+v", got)
	}
	pods, err := s.ListPods(context.Background(), "fresh")
	if err != nil || len(pods) != 2 || pods[1].Name != "b" {
		t.Fatalf("pods %v %v", pods, err)
	}
	// The cache first, then etcd for a namespace it lacks; pods from the cache.
	if want := []string{"0", "", "list /registry/pods/fresh/ rv=0"}; !reflect.DeepEqual(st.reads, want) {
		t.Errorf("reads %q, want %q", st.reads, want)
	}
}

package cacher

import (
	"context"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpipe/kpipe/internal/storage/store"
)

// A key with a "." or ".." segment is never answered from memory, where
// it would be a NotFound (or, cleaned, another namespace's objects): the
// store refuses it with kube's storage error.
func TestDotSegmentKeysGoToTheStore(t *testing.T) {
	s, c := newPair(t)
	ctx := context.Background()
	if err := s.Create(ctx, key(s, "a", "x"), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "x"}}, nil, 0); err != nil {
		t.Fatal(err)
	}
	p := s.Prefix()
	tests := []struct {
		name string
		run  func() error
	}{
		{"get in .", func() error { return c.Get(ctx, p+"./x", store.GetOptions{}, &corev1.ConfigMap{}) }},
		{"get at resourceVersion 0 in ..", func() error {
			return c.Get(ctx, p+"a/../a/x", store.GetOptions{ResourceVersion: "0"}, &corev1.ConfigMap{})
		}},
		{"encodable get in .", func() error {
			_, err := c.GetEncodable(ctx, p+"./x", store.GetOptions{}, &corev1.ConfigMap{})
			return err
		}},
		{"list of .", func() error {
			return c.GetList(ctx, p+"./", store.ListOptions{Recursive: true}, &corev1.ConfigMapList{})
		}},
		{"list of .. at resourceVersion 0", func() error {
			return c.GetList(ctx, p+"../", store.ListOptions{Recursive: true, ResourceVersion: "0"}, &corev1.ConfigMapList{})
		}},
		{"watch of .", func() error {
			w, err := c.Watch(ctx, p+"./", store.ListOptions{Recursive: true})
			if w != nil {
				w.Stop()
			}
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			se, ok := err.(*apierrors.StatusError)
			if !ok || se.ErrStatus.Code != http.StatusInternalServerError || se.ErrStatus.Reason != metav1.StatusReasonUnknown ||
				!strings.HasPrefix(se.ErrStatus.Message, "invalid key: ") {
				t.Fatalf("got %v, want kube's 500 invalid key", err)
			}
		})
	}
}

package api

import (
	"net/http"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Keys keep the namespace and name as given: "." and ".." stay segments
// (storage refuses them) instead of being cleaned into another prefix.
func TestKeys(t *testing.T) {
	cms := &Resource{Name: "configmaps", Namespaced: true}
	svcs := &Resource{Name: "services", StoragePath: "services/specs", Namespaced: true}
	nss := &Resource{Name: "namespaces"}
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"object", cms.Key("/registry", "a", "x"), "/registry/configmaps/a/x"},
		{"storage path", svcs.Key("/registry", "a", "x"), "/registry/services/specs/a/x"},
		{"cluster-scoped", nss.Key("/registry", "", "a"), "/registry/namespaces/a"},
		{"namespace .", cms.Key("/registry", ".", "x"), "/registry/configmaps/./x"},
		{"namespace ..", cms.Key("/registry", "..", "x"), "/registry/configmaps/../x"},
		{"name ..", cms.Key("/registry", "a", ".."), "/registry/configmaps/a/.."},
		{"cluster-scoped name ..", nss.Key("/registry", "", ".."), "/registry/namespaces/.."},
		{"collection", cms.CollectionKey("/registry", "a"), "/registry/configmaps/a/"},
		{"every namespace", cms.CollectionKey("/registry", ""), "/registry/configmaps/"},
		{"collection in .", cms.CollectionKey("/registry", "."), "/registry/configmaps/./"},
		{"collection in ..", cms.CollectionKey("/registry", ".."), "/registry/configmaps/../"},
		{"prefix with a trailing slash", cms.CollectionKey("/registry/", "a"), "/registry/configmaps/a/"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
}

// A name from a request path that is no path segment is kube's 400
// "Name parameter invalid", worded as its registry's key functions word it.
func TestRequestKey(t *testing.T) {
	cms := &Resource{Name: "configmaps", Namespaced: true}
	tests := []struct {
		name, objName, msg string
	}{
		{"dot", ".", `Name parameter invalid: ".": may not be '.'`},
		{"dot-dot", "..", `Name parameter invalid: "..": may not be '..'`},
		{"slash", "a/b", `Name parameter invalid: "a/b": may not contain '/'`},
		{"percent", "a%b", `Name parameter invalid: "a%b": may not contain '%'`},
		{"slash and percent", "a/%b", `Name parameter invalid: "a/%b": may not contain '/';may not contain '%'`},
		{"fine", "a..b", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key, err := cms.RequestKey("/registry", "a", tc.objName)
			if tc.msg == "" {
				if err != nil || key != "/registry/configmaps/a/"+tc.objName {
					t.Fatalf("got %q %v", key, err)
				}
				return
			}
			se, ok := err.(*apierrors.StatusError)
			if !ok || se.ErrStatus.Code != http.StatusBadRequest || se.ErrStatus.Reason != metav1.StatusReasonBadRequest || se.ErrStatus.Message != tc.msg {
				t.Fatalf("got %q %v, want a 400 BadRequest %q", key, err, tc.msg)
			}
		})
	}
}

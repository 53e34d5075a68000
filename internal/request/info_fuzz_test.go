package request

import (
	"reflect"
	"strings"
	"testing"
)

func FuzzResolve(f *testing.F) {
	seeds := []struct{ method, path, query string }{
		{"GET", "/api/v1/namespaces/default/pods/nginx", ""},
		{"GET", "/api/v1/pods", "watch=true&resourceVersion=42"},
		{"GET", "/api/v1/namespaces/default/pods", "fieldSelector=metadata.name%3Dnginx&labelSelector=app%3Dweb"},
		{"GET", "/api/v1/nodes", "watch=1&fieldSelector=metadata.name%3D%3Dn1%2Cspec.unschedulable%3Dfalse&limit=x"},
		{"DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterroles", "labelSelector=a%3Db"},
		{"PUT", "/api/v1/namespaces/foo/finalize", ""},
		{"PATCH", "/apis/apps/v1/namespaces/default/deployments/web/scale", ""},
		{"POST", "/api/v1/namespaces/default/pods/nginx/exec", "command=sh"},
		{"GET", "/api/v1/watch/namespaces/default/pods", "fieldSelector=metadata.name%3Dx"},
		{"GET", "/api/v1/proxy/namespaces/default/services/web/a/b", ""},
		{"GET", "/apis/apps/v1", ""},
		{"GET", "/openapi/v3/apis/apps/v1", ""},
		{"HEAD", "/healthz", "verbose"},
		{"GET", "//api//v1/namespaces//pods//", "watch=%C5%BF"},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.query)
	}

	r := NewResolver()
	f.Fuzz(func(t *testing.T, method, path, query string) {
		req := newReq(method, path, query)
		info, err := r.Resolve(req)
		if info == nil {
			t.Fatalf("nil info (err %v)", err)
		}
		again, err2 := r.Resolve(req)
		if !reflect.DeepEqual(info, again) || (err == nil) != (err2 == nil) {
			t.Fatalf("not deterministic: %+v vs %+v", info, again)
		}
		if info.Path != path {
			t.Fatalf("Path = %q, want %q", info.Path, path)
		}
		// Helpers must not panic on any result.
		ro, lr := info.IsReadOnly(), info.IsLongRunning()

		if !info.IsResourceRequest {
			if err != nil {
				t.Fatalf("non-resource request with error %v", err)
			}
			// Like kube, /apis/{group}/{version} keeps the prefix it saw.
			if info.APIPrefix != "" && !r.APIPrefixes[info.APIPrefix] {
				t.Fatalf("unknown prefix %q", info.APIPrefix)
			}
			want := RequestInfo{Path: path, Verb: strings.ToLower(method), APIPrefix: info.APIPrefix}
			if !reflect.DeepEqual(*info, want) {
				t.Fatalf("non-resource info %+v, want %+v", *info, want)
			}
			return
		}
		if err != nil {
			return // partial info, as in kube
		}

		if !r.APIPrefixes[info.APIPrefix] {
			t.Fatalf("unknown prefix %q", info.APIPrefix)
		}
		if info.APIVersion == "" || info.Resource == "" {
			t.Fatalf("resource request without version or resource: %+v", *info)
		}
		if !r.GrouplessAPIPrefixes[info.APIPrefix] && info.APIGroup == "" {
			t.Fatalf("grouped prefix without group: %+v", *info)
		}
		if r.GrouplessAPIPrefixes[info.APIPrefix] && info.APIGroup != "" {
			t.Fatalf("groupless prefix with group: %+v", *info)
		}
		if len(info.Parts) == 0 || info.Parts[0] != info.Resource {
			t.Fatalf("Parts %q do not start with resource %q", info.Parts, info.Resource)
		}
		if len(info.Parts) >= 2 && info.Name != info.Parts[1] {
			t.Fatalf("Name %q is not Parts[1] of %q", info.Name, info.Parts)
		}
		if info.Name == "" && info.Subresource != "" {
			t.Fatalf("subresource %q without a name", info.Subresource)
		}
		if info.Subresource != "" && (len(info.Parts) < 3 || info.Subresource != info.Parts[2]) {
			t.Fatalf("Subresource %q is not Parts[2] of %q", info.Subresource, info.Parts)
		}
		for _, s := range []string{info.APIGroup, info.APIVersion, info.Namespace, info.Resource, info.Name, info.Subresource} {
			if strings.Contains(s, "/") {
				t.Fatalf("field %q contains a slash: %+v", s, *info)
			}
		}
		switch info.Verb {
		case "get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "proxy", "":
		default:
			t.Fatalf("unexpected verb %q", info.Verb)
		}
		if (info.Verb == "list" || info.Verb == "deletecollection") && len(info.Parts) >= 2 {
			t.Fatalf("collection verb %q on named path %q", info.Verb, info.Parts)
		}
		if info.FieldSelector != "" || info.LabelSelector != "" {
			if info.Verb != "list" && info.Verb != "watch" && info.Verb != "deletecollection" {
				t.Fatalf("selectors kept for verb %q", info.Verb)
			}
		}
		if ro != (info.Verb == "get" || info.Verb == "list" || info.Verb == "watch") {
			t.Fatalf("IsReadOnly() = %v for verb %q", ro, info.Verb)
		}
		if info.Verb == "watch" && !lr {
			t.Fatal("watch is not long running")
		}
	})
}

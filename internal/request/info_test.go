package request

import (
	"net/http"
	"net/url"
	"reflect"
	"testing"
)

func newReq(method, path, rawQuery string) *http.Request {
	// Built by hand so odd paths (double slashes, empty) reach Resolve as is.
	return &http.Request{Method: method, URL: &url.URL{Path: path, RawQuery: rawQuery}}
}

// res builds the expected info for a resource request.
func res(verb, prefix, group, version, ns string, parts ...string) RequestInfo {
	i := RequestInfo{
		IsResourceRequest: true,
		Verb:              verb,
		APIPrefix:         prefix,
		APIGroup:          group,
		APIVersion:        version,
		Namespace:         ns,
		Parts:             parts,
	}
	switch {
	case len(parts) >= 3:
		i.Subresource = parts[2]
		fallthrough
	case len(parts) == 2:
		i.Name = parts[1]
		fallthrough
	case len(parts) == 1:
		i.Resource = parts[0]
	}
	return i
}

func core(verb, ns string, parts ...string) RequestInfo {
	return res(verb, "api", "", "v1", ns, parts...)
}

func nonRes(verb string) RequestInfo {
	return RequestInfo{Verb: verb}
}

func with(i RequestInfo, f func(*RequestInfo)) RequestInfo {
	f(&i)
	return i
}

func TestResolve(t *testing.T) {
	const rbac = "rbac.authorization.k8s.io"
	tests := []struct {
		name    string
		method  string
		path    string
		query   string
		want    RequestInfo // Path is filled in from path
		wantErr bool
	}{
		// Core group, namespaced.
		{name: "get pod", method: "GET", path: "/api/v1/namespaces/default/pods/nginx",
			want: core("get", "default", "pods", "nginx")},
		{name: "head pod", method: "HEAD", path: "/api/v1/namespaces/default/pods/nginx",
			want: core("get", "default", "pods", "nginx")},
		{name: "list pods in namespace", method: "GET", path: "/api/v1/namespaces/default/pods",
			want: core("list", "default", "pods")},
		{name: "head collection is list", method: "HEAD", path: "/api/v1/namespaces/default/configmaps",
			want: core("list", "default", "configmaps")},
		{name: "list pods across namespaces", method: "GET", path: "/api/v1/pods",
			want: core("list", "", "pods")},
		{name: "create pod", method: "POST", path: "/api/v1/namespaces/default/pods",
			want: core("create", "default", "pods")},
		{name: "update pod", method: "PUT", path: "/api/v1/namespaces/default/pods/nginx",
			want: core("update", "default", "pods", "nginx")},
		{name: "delete pod", method: "DELETE", path: "/api/v1/namespaces/default/pods/nginx",
			want: core("delete", "default", "pods", "nginx")},
		{name: "deletecollection with selectors", method: "DELETE", path: "/api/v1/namespaces/default/pods",
			query: "labelSelector=app%3Dweb&fieldSelector=status.phase%3DFailed",
			want: with(core("deletecollection", "default", "pods"), func(i *RequestInfo) {
				i.LabelSelector = "app=web"
				i.FieldSelector = "status.phase=Failed"
			})},
		{name: "deletecollection does not lift name", method: "DELETE", path: "/api/v1/namespaces/default/secrets",
			query: "fieldSelector=metadata.name%3Ds1",
			want: with(core("deletecollection", "default", "secrets"), func(i *RequestInfo) {
				i.FieldSelector = "metadata.name=s1"
			})},
		{name: "unknown method has no verb", method: "OPTIONS", path: "/api/v1/pods",
			want: core("", "", "pods")},

		// Subresources.
		{name: "pod status", method: "PUT", path: "/api/v1/namespaces/default/pods/nginx/status",
			want: core("update", "default", "pods", "nginx", "status")},
		{name: "pod log", method: "GET", path: "/api/v1/namespaces/default/pods/nginx/log", query: "follow=true&container=app",
			want: core("get", "default", "pods", "nginx", "log")},
		{name: "pod exec post", method: "POST", path: "/api/v1/namespaces/default/pods/nginx/exec", query: "command=sh&stdin=true",
			want: core("create", "default", "pods", "nginx", "exec")},
		{name: "pod exec websocket get", method: "GET", path: "/api/v1/namespaces/default/pods/nginx/exec", query: "command=ls",
			want: core("get", "default", "pods", "nginx", "exec")},
		{name: "pod eviction", method: "POST", path: "/api/v1/namespaces/default/pods/nginx/eviction",
			want: core("create", "default", "pods", "nginx", "eviction")},
		{name: "pod proxy keeps the rest in parts", method: "GET", path: "/api/v1/namespaces/default/pods/nginx/proxy/metrics/raw",
			want: core("get", "default", "pods", "nginx", "proxy", "metrics", "raw")},
		{name: "service proxy with port name", method: "GET", path: "/api/v1/namespaces/default/services/https:web:443/proxy/",
			want: core("get", "default", "services", "https:web:443", "proxy")},
		{name: "deployment scale get", method: "GET", path: "/apis/apps/v1/namespaces/default/deployments/web/scale",
			want: res("get", "apis", "apps", "v1", "default", "deployments", "web", "scale")},
		{name: "deployment scale patch", method: "PATCH", path: "/apis/apps/v1/namespaces/default/deployments/web/scale",
			want: res("patch", "apis", "apps", "v1", "default", "deployments", "web", "scale")},

		// Group resources.
		{name: "patch deployment", method: "PATCH", path: "/apis/apps/v1/namespaces/kube-system/deployments/coredns",
			want: res("patch", "apis", "apps", "v1", "kube-system", "deployments", "coredns")},
		{name: "custom resource", method: "GET", path: "/apis/example.com/v1alpha1/namespaces/ns1/widgets/w1",
			want: res("get", "apis", "example.com", "v1alpha1", "ns1", "widgets", "w1")},

		// Cluster scoped.
		{name: "get node", method: "GET", path: "/api/v1/nodes/node-1",
			want: core("get", "", "nodes", "node-1")},
		{name: "list nodes", method: "GET", path: "/api/v1/nodes",
			want: core("list", "", "nodes")},
		{name: "node status", method: "PATCH", path: "/api/v1/nodes/node-1/status",
			want: core("patch", "", "nodes", "node-1", "status")},
		{name: "get clusterrole", method: "GET", path: "/apis/" + rbac + "/v1/clusterroles/admin",
			want: res("get", "apis", rbac, "v1", "", "clusterroles", "admin")},
		{name: "deletecollection clusterroles", method: "DELETE", path: "/apis/" + rbac + "/v1/clusterroles",
			want: res("deletecollection", "apis", rbac, "v1", "", "clusterroles")},
		{name: "get crd", method: "GET", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/foos.example.com",
			want: res("get", "apis", "apiextensions.k8s.io", "v1", "", "customresourcedefinitions", "foos.example.com")},

		// The namespaces resource itself.
		{name: "list namespaces", method: "GET", path: "/api/v1/namespaces",
			want: core("list", "", "namespaces")},
		{name: "create namespace", method: "POST", path: "/api/v1/namespaces",
			want: core("create", "", "namespaces")},
		{name: "get namespace", method: "GET", path: "/api/v1/namespaces/foo",
			want: core("get", "foo", "namespaces", "foo")},
		{name: "delete namespace", method: "DELETE", path: "/api/v1/namespaces/foo",
			want: core("delete", "foo", "namespaces", "foo")},
		{name: "namespace status", method: "PUT", path: "/api/v1/namespaces/foo/status",
			want: core("update", "foo", "namespaces", "foo", "status")},
		{name: "namespace finalize", method: "PUT", path: "/api/v1/namespaces/foo/finalize",
			want: core("update", "foo", "namespaces", "foo", "finalize")},
		{name: "namespace named status", method: "GET", path: "/api/v1/namespaces/status",
			want: core("get", "status", "namespaces", "status")},

		// Deprecated /watch/ and /proxy/ path verbs.
		{name: "legacy watch namespaced ignores selectors", method: "GET", path: "/api/v1/watch/namespaces/default/pods",
			query: "fieldSelector=metadata.name%3Dnginx&labelSelector=a%3Db",
			want:  core("watch", "default", "pods")},
		{name: "legacy watch named", method: "GET", path: "/api/v1/watch/namespaces/default/pods/nginx",
			want: core("watch", "default", "pods", "nginx")},
		{name: "legacy watch cluster scoped", method: "GET", path: "/apis/" + rbac + "/v1/watch/clusterroles",
			want: res("watch", "apis", rbac, "v1", "", "clusterroles")},
		{name: "legacy watch all pods", method: "GET", path: "/api/v1/watch/pods",
			want: core("watch", "", "pods")},
		{name: "legacy watch namespaces", method: "GET", path: "/api/v1/watch/namespaces",
			want: core("watch", "", "namespaces")},
		{name: "legacy watch one namespace", method: "GET", path: "/api/v1/watch/namespaces/foo",
			want: core("watch", "foo", "namespaces", "foo")},
		{name: "legacy proxy has no subresource", method: "GET", path: "/api/v1/proxy/namespaces/default/pods/nginx/healthz",
			want: with(core("proxy", "default", "pods", "nginx", "healthz"), func(i *RequestInfo) { i.Subresource = "" })},
		{name: "legacy watch without resource", method: "GET", path: "/api/v1/watch",
			want:    RequestInfo{IsResourceRequest: true, Verb: "get", APIPrefix: "api", APIVersion: "v1"},
			wantErr: true},
		{name: "legacy proxy without resource", method: "GET", path: "/apis/apps/v1/proxy/",
			want:    RequestInfo{IsResourceRequest: true, Verb: "get", APIPrefix: "apis", APIGroup: "apps", APIVersion: "v1"},
			wantErr: true},

		// watch query parameter.
		{name: "watch=true", method: "GET", path: "/api/v1/namespaces/default/pods", query: "watch=true&resourceVersion=10",
			want: core("watch", "default", "pods")},
		{name: "watch=1", method: "GET", path: "/api/v1/pods", query: "watch=1",
			want: core("watch", "", "pods")},
		{name: "watch=false", method: "GET", path: "/api/v1/pods", query: "watch=false",
			want: core("list", "", "pods")},
		{name: "watch=FALSE", method: "GET", path: "/api/v1/pods", query: "watch=FALSE",
			want: core("list", "", "pods")},
		{name: "watch=0", method: "GET", path: "/api/v1/pods", query: "watch=0",
			want: core("list", "", "pods")},
		{name: "empty watch value means watch", method: "GET", path: "/api/v1/pods", query: "watch=",
			want: core("watch", "", "pods")},
		{name: "first watch value wins", method: "GET", path: "/api/v1/pods", query: "watch=false&watch=true",
			want: core("list", "", "pods")},
		{name: "watch ignored on named get", method: "GET", path: "/api/v1/namespaces/default/pods/nginx", query: "watch=true",
			want: core("get", "default", "pods", "nginx")},
		{name: "watch with selectors", method: "GET", path: "/apis/apps/v1/deployments", query: "watch=true&labelSelector=tier%3Dfront",
			want: with(res("watch", "apis", "apps", "v1", "", "deployments"), func(i *RequestInfo) { i.LabelSelector = "tier=front" })},

		// fieldSelector metadata.name lifting.
		{name: "list lifts name", method: "GET", path: "/api/v1/namespaces/default/pods", query: "fieldSelector=metadata.name%3Dnginx",
			want: with(core("list", "default", "pods"), func(i *RequestInfo) {
				i.Name = "nginx"
				i.FieldSelector = "metadata.name=nginx"
			})},
		{name: "watch lifts name with == among other terms", method: "GET", path: "/api/v1/nodes",
			query: "watch=1&fieldSelector=metadata.name%3D%3Dnode-1%2Cspec.unschedulable%3Dfalse",
			want: with(core("watch", "", "nodes"), func(i *RequestInfo) {
				i.Name = "node-1"
				i.FieldSelector = "metadata.name==node-1,spec.unschedulable=false"
			})},
		{name: "not-equal does not lift", method: "GET", path: "/api/v1/nodes", query: "fieldSelector=metadata.name%21%3Dnode-1",
			want: with(core("list", "", "nodes"), func(i *RequestInfo) { i.FieldSelector = "metadata.name!=node-1" })},
		{name: "unsafe path segment name is not lifted", method: "GET", path: "/api/v1/nodes", query: "fieldSelector=metadata.name%3D..",
			want: with(core("list", "", "nodes"), func(i *RequestInfo) { i.FieldSelector = "metadata.name=.." })},
		// Kube logs a bad selector and carries on as a plain list or watch: no
		// error and no name, but the raw selector is still reported.
		{name: "bad field selector is not an error", method: "GET", path: "/api/v1/namespaces/default/pods",
			query: "watch=true&fieldSelector=metadata.name",
			want:  with(core("watch", "default", "pods"), func(i *RequestInfo) { i.FieldSelector = "metadata.name" })},
		{name: "bad limit stops lifting", method: "GET", path: "/api/v1/namespaces/default/pods",
			query: "fieldSelector=metadata.name%3Dnginx&limit=ten",
			want:  with(core("list", "default", "pods"), func(i *RequestInfo) { i.FieldSelector = "metadata.name=nginx" })},
		{name: "legacy watch does not lift", method: "GET", path: "/api/v1/watch/pods", query: "fieldSelector=metadata.name%3Dnginx",
			want: core("watch", "", "pods")},

		// Non-resource requests.
		{name: "root", method: "GET", path: "/", want: nonRes("get")},
		{name: "empty path", method: "GET", path: "", want: nonRes("get")},
		{name: "healthz", method: "GET", path: "/healthz", want: nonRes("get")},
		{name: "readyz etcd", method: "GET", path: "/readyz/etcd", want: nonRes("get")},
		{name: "livez verbose", method: "GET", path: "/livez", query: "verbose", want: nonRes("get")},
		{name: "version", method: "GET", path: "/version", want: nonRes("get")},
		{name: "metrics", method: "GET", path: "/metrics", want: nonRes("get")},
		{name: "openapi v2", method: "GET", path: "/openapi/v2", want: nonRes("get")},
		{name: "openapi v3 group", method: "GET", path: "/openapi/v3/apis/apps/v1", want: nonRes("get")},
		{name: "api root", method: "GET", path: "/api", want: nonRes("get")},
		{name: "api version", method: "GET", path: "/api/v1", want: nonRes("get")},
		{name: "apis root", method: "GET", path: "/apis", want: nonRes("get")},
		{name: "apis group", method: "GET", path: "/apis/apps", want: nonRes("get")},
		// Kube has already recorded the prefix when it finds no resource here.
		{name: "apis group version", method: "GET", path: "/apis/apps/v1",
			want: with(nonRes("get"), func(i *RequestInfo) { i.APIPrefix = "apis" })},
		{name: "apis group version trailing slash", method: "GET", path: "/apis/apps/v1/",
			want: with(nonRes("get"), func(i *RequestInfo) { i.APIPrefix = "apis" })},
		{name: "non-resource post", method: "POST", path: "/healthz", want: nonRes("post")},
		{name: "non-resource head", method: "HEAD", path: "/version", want: nonRes("head")},
		{name: "non-resource custom method", method: "PROPFIND", path: "/healthz", want: nonRes("propfind")},
		{name: "pprof", method: "GET", path: "/debug/pprof/profile", query: "seconds=30", want: nonRes("get")},

		// Odd paths.
		{name: "trailing slash", method: "GET", path: "/api/v1/namespaces/default/pods/",
			want: core("list", "default", "pods")},
		{name: "extra outer slashes", method: "GET", path: "///api/v1/nodes/node-1///",
			want: core("get", "", "nodes", "node-1")},
		{name: "empty segment past the subresource is kept", method: "GET", path: "/api/v1/namespaces/default/pods/nginx/proxy//x",
			want: core("get", "default", "pods", "nginx", "proxy", "", "x")},
		{name: "empty version", method: "GET", path: "/api//v1/pods",
			want:    RequestInfo{IsResourceRequest: true, Verb: "get", APIPrefix: "api", Parts: []string{"v1", "pods"}, Resource: "v1", Name: "pods"},
			wantErr: true},
		{name: "empty group", method: "GET", path: "/apis//v1/deployments",
			want:    res("get", "apis", "", "v1", "", "deployments"),
			wantErr: true},
		{name: "empty namespace", method: "GET", path: "/api/v1/namespaces//pods",
			want:    core("get", "", "pods"),
			wantErr: true},
		{name: "empty name before subresource", method: "PUT", path: "/api/v1/namespaces/default/pods//status",
			want:    core("update", "default", "pods", "", "status"),
			wantErr: true},
		{name: "empty resource", method: "GET", path: "/api/v1//nginx",
			want:    core("get", "", "", "nginx"),
			wantErr: true},
	}
	r := NewResolver()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Resolve(newReq(tc.method, tc.path, tc.query))
			if (err != nil) != tc.wantErr {
				t.Fatalf("Resolve() error = %v, wantErr %v", err, tc.wantErr)
			}
			if got == nil {
				t.Fatal("Resolve() returned nil info")
			}
			want := tc.want
			want.Path = tc.path
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("Resolve()\n got %+v\nwant %+v", *got, want)
			}
		})
	}
}

func TestResolveNilRequest(t *testing.T) {
	r := NewResolver()
	for _, req := range []*http.Request{nil, {Method: "GET"}} {
		if info, err := r.Resolve(req); err == nil || info != nil {
			t.Errorf("Resolve(%v) = %v, %v; want nil, error", req, info, err)
		}
	}
}

func TestResolveCustomPrefixes(t *testing.T) {
	// A zero Resolver knows no prefixes, so everything is non-resource.
	info, err := (&Resolver{}).Resolve(newReq("GET", "/api/v1/pods", ""))
	if err != nil || info.IsResourceRequest || info.Verb != "get" {
		t.Errorf("zero Resolver: got %+v, %v", info, err)
	}
}

func TestIsReadOnlyAndLongRunning(t *testing.T) {
	tests := []struct {
		method, path, query string
		readOnly, longRun   bool
	}{
		{"GET", "/api/v1/namespaces/default/pods/nginx", "", true, false},
		{"HEAD", "/api/v1/namespaces/default/pods/nginx", "", true, false},
		{"GET", "/api/v1/pods", "", true, false},
		{"GET", "/api/v1/pods", "watch=true", true, true},
		{"GET", "/api/v1/watch/namespaces/default/pods", "", true, true},
		{"POST", "/api/v1/namespaces/default/pods", "", false, false},
		{"PUT", "/api/v1/namespaces/default/pods/nginx/status", "", false, false},
		{"PATCH", "/apis/apps/v1/namespaces/default/deployments/web/scale", "", false, false},
		{"DELETE", "/api/v1/namespaces/default/pods/nginx", "", false, false},
		{"DELETE", "/api/v1/namespaces/default/pods", "", false, false},
		{"GET", "/api/v1/namespaces/default/pods/nginx/log", "follow=true", true, true},
		{"POST", "/api/v1/namespaces/default/pods/nginx/exec", "command=sh", false, true},
		{"GET", "/api/v1/namespaces/default/pods/nginx/exec", "command=sh", true, true},
		{"POST", "/api/v1/namespaces/default/pods/nginx/attach", "", false, true},
		{"POST", "/api/v1/namespaces/default/pods/nginx/portforward", "", false, true},
		{"GET", "/api/v1/namespaces/default/services/web/proxy/x", "", true, true},
		{"GET", "/api/v1/proxy/namespaces/default/pods/nginx", "", false, true},
		{"POST", "/api/v1/namespaces/default/pods/nginx/eviction", "", false, false},
		{"GET", "/healthz", "", true, false},
		{"HEAD", "/version", "", true, false},
		{"POST", "/healthz", "", false, false},
		{"GET", "/debug/pprof/profile", "", true, true},
		{"GET", "/debug/pprof", "", true, false},
		// Subresource names only count for resource requests.
		{"GET", "/exec", "", true, false},
	}
	r := NewResolver()
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path+"?"+tc.query, func(t *testing.T) {
			info, err := r.Resolve(newReq(tc.method, tc.path, tc.query))
			if err != nil {
				t.Fatal(err)
			}
			if got := info.IsReadOnly(); got != tc.readOnly {
				t.Errorf("IsReadOnly() = %v, want %v (verb %q)", got, tc.readOnly, info.Verb)
			}
			if got := info.IsLongRunning(); got != tc.longRun {
				t.Errorf("IsLongRunning() = %v, want %v (verb %q, subresource %q)", got, tc.longRun, info.Verb, info.Subresource)
			}
		})
	}
}

func BenchmarkResolve(b *testing.B) {
	cases := []struct{ name, method, path, query string }{
		{"get", "GET", "/api/v1/namespaces/default/pods/nginx", ""},
		{"list", "GET", "/apis/apps/v1/namespaces/default/deployments", "limit=500"},
		{"watch-name", "GET", "/api/v1/namespaces/default/pods", "watch=true&fieldSelector=metadata.name%3Dnginx&resourceVersion=1"},
		{"update-status", "PUT", "/api/v1/namespaces/default/pods/nginx/status", ""},
		{"non-resource", "GET", "/healthz", ""},
	}
	r := NewResolver()
	for _, c := range cases {
		req := newReq(c.method, c.path, c.query)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Resolve(req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

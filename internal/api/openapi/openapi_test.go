package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	openapi_v3 "github.com/google/gnostic-models/openapiv3"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi3"
	"k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kpipe/kpipe/internal/api/openapi/generated"
)

const (
	acceptV2Proto = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
	acceptV3Proto = "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"
)

func newServer(t *testing.T) *httptest.Server {
	t.Helper()
	r := chi.NewRouter()
	if err := Install(r, testResources()); err != nil {
		t.Fatalf("Install: %v", err)
	}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url, accept string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	// Redirects are checked by the tests themselves.
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func fetchV2(t *testing.T, srv *httptest.Server) (*spec.Swagger, *http.Response) {
	t.Helper()
	resp, body := get(t, srv.URL+"/openapi/v2", "application/json")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /openapi/v2: %d %s", resp.StatusCode, body)
	}
	var sw spec.Swagger
	if err := json.Unmarshal(body, &sw); err != nil {
		t.Fatalf("v2 is not a Swagger document: %v", err)
	}
	return &sw, resp
}

func operation(item spec.PathItem, method string) *spec.Operation {
	switch method {
	case http.MethodGet:
		return item.Get
	case http.MethodPost:
		return item.Post
	case http.MethodPut:
		return item.Put
	case http.MethodPatch:
		return item.Patch
	case http.MethodDelete:
		return item.Delete
	}
	return nil
}

// v2Params resolves an operation's parameters, path-level ones included,
// through the document's shared #/parameters.
func v2Params(t *testing.T, sw *spec.Swagger, item spec.PathItem, op *spec.Operation) map[string]spec.Parameter {
	t.Helper()
	out := map[string]spec.Parameter{}
	for _, list := range [][]spec.Parameter{item.Parameters, op.Parameters} {
		for _, p := range list {
			if ref := p.Ref.String(); ref != "" {
				shared, ok := sw.Parameters[strings.TrimPrefix(ref, "#/parameters/")]
				if !ok {
					t.Fatalf("dangling parameter %s", ref)
				}
				p = shared
			}
			out[p.Name] = p
		}
	}
	return out
}

func TestV2JSON(t *testing.T) {
	srv := newServer(t)
	sw, resp := fetchV2(t, srv)
	if resp.Header.Get("Etag") == "" {
		t.Error("no ETag on /openapi/v2")
	}

	listParams := []string{"pretty", "namespace", "labelSelector", "fieldSelector", "limit", "continue", "resourceVersion", "resourceVersionMatch", "timeoutSeconds", "watch", "allowWatchBookmarks", "sendInitialEvents"}
	writeParams := []string{"pretty", "dryRun", "fieldManager", "fieldValidation", "body"}
	cases := []struct {
		name, path, method, id, action string
		kind                           schema.GroupVersionKind
		params                         []string
	}{
		{"list namespaced", "/api/v1/namespaces/{namespace}/configmaps", http.MethodGet, "listCoreV1NamespacedConfigMap", "list", cmGVK, listParams},
		{"create", "/api/v1/namespaces/{namespace}/configmaps", http.MethodPost, "createCoreV1NamespacedConfigMap", "post", cmGVK, append([]string{"namespace"}, writeParams...)},
		{"delete collection", "/api/v1/namespaces/{namespace}/configmaps", http.MethodDelete, "deleteCoreV1CollectionNamespacedConfigMap", "deletecollection", cmGVK,
			[]string{"namespace", "body", "dryRun", "gracePeriodSeconds", "propagationPolicy", "orphanDependents", "labelSelector", "fieldSelector", "limit", "continue", "resourceVersion", "resourceVersionMatch", "timeoutSeconds", "sendInitialEvents"}},
		{"read", "/api/v1/namespaces/{namespace}/configmaps/{name}", http.MethodGet, "readCoreV1NamespacedConfigMap", "get", cmGVK, []string{"pretty", "namespace", "name"}},
		{"replace", "/api/v1/namespaces/{namespace}/configmaps/{name}", http.MethodPut, "replaceCoreV1NamespacedConfigMap", "put", cmGVK, append([]string{"namespace", "name"}, writeParams...)},
		{"patch", "/api/v1/namespaces/{namespace}/configmaps/{name}", http.MethodPatch, "patchCoreV1NamespacedConfigMap", "patch", cmGVK, append([]string{"namespace", "name", "force"}, writeParams...)},
		{"delete", "/api/v1/namespaces/{namespace}/configmaps/{name}", http.MethodDelete, "deleteCoreV1NamespacedConfigMap", "delete", cmGVK,
			[]string{"pretty", "namespace", "name", "body", "dryRun", "gracePeriodSeconds", "propagationPolicy", "orphanDependents"}},
		{"list all namespaces", "/api/v1/configmaps", http.MethodGet, "listCoreV1ConfigMapForAllNamespaces", "list", cmGVK, []string{"labelSelector", "watch"}},
		{"watch list", "/api/v1/watch/namespaces/{namespace}/configmaps", http.MethodGet, "watchCoreV1NamespacedConfigMapList", "watchlist", cmGVK, []string{"namespace", "watch"}},
		{"watch one", "/api/v1/watch/namespaces/{namespace}/configmaps/{name}", http.MethodGet, "watchCoreV1NamespacedConfigMap", "watch", cmGVK, []string{"namespace", "name"}},
		{"watch all namespaces", "/api/v1/watch/configmaps", http.MethodGet, "watchCoreV1ConfigMapListForAllNamespaces", "watchlist", cmGVK, []string{"watch"}},
		{"cluster read", "/api/v1/nodes/{name}", http.MethodGet, "readCoreV1Node", "get", coreV1.WithKind("Node"), []string{"name"}},
		{"status", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/status", http.MethodPatch, "patchAppsV1NamespacedDeploymentStatus", "patch", deployGVK, []string{"fieldValidation"}},
		{"scale", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale", http.MethodPut, "replaceAppsV1NamespacedDeploymentScale", "put", autoscalingV1.WithKind("Scale"), []string{"fieldValidation", "name"}},
		{"finalize", "/api/v1/namespaces/{name}/finalize", http.MethodPut, "replaceCoreV1NamespaceFinalize", "put", coreV1.WithKind("Namespace"), []string{"name"}},
		{"create-only", "/apis/authentication.k8s.io/v1/tokenreviews", http.MethodPost, "createAuthenticationV1TokenReview", "post", authnV1.WithKind("TokenReview"), []string{"fieldValidation"}},
		{"dotted group", "/apis/rbac.authorization.k8s.io/v1/clusterroles", http.MethodGet, "listRbacAuthorizationV1ClusterRole", "list", rbacV1.WithKind("ClusterRole"), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			item, ok := sw.Paths.Paths[tc.path]
			if !ok {
				t.Fatalf("no path %s", tc.path)
			}
			op := operation(item, tc.method)
			if op == nil {
				t.Fatalf("no %s on %s", tc.method, tc.path)
			}
			if op.ID != tc.id {
				t.Errorf("operationId = %q, want %q", op.ID, tc.id)
			}
			if got := op.Extensions["x-kubernetes-action"]; got != tc.action {
				t.Errorf("x-kubernetes-action = %v, want %s", got, tc.action)
			}
			gvk, _ := op.Extensions["x-kubernetes-group-version-kind"].(map[string]interface{})
			if gvk["group"] != tc.kind.Group || gvk["version"] != tc.kind.Version || gvk["kind"] != tc.kind.Kind {
				t.Errorf("x-kubernetes-group-version-kind = %v, want %v", gvk, tc.kind)
			}
			params := v2Params(t, sw, item, op)
			for _, name := range tc.params {
				if _, ok := params[name]; !ok {
					t.Errorf("no parameter %s; have %v", name, keys(params))
				}
			}
		})
	}

	t.Run("bodies and responses reference definitions", func(t *testing.T) {
		item := sw.Paths.Paths["/api/v1/namespaces/{namespace}/configmaps"]
		body := v2Params(t, sw, item, item.Post)["body"]
		if body.In != "body" || !body.Required || body.Schema.Ref.String() != "#/definitions/io.k8s.api.core.v1.ConfigMap" {
			t.Errorf("create body = %+v", body)
		}
		if ref := item.Get.Responses.StatusCodeResponses[200].Schema.Ref.String(); ref != "#/definitions/io.k8s.api.core.v1.ConfigMapList" {
			t.Errorf("list response = %s", ref)
		}
		item = sw.Paths.Paths["/api/v1/namespaces/{namespace}/configmaps/{name}"]
		if ref := item.Delete.Responses.StatusCodeResponses[200].Schema.Ref.String(); ref != "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Status" {
			t.Errorf("delete response = %s", ref)
		}
		if ref := v2Params(t, sw, item, item.Patch)["body"].Schema.Ref.String(); ref != "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch" {
			t.Errorf("patch body = %s", ref)
		}
		if !contains(item.Patch.Consumes, "application/apply-patch+yaml") || !contains(item.Patch.Consumes, "application/strategic-merge-patch+json") {
			t.Errorf("patch consumes %v", item.Patch.Consumes)
		}
		// Pods answer a delete with the pod, as kube's do.
		pod := sw.Paths.Paths["/api/v1/namespaces/{namespace}/pods/{name}"]
		if ref := pod.Delete.Responses.StatusCodeResponses[200].Schema.Ref.String(); ref != "#/definitions/io.k8s.api.core.v1.Pod" {
			t.Errorf("pod delete response = %s", ref)
		}
	})

	t.Run("definitions", func(t *testing.T) {
		cm, ok := sw.Definitions["io.k8s.api.core.v1.ConfigMap"]
		if !ok {
			t.Fatal("no io.k8s.api.core.v1.ConfigMap definition")
		}
		if !hasGVK(cm.Extensions, cmGVK) {
			t.Errorf("ConfigMap x-kubernetes-group-version-kind = %v", cm.Extensions["x-kubernetes-group-version-kind"])
		}
		if _, ok := cm.Properties["data"]; !ok {
			t.Error("ConfigMap has no data property")
		}
		if !hasGVK(sw.Definitions["io.k8s.api.autoscaling.v1.Scale"].Extensions, autoscalingV1.WithKind("Scale")) {
			t.Error("Scale is not tagged autoscaling/v1")
		}
		// Every reference resolves within the document.
		raw, _ := json.Marshal(sw)
		for _, m := range regexp.MustCompile(`"#/definitions/([^"]+)"`).FindAllSubmatch(raw, -1) {
			name := strings.ReplaceAll(strings.ReplaceAll(string(m[1]), "~1", "/"), "~0", "~")
			if _, ok := sw.Definitions[name]; !ok {
				t.Errorf("dangling reference to %s", name)
			}
		}
	})

	t.Run("ETag revalidation", func(t *testing.T) {
		resp, _ := get(t, srv.URL+"/openapi/v2", "application/json", "If-None-Match", resp.Header.Get("Etag"))
		if resp.StatusCode != http.StatusNotModified {
			t.Errorf("If-None-Match: %d, want 304", resp.StatusCode)
		}
	})
}

var (
	cmGVK     = coreV1.WithKind("ConfigMap")
	deployGVK = appsV1.WithKind("Deployment")
)

func keys[V any](m map[string]V) []string { return sortedKeys(m) }

// hasGVK reads x-kubernetes-group-version-kind as kubectl does: a list of
// {group, version, kind}, decoded from JSON.
func hasGVK(ext spec.Extensions, gvk schema.GroupVersionKind) bool {
	var list []map[string]string
	if err := ext.GetObject("x-kubernetes-group-version-kind", &list); err != nil {
		return false
	}
	for _, g := range list {
		if g["group"] == gvk.Group && g["version"] == gvk.Version && g["kind"] == gvk.Kind {
			return true
		}
	}
	return false
}

func TestV2Protobuf(t *testing.T) {
	srv := newServer(t)
	_, jsonResp := fetchV2(t, srv)
	resp, body := get(t, srv.URL+"/openapi/v2", acceptV2Proto)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /openapi/v2 protobuf: %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/com.github.proto-openapi.spec.v2.v1.0+protobuf" {
		t.Errorf("Content-Type = %q", ct)
	}
	if resp.Header.Get("Etag") != jsonResp.Header.Get("Etag") {
		t.Errorf("protobuf ETag %s differs from JSON's %s", resp.Header.Get("Etag"), jsonResp.Header.Get("Etag"))
	}
	var doc openapi_v2.Document
	if err := proto.Unmarshal(body, &doc); err != nil {
		t.Fatalf("not an OpenAPI v2 protobuf: %v", err)
	}
	found := false
	for _, p := range doc.GetPaths().GetPath() {
		if p.GetName() == "/api/v1/namespaces/{namespace}/configmaps" && p.GetValue().GetPost().GetOperationId() == "createCoreV1NamespacedConfigMap" {
			found = true
		}
	}
	if !found {
		t.Error("protobuf document lacks createCoreV1NamespacedConfigMap")
	}

	if resp, _ := get(t, srv.URL+"/openapi/v2", "text/html"); resp.StatusCode != http.StatusNotAcceptable {
		t.Errorf("Accept text/html: %d, want 406", resp.StatusCode)
	}
}

type v3Discovery struct {
	Paths map[string]struct {
		ServerRelativeURL string `json:"serverRelativeURL"`
	} `json:"paths"`
}

func fetchV3Discovery(t *testing.T, srv *httptest.Server) v3Discovery {
	t.Helper()
	resp, body := get(t, srv.URL+"/openapi/v3", "application/json")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /openapi/v3: %d %s", resp.StatusCode, body)
	}
	var d v3Discovery
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestV3Discovery(t *testing.T) {
	srv := newServer(t)
	d := fetchV3Discovery(t, srv)
	hashed := regexp.MustCompile(`^/openapi/v3/(.+)\?hash=[0-9A-F]{128}$`)
	for _, name := range []string{"api/v1", "apis/apps/v1", "apis/rbac.authorization.k8s.io/v1", "api", "apis", "apis/apps", "version"} {
		t.Run(name, func(t *testing.T) {
			p, ok := d.Paths[name]
			if !ok {
				t.Fatalf("discovery lacks %s; has %v", name, keys(d.Paths))
			}
			m := hashed.FindStringSubmatch(p.ServerRelativeURL)
			if m == nil || m[1] != name {
				t.Fatalf("serverRelativeURL %q is not /openapi/v3/%s?hash=...", p.ServerRelativeURL, name)
			}
			resp, _ := get(t, srv.URL+p.ServerRelativeURL, "application/json")
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %d", p.ServerRelativeURL, resp.StatusCode)
			}
			if cc := resp.Header.Get("Cache-Control"); !strings.Contains(cc, "immutable") {
				t.Errorf("hashed URL Cache-Control = %q", cc)
			}
		})
	}
	t.Run("stale hash redirects", func(t *testing.T) {
		resp, _ := get(t, srv.URL+"/openapi/v3/apis/apps/v1?hash=00", "application/json")
		if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != d.Paths["apis/apps/v1"].ServerRelativeURL {
			t.Errorf("stale hash: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
		}
	})
	t.Run("unknown group-version", func(t *testing.T) {
		if resp, _ := get(t, srv.URL+"/openapi/v3/apis/nope/v1", "application/json"); resp.StatusCode != http.StatusNotFound {
			t.Errorf("unknown group-version: %d, want 404", resp.StatusCode)
		}
	})
}

func TestV3GroupVersion(t *testing.T) {
	srv := newServer(t)
	resp, body := get(t, srv.URL+"/openapi/v3/apis/apps/v1", "application/json")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /openapi/v3/apis/apps/v1: %d", resp.StatusCode)
	}
	var doc spec3.OpenAPI
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("not an OpenAPI v3 document: %v", err)
	}
	for p := range doc.Paths.Paths {
		if !strings.HasPrefix(p, "/apis/apps/v1/") {
			t.Errorf("apps/v1 document holds %s", p)
		}
	}

	cases := []struct {
		name, path, method, id string
		fieldValidation        bool
	}{
		{"list", "/apis/apps/v1/namespaces/{namespace}/deployments", http.MethodGet, "listAppsV1NamespacedDeployment", false},
		{"create", "/apis/apps/v1/namespaces/{namespace}/deployments", http.MethodPost, "createAppsV1NamespacedDeployment", true},
		{"read", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}", http.MethodGet, "readAppsV1NamespacedDeployment", false},
		{"replace", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}", http.MethodPut, "replaceAppsV1NamespacedDeployment", true},
		{"patch", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}", http.MethodPatch, "patchAppsV1NamespacedDeployment", true},
		{"delete", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}", http.MethodDelete, "deleteAppsV1NamespacedDeployment", false},
		{"patch scale", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale", http.MethodPatch, "patchAppsV1NamespacedDeploymentScale", true},
		{"list all namespaces", "/apis/apps/v1/deployments", http.MethodGet, "listAppsV1DeploymentForAllNamespaces", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			item := doc.Paths.Paths[tc.path]
			if item == nil {
				t.Fatalf("no path %s", tc.path)
			}
			op := v3Operation(item, tc.method)
			if op == nil {
				t.Fatalf("no %s on %s", tc.method, tc.path)
			}
			if op.OperationId != tc.id {
				t.Errorf("operationId = %q, want %q", op.OperationId, tc.id)
			}
			has := false
			for _, p := range op.Parameters {
				has = has || p.Name == "fieldValidation"
			}
			if has != tc.fieldValidation {
				t.Errorf("fieldValidation parameter present = %v, want %v", has, tc.fieldValidation)
			}
		})
	}

	t.Run("server-side validation is detected", func(t *testing.T) {
		if !supportsFieldValidation(&doc, deployGVK) {
			t.Error("kubectl would not see fieldValidation for apps/v1 Deployment")
		}
	})
	t.Run("request body", func(t *testing.T) {
		post := doc.Paths.Paths["/apis/apps/v1/namespaces/{namespace}/deployments"].Post
		mt := post.RequestBody.Content["*/*"]
		if mt == nil || mt.Schema.Ref.String() != "#/components/schemas/io.k8s.api.apps.v1.Deployment" {
			t.Errorf("create request body = %+v", post.RequestBody.Content)
		}
	})
	t.Run("shared kinds narrowed", func(t *testing.T) {
		var list []map[string]string
		if err := doc.Components.Schemas["io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"].Extensions.GetObject("x-kubernetes-group-version-kind", &list); err != nil {
			t.Fatal(err)
		}
		if len(list) != 2 || list[0]["group"] != "" || list[1]["group"] != "apps" {
			t.Errorf("DeleteOptions kinds in apps/v1 = %v, want core/v1 and apps/v1", list)
		}
	})

	t.Run("protobuf", func(t *testing.T) {
		resp, body := get(t, srv.URL+"/openapi/v3/apis/apps/v1", acceptV3Proto)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/com.github.proto-openapi.spec.v3.v1.0+protobuf" {
			t.Fatalf("protobuf: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		var pb openapi_v3.Document
		if err := proto.Unmarshal(body, &pb); err != nil {
			t.Fatalf("not an OpenAPI v3 protobuf: %v", err)
		}
		if len(pb.GetPaths().GetPath()) != len(doc.Paths.Paths) {
			t.Errorf("protobuf has %d paths, JSON %d", len(pb.GetPaths().GetPath()), len(doc.Paths.Paths))
		}
	})
}

func v3Operation(item *spec3.Path, method string) *spec3.Operation {
	switch method {
	case http.MethodGet:
		return item.Get
	case http.MethodPost:
		return item.Post
	case http.MethodPut:
		return item.Put
	case http.MethodPatch:
		return item.Patch
	case http.MethodDelete:
		return item.Delete
	}
	return nil
}

// supportsFieldValidation is kubectl's test for server-side field
// validation: the first PATCH operation tagged with the kind must list a
// fieldValidation parameter of its own.
func supportsFieldValidation(doc *spec3.OpenAPI, gvk schema.GroupVersionKind) bool {
	for _, item := range doc.Paths.Paths {
		op := item.Patch
		if op == nil {
			continue
		}
		var g map[string]string
		if err := op.Extensions.GetObject("x-kubernetes-group-version-kind", &g); err != nil ||
			g["group"] != gvk.Group || g["version"] != gvk.Version || g["kind"] != gvk.Kind {
			continue
		}
		for _, p := range op.Parameters {
			if p.Name == "fieldValidation" {
				return true
			}
		}
		return false
	}
	return false
}

func TestClientGoOpenAPI3(t *testing.T) {
	srv := newServer(t)
	dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	root := openapi3.NewRoot(dc.OpenAPIV3())

	gvs, err := root.GroupVersions()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []schema.GroupVersion{coreV1, appsV1, rbacV1} {
		if !containsGV(gvs, want) {
			t.Errorf("GroupVersions() = %v, lacks %v", gvs, want)
		}
	}

	doc, err := root.GVSpec(appsV1)
	if err != nil {
		t.Fatalf("GVSpec(apps/v1): %v", err)
	}
	deploy := doc.Components.Schemas["io.k8s.api.apps.v1.Deployment"]
	if deploy == nil {
		t.Fatal("apps/v1 has no io.k8s.api.apps.v1.Deployment schema")
	}
	if !hasGVK(deploy.Extensions, deployGVK) {
		t.Errorf("Deployment schema kinds = %v", deploy.Extensions["x-kubernetes-group-version-kind"])
	}
	if _, ok := deploy.Properties["spec"]; !ok {
		t.Error("Deployment schema has no spec")
	}
	if !supportsFieldValidation(doc, deployGVK) {
		t.Error("fieldValidation not found for Deployment through client-go")
	}

	core, err := root.GVSpec(coreV1)
	if err != nil {
		t.Fatalf("GVSpec(v1): %v", err)
	}
	if !supportsFieldValidation(core, cmGVK) {
		t.Error("fieldValidation not found for ConfigMap through client-go")
	}
	if _, err := root.GVSpec(schema.GroupVersion{Group: "nope", Version: "v1"}); err == nil {
		t.Error("GVSpec of an unserved group-version succeeded")
	}
}

func containsGV(list []schema.GroupVersion, gv schema.GroupVersion) bool {
	for _, x := range list {
		if x == gv {
			return true
		}
	}
	return false
}

func TestDeterministic(t *testing.T) {
	// Replicas must publish the same documents, or a client's cached v3
	// hash from one would redirect on another.
	render := func() []byte {
		v2, v3, err := Build(testResources())
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		b, _ := json.Marshal(v2)
		buf.Write(b)
		for _, name := range sortedKeys(v3) {
			b, _ := json.Marshal(v3[name])
			fmt.Fprintf(&buf, "\n%s\n%s", name, b)
		}
		return buf.Bytes()
	}
	if !bytes.Equal(render(), render()) {
		t.Error("two builds of the same resources differ")
	}
}

func TestGeneratedDefinitionsComplete(t *testing.T) {
	defs := generated.GetOpenAPIDefinitions(func(name string) spec.Ref {
		return spec.MustCreateRef("#/definitions/" + name)
	})
	for name, def := range defs {
		if !strings.HasPrefix(name, "io.k8s.") {
			t.Errorf("definition %s is not named by its model name", name)
		}
		for _, dep := range def.Dependencies {
			if _, ok := defs[dep]; !ok {
				t.Errorf("%s depends on %s, which is not generated", name, dep)
			}
		}
	}
}

func TestBuildRejects(t *testing.T) {
	cm := Resource{GroupVersion: coreV1, Resource: "configmaps", Kind: "ConfigMap", Namespaced: true, Verbs: allVerbs}
	cases := []struct {
		name      string
		resources []Resource
		want      string
	}{
		{"unknown verb", []Resource{{GroupVersion: coreV1, Resource: "configmaps", Kind: "ConfigMap", Verbs: []string{"frobnicate"}}}, "unknown verb"},
		{"duplicate", []Resource{cm, cm}, "twice"},
		{"unknown kind", []Resource{{GroupVersion: coreV1, Resource: "widgets", Kind: "Widget", Verbs: []string{"get"}}}, "no type"},
		{"no version", []Resource{{Resource: "configmaps", Kind: "ConfigMap"}}, "required"},
		{"watch on subresource", []Resource{{GroupVersion: coreV1, Resource: "pods", Kind: "Pod", Verbs: []string{"get"},
			Subresources: []Subresource{{Name: "status", Kind: "Pod", GroupVersion: coreV1, Verbs: []string{"watch"}}}}}, "not supported"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := Build(tc.resources); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Build: %v, want an error containing %q", err, tc.want)
			}
			if err := Install(chi.NewRouter(), tc.resources); err == nil {
				t.Error("Install accepted what Build rejects")
			}
		})
	}
}

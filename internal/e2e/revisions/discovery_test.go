package revisions

import (
	"net/http"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

var allVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// Both resources are in legacy and aggregated discovery as kube lists
// them (namespaced, all verbs, no short names or categories), and in
// OpenAPI v2 and v3.
func TestDiscoveryAndOpenAPI(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	js, _ := clients(t, ts)

	for _, tc := range []struct{ gv, resource, kind string }{
		{"apps/v1", "controllerrevisions", "ControllerRevision"},
		{"v1", "podtemplates", "PodTemplate"},
	} {
		t.Run("legacy "+tc.resource, func(t *testing.T) {
			list, err := js.Discovery().ServerResourcesForGroupVersion(tc.gv)
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == tc.resource })
			if i < 0 {
				t.Fatalf("%s not in %s discovery", tc.resource, tc.gv)
			}
			r := list.APIResources[i]
			verbs := slices.Sorted(slices.Values(r.Verbs))
			if r.Kind != tc.kind || !r.Namespaced || len(r.ShortNames) != 0 || len(r.Categories) != 0 || !slices.Equal(verbs, allVerbs) {
				t.Errorf("discovery of %s: %+v", tc.resource, r)
			}
		})
	}

	c := ts.HTTPClient(t)
	get := func(path, accept string) string {
		resp, b := e2eutil.GetAs(t, c, ts.URL()+path, accept)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
		return string(b)
	}
	const aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	e2eutil.MustContain(t, "aggregated /apis", get("/apis", aggregated),
		`"resource":"controllerrevisions","responseKind":{"group":"apps","version":"v1","kind":"ControllerRevision"},"scope":"Namespaced","singularResource":"controllerrevision"`)
	e2eutil.MustContain(t, "aggregated /api", get("/api", aggregated),
		`"resource":"podtemplates","responseKind":{"group":"","version":"v1","kind":"PodTemplate"},"scope":"Namespaced","singularResource":"podtemplate"`)
	e2eutil.MustContain(t, "openapi v2", get("/openapi/v2", "application/json"),
		`"/apis/apps/v1/namespaces/{namespace}/controllerrevisions/{name}"`, `"/apis/apps/v1/controllerrevisions"`,
		`"/api/v1/namespaces/{namespace}/podtemplates/{name}"`, `"/api/v1/watch/podtemplates"`)
	e2eutil.MustContain(t, "openapi v3 apps/v1", get("/openapi/v3/apis/apps/v1", "application/json"),
		`"/apis/apps/v1/namespaces/{namespace}/controllerrevisions/{name}"`, `"io.k8s.api.apps.v1.ControllerRevision"`)
	e2eutil.MustContain(t, "openapi v3 v1", get("/openapi/v3/api/v1", "application/json"),
		`"/api/v1/namespaces/{namespace}/podtemplates/{name}"`, `"io.k8s.api.core.v1.PodTemplate"`)
}

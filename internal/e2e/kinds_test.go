package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
)

// Create, get, list, update (and a stale update), delete for each of the
// issue's kinds, through the dynamic client.
func TestCRUDEveryKind(t *testing.T) {
	ts, cs := e2eutil.APIServer(t)
	e2eutil.Namespace(t, cs, "kinds")
	dc := dynamic.NewForConfigOrDie(ts.Config)
	ctx := context.Background()
	cases := []struct {
		gvr      schema.GroupVersionResource
		manifest string
	}{
		{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n"},
		{schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, "apiVersion: v1\nkind: Secret\nmetadata: {name: a}\nstringData: {password: x}\n"},
		{schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers: [{name: c, image: nginx}]\n"},
		{schema.GroupVersionResource{Version: "v1", Resource: "services"}, "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec:\n  selector: {app: a}\n  ports: [{port: 80}]\n"},
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  selector: {matchLabels: {app: a}}\n  template:\n    metadata: {labels: {app: a}}\n    spec: {containers: [{name: c, image: nginx}]}\n"},
		{schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a}\n"},
		{schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}, "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: a}\nspec: {holderIdentity: me}\n"},
		{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}, "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: a}\nrules: [{apiGroups: [''], resources: [pods], verbs: [get]}]\n"},
	}
	for _, tc := range cases {
		t.Run(tc.gvr.Resource, func(t *testing.T) {
			var obj unstructured.Unstructured
			if err := yaml.Unmarshal([]byte(tc.manifest), &obj.Object); err != nil {
				t.Fatal(err)
			}
			ri := dc.Resource(tc.gvr).Namespace("kinds")
			created, err := ri.Create(ctx, &obj, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			got, err := ri.Get(ctx, "a", metav1.GetOptions{})
			if err != nil || got.GetUID() != created.GetUID() {
				t.Fatalf("get: %v", err)
			}
			list, err := ri.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=a"})
			if err != nil || len(list.Items) != 1 {
				t.Fatalf("list: %v", err)
			}
			got.SetLabels(map[string]string{"changed": "yes"})
			updated, err := ri.Update(ctx, got, metav1.UpdateOptions{})
			if err != nil || updated.GetLabels()["changed"] != "yes" {
				t.Fatalf("update: %v", err)
			}
			_, err = ri.Update(ctx, got, metav1.UpdateOptions{})
			e2eutil.WantStatus(t, err, 409, metav1.StatusReasonConflict, "")
			if err := ri.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			_, err = ri.Get(ctx, "a", metav1.GetOptions{})
			e2eutil.WantStatus(t, err, 404, metav1.StatusReasonNotFound, "")
		})
	}
}

func TestDeleteCollectionCreateOnUpdateAndOwnerReferences(t *testing.T) {
	ts, cs := e2eutil.APIServer(t)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "coll")
	cms := cs.CoreV1().ConfigMaps("coll")
	for _, n := range []string{"a", "b", "c"} {
		labels := map[string]string{"tier": "x"}
		if n == "c" {
			labels["tier"] = "y"
		}
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: labels}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "tier=x"}); err != nil {
		t.Fatal(err)
	}
	left, _ := cms.List(ctx, metav1.ListOptions{})
	if len(left.Items) != 1 || left.Items[0].Name != "c" {
		t.Errorf("deletecollection tier=x left %v", left.Items)
	}

	// Endpoints allow create on update, as in kube.
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "made-by-put"}}
	if _, err := cs.CoreV1().Endpoints("coll").Update(ctx, ep, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("PUT of a missing endpoints object: %v", err)
	}
	_, err := cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "missing"}}, metav1.UpdateOptions{})
	e2eutil.WantStatus(t, err, 404, metav1.StatusReasonNotFound, `configmaps "missing" not found`)

	// Duplicate owner references are dropped with kube's warning.
	c := ts.HTTPClient(t)
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"owned","ownerReferences":[` +
		`{"apiVersion":"v1","kind":"ConfigMap","name":"c","uid":"u1"},{"apiVersion":"v1","kind":"ConfigMap","name":"c","uid":"u1"}]}}`
	req, _ := http.NewRequest("POST", ts.URL()+"/api/v1/namespaces/coll/configmaps", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out := readAll(resp)
	resp.Body.Close()
	if resp.StatusCode != 201 || strings.Count(out, `"uid":"u1"`) != 1 ||
		!strings.Contains(resp.Header.Get("Warning"), "contains duplicate entries; API server dedups owner references in 1.20+") {
		t.Errorf("%d warning=%q body=%s", resp.StatusCode, resp.Header.Get("Warning"), out)
	}
}

func TestAggregatedDiscovery(t *testing.T) {
	ts, _ := e2eutil.APIServer(t)
	c := ts.HTTPClient(t)
	for _, path := range []string{"/api", "/apis"} {
		req, _ := http.NewRequest("GET", ts.URL()+path, nil)
		req.Header.Set("Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(resp)
		resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, "as=APIGroupDiscoveryList") {
			t.Errorf("%s: Content-Type %q", path, ct)
		}
		e2eutil.MustContain(t, path, body, `"kind":"APIGroupDiscoveryList"`, `"freshness":"Current"`)
	}
	_, body := e2eutil.Get(t, c, ts.URL()+"/apis")
	e2eutil.MustContain(t, "legacy /apis", body, `"kind":"APIGroupList"`, `"name":"apps"`, `"preferredVersion":{"groupVersion":"apps/v1","version":"v1"}`)
	_, body = e2eutil.Get(t, c, ts.URL()+"/api/v1")
	e2eutil.MustContain(t, "/api/v1", body, `"kind":"APIResourceList"`, `"name":"pods/status"`, `"shortNames":["po"]`)
}

package openapi

import (
	"reflect"
	"testing"
)

func TestOperationIDAndTags(t *testing.T) {
	cases := []struct {
		name, op, path, wantID string
		wantTags               []string
	}{
		{"core list", "listNamespacedConfigMap", "/api/v1/namespaces/{namespace}/configmaps", "listCoreV1NamespacedConfigMap", []string{"core_v1"}},
		{"delete collection keeps kube's split", "deletecollectionNamespacedConfigMap", "/api/v1/namespaces/{namespace}/configmaps", "deleteCoreV1CollectionNamespacedConfigMap", []string{"core_v1"}},
		{"group", "readNamespacedDeploymentScale", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale", "readAppsV1NamespacedDeploymentScale", []string{"apps_v1"}},
		{"k8s.io group trimmed and camel-cased", "createClusterRole", "/apis/rbac.authorization.k8s.io/v1/clusterroles", "createRbacAuthorizationV1ClusterRole", []string{"rbacAuthorization_v1"}},
		{"watch list", "watchConfigMapListForAllNamespaces", "/api/v1/watch/configmaps", "watchCoreV1ConfigMapListForAllNamespaces", []string{"core_v1"}},
		{"core versions", "getAPIVersions", "/api/", "getCoreAPIVersions", []string{"core"}},
		{"group list", "getAPIVersions", "/apis/", "getAPIVersions", []string{"apis"}},
		{"group discovery", "getAPIGroup", "/apis/apps/", "getAppsAPIGroup", []string{"apps"}},
		{"version", "getCodeVersion", "/version/", "getCodeVersion", []string{"version"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, tags, err := operationIDAndTags(&route{operation: tc.op, path: tc.path})
			if err != nil {
				t.Fatal(err)
			}
			if id != tc.wantID || !reflect.DeepEqual(tags, tc.wantTags) {
				t.Errorf("got %q %v, want %q %v", id, tags, tc.wantID, tc.wantTags)
			}
		})
	}
	t.Run("no verb", func(t *testing.T) {
		if _, _, err := operationIDAndTags(&route{operation: "frobnicate", path: "/api/v1/x"}); err == nil {
			t.Error("accepted an operation without a verb")
		}
	})
}

func TestOptionParams(t *testing.T) {
	type opts struct {
		Embedded    struct{} `json:",inline"`
		Name        string   `json:"name,omitempty"`
		Count       *int64   `json:"count,omitempty"`
		On          bool     `json:"on"`
		List        []string `json:"list"`
		Nested      *struct{ A int }
		NestedTag   *struct{ A int } `json:"nested"`
		Skipped     string           `json:"-"`
		ExcludedOne string           `json:"excluded"`
	}
	got := map[string]string{}
	for _, p := range optionParams(opts{}, "excluded") {
		got[p.name] = p.dataType
	}
	want := map[string]string{"name": "string", "count": "integer", "on": "boolean", "list": "string"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

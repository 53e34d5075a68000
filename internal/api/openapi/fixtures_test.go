package openapi

import "k8s.io/apimachinery/pkg/runtime/schema"

var (
	coreV1        = schema.GroupVersion{Version: "v1"}
	appsV1        = schema.GroupVersion{Group: "apps", Version: "v1"}
	autoscalingV1 = schema.GroupVersion{Group: "autoscaling", Version: "v1"}
	batchV1       = schema.GroupVersion{Group: "batch", Version: "v1"}
	rbacV1        = schema.GroupVersion{Group: "rbac.authorization.k8s.io", Version: "v1"}
	authnV1       = schema.GroupVersion{Group: "authentication.k8s.io", Version: "v1"}
	authzV1       = schema.GroupVersion{Group: "authorization.k8s.io", Version: "v1"}
	policyV1      = schema.GroupVersion{Group: "policy", Version: "v1"}
	allVerbs      = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	statusVerbs   = []string{"get", "patch", "update"}
)

// testResources is a cut of what kpipe serves: namespaced and cluster
// resources, status, scale, finalize, log, create-only reviews and a
// cross-group create subresource.
func testResources() []Resource {
	status := func(gv schema.GroupVersion, kind string) Subresource {
		return Subresource{Name: "status", Kind: kind, GroupVersion: gv, Verbs: statusVerbs}
	}
	return []Resource{
		{GroupVersion: coreV1, Resource: "namespaces", Kind: "Namespace",
			Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"},
			Subresources: []Subresource{status(coreV1, "Namespace"),
				{Name: "finalize", Kind: "Namespace", GroupVersion: coreV1, Verbs: []string{"update"}}}},
		{GroupVersion: coreV1, Resource: "configmaps", Kind: "ConfigMap", Namespaced: true, Verbs: allVerbs},
		{GroupVersion: coreV1, Resource: "endpoints", Kind: "Endpoints", Namespaced: true, Verbs: allVerbs},
		{GroupVersion: coreV1, Resource: "nodes", Kind: "Node", Verbs: allVerbs,
			Subresources: []Subresource{status(coreV1, "Node")}},
		{GroupVersion: coreV1, Resource: "pods", Kind: "Pod", Namespaced: true, Verbs: allVerbs,
			Subresources: []Subresource{status(coreV1, "Pod"),
				{Name: "log", Kind: "Pod", GroupVersion: coreV1, Verbs: []string{"get"}},
				{Name: "eviction", Kind: "Eviction", GroupVersion: policyV1, Verbs: []string{"create"}}}},
		{GroupVersion: coreV1, Resource: "serviceaccounts", Kind: "ServiceAccount", Namespaced: true, Verbs: allVerbs,
			Subresources: []Subresource{{Name: "token", Kind: "TokenRequest", GroupVersion: authnV1, Verbs: []string{"create"}}}},
		{GroupVersion: appsV1, Resource: "deployments", Kind: "Deployment", Namespaced: true, Verbs: allVerbs,
			Subresources: []Subresource{status(appsV1, "Deployment"),
				{Name: "scale", Kind: "Scale", GroupVersion: autoscalingV1, Verbs: statusVerbs}}},
		{GroupVersion: batchV1, Resource: "jobs", Kind: "Job", Namespaced: true, Verbs: allVerbs,
			Subresources: []Subresource{status(batchV1, "Job")}},
		{GroupVersion: rbacV1, Resource: "clusterroles", Kind: "ClusterRole", Verbs: allVerbs},
		{GroupVersion: authnV1, Resource: "tokenreviews", Kind: "TokenReview", Verbs: []string{"create"}},
		{GroupVersion: authzV1, Resource: "localsubjectaccessreviews", Kind: "LocalSubjectAccessReview", Namespaced: true, Verbs: []string{"create"}},
	}
}

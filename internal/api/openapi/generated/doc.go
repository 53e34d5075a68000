// Package generated holds the OpenAPI definitions of the served types,
// made by kube-openapi's openapi-gen and checked in.
//
// To regenerate, from the repository root (openapi-gen is a Go tool in go.mod):
//
//	go generate ./internal/api/openapi/generated
//
// scheduling/v1alpha3 is listed because batch/v1 Job refers to its
// WorkloadPodGroup types; without it those references would dangle. The
// "API rule violation" lines it prints are warnings.
package generated

//go:generate go tool openapi-gen --output-dir . --output-pkg github.com/kpipe/kpipe/internal/api/openapi/generated --output-file zz_generated.openapi.go k8s.io/api/core/v1 k8s.io/api/apps/v1 k8s.io/api/coordination/v1 k8s.io/api/discovery/v1 k8s.io/api/rbac/v1 k8s.io/api/admissionregistration/v1 k8s.io/api/scheduling/v1 k8s.io/api/scheduling/v1alpha3 k8s.io/api/authentication/v1 k8s.io/api/authorization/v1 k8s.io/api/autoscaling/v1 k8s.io/api/policy/v1 k8s.io/api/batch/v1 k8s.io/api/networking/v1 k8s.io/api/autoscaling/v2 k8s.io/api/apidiscovery/v2 k8s.io/apimachinery/pkg/apis/meta/v1 k8s.io/apimachinery/pkg/runtime k8s.io/apimachinery/pkg/version k8s.io/apimachinery/pkg/api/resource k8s.io/apimachinery/pkg/util/intstr

// Package defaults fills in the defaults kube-apiserver sets when it
// decodes an object of a built-in type, so that what kpipe stores and
// returns matches a real cluster field for field.
//
// The rules follow kube's per-group defaulting functions (the SetDefaults_*
// functions and the generated code that says which of them apply to which
// nested struct) at the kube release kpipe tracks, with its default feature
// gates. They are written here, not imported: kpipe must not depend on
// k8s.io/kubernetes.
//
// A few things kube does outside scheme defaulting are deliberately left to
// other layers: admission (service account, tolerations, priority),
// address and port allocation (clusterIP, nodePort), and strategies that
// need the old object or reset status. The one exception is a service's IP
// family fields; see serviceIPFamilies.
package defaults

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Apply sets kube-apiserver's defaults on a versioned object from k8s.io/api,
// in place, as kube's scheme defaulting does when it decodes a create or an
// update. Fields already set are kept, except where kube normalises them
// too: quantities are rounded up to milli precision, a pod's negative grace
// period becomes 1, serviceAccount follows serviceAccountName, podIPs
// follows podIP, a namespace's name label follows its name, and a service
// without ClientIP affinity loses its sessionAffinityConfig. Types kube has
// no defaults for (ServiceAccount, Event, Lease, Role, ClusterRole), lists,
// and types this package does not know are left alone.
func Apply(obj runtime.Object) {
	switch o := obj.(type) {
	// core/v1
	case *corev1.Pod:
		pod(o)
	case *corev1.PodTemplate:
		podSpec(&o.Template.Spec)
	case *corev1.ReplicationController:
		replicationController(o)
	case *corev1.Service:
		service(o)
	case *corev1.Endpoints:
		endpoints(o)
	case *corev1.ConfigMap:
		configMap(o)
	case *corev1.Secret:
		secret(o)
	case *corev1.Namespace:
		namespace(o)
	case *corev1.Node:
		node(o)
	case *corev1.LimitRange:
		limitRange(o)
	case *corev1.ResourceQuota:
		resourceQuota(o)
	case *corev1.PersistentVolumeClaim:
		persistentVolumeClaim(o)
	case *corev1.PersistentVolume:
		persistentVolume(o)

	// apps/v1
	case *appsv1.Deployment:
		deployment(o)
	case *appsv1.ReplicaSet:
		replicaSet(o)
	case *appsv1.StatefulSet:
		statefulSet(o)
	case *appsv1.DaemonSet:
		daemonSet(o)

	// batch/v1
	case *batchv1.Job:
		job(o)
	case *batchv1.CronJob:
		cronJob(o)

	// autoscaling/v2; policy/v1 PodDisruptionBudgets have no defaults.
	case *autoscalingv2.HorizontalPodAutoscaler:
		horizontalPodAutoscaler(o)

	// rbac/v1: roles have no defaults, bindings do.
	case *rbacv1.RoleBinding:
		roleBinding(&o.RoleRef, o.Subjects)
	case *rbacv1.ClusterRoleBinding:
		roleBinding(&o.RoleRef, o.Subjects)

	// discovery/v1
	case *discoveryv1.EndpointSlice:
		endpointSlice(o)

	// admissionregistration/v1
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		mutatingWebhookConfiguration(o)
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		validatingWebhookConfiguration(o)
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		validatingAdmissionPolicy(o)
	case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
		matchResources(o.Spec.MatchResources)
	case *admissionregistrationv1.MutatingAdmissionPolicy:
		mutatingAdmissionPolicy(o)
	case *admissionregistrationv1.MutatingAdmissionPolicyBinding:
		matchResources(o.Spec.MatchResources)

	// networking/v1: Ingress has none.
	case *networkingv1.NetworkPolicy:
		networkPolicy(o)
	case *networkingv1.IngressClass:
		ingressClass(o)

	// scheduling/v1
	case *schedulingv1.PriorityClass:
		priorityClass(o)
	}
}

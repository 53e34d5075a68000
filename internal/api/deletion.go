package api

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// GCPolicy is a resource's default garbage-collection policy on delete,
// as kube's strategies give it (rest.GarbageCollectionPolicy).
type GCPolicy string

const (
	// GCBackground is the policy of strategies that declare none: no
	// finalizer is added unless the delete asks for one.
	GCBackground GCPolicy = ""
	// GCDeleteDependents is the apps/v1 workloads' default; like the
	// unset policy it adds no finalizer by itself.
	GCDeleteDependents GCPolicy = "DeleteDependents"
	// GCOrphanDependents adds the orphan finalizer when the delete names
	// no policy (batch/v1 Jobs, v1 ReplicationControllers).
	GCOrphanDependents GCPolicy = "OrphanDependents"
	// GCUnsupported ignores propagation options (Events).
	GCUnsupported GCPolicy = "Unsupported"
)

// DefaultGCPolicy is the resource's default garbage-collection policy.
func (r *Resource) DefaultGCPolicy() GCPolicy {
	switch r.GroupResource().String() {
	case "events", "events.events.k8s.io":
		return GCUnsupported
	case "deployments.apps", "replicasets.apps", "statefulsets.apps", "daemonsets.apps":
		return GCDeleteDependents
	case "replicationcontrollers", "jobs.batch":
		if r.GroupVersion.Version == "v1" {
			return GCOrphanDependents
		}
		return GCDeleteDependents
	}
	return GCBackground
}

// GracefulDelete reports whether the resource's objects are deleted
// gracefully (kube's RESTGracefulDeleteStrategy): only pods here.
func (r *Resource) GracefulDelete() bool {
	return r.GroupVersion == coreV1 && r.Name == "pods"
}

// CheckGracefulDelete sets opts.GracePeriodSeconds to the period obj gets,
// as kube's pod strategy does: the delete's gracePeriodSeconds, else the
// pod's terminationGracePeriodSeconds; 0 when the pod is not scheduled or
// has finished; a negative period becomes 1.
func CheckGracefulDelete(obj runtime.Object, opts *metav1.DeleteOptions) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	period := int64(0)
	switch {
	case opts.GracePeriodSeconds != nil:
		period = *opts.GracePeriodSeconds
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		period = *pod.Spec.TerminationGracePeriodSeconds
	}
	if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		period = 0
	}
	if period < 0 {
		period = 1
	}
	opts.GracePeriodSeconds = &period
}

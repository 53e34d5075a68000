package api

import (
	"context"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kpipe/kpipe/internal/api/validation"
)

// Verbs of a resource with the whole of kube's API.
var allVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

var (
	coreV1        = schema.GroupVersion{Version: "v1"}
	appsV1        = schema.GroupVersion{Group: "apps", Version: "v1"}
	autoscalingV1 = schema.GroupVersion{Group: "autoscaling", Version: "v1"}
	batchV1       = schema.GroupVersion{Group: "batch", Version: "v1"}
)

// Options are the settings resources take from the server's config.
type Options struct {
	// EventTTL is how long Events live.
	EventTTL time.Duration
	// Reviews answer the access review resources, by resource name
	// (SelfSubjectReviews...); a missing one answers 503.
	Reviews map[string]CreateFunc
	// TokenRequest answers serviceaccounts/token.
	TokenRequest CreateFunc
	// RBACWriteCheck guards every create and update of Roles,
	// ClusterRoles and their bindings: kube's escalation check.
	RBACWriteCheck func(ctx context.Context, obj, old runtime.Object) error
}

// Resources returns the served resources. Adding one is an entry here
// plus, where Generic does not fit, its strategy.
func Resources(o Options) []*Resource {
	status := func(gv schema.GroupVersion, kind string) *Subresource {
		return &Subresource{Name: "status", Kind: kind, GroupVersion: gv, Verbs: []string{"get", "patch", "update"}}
	}
	scale := &Subresource{Name: "scale", Kind: "Scale", GroupVersion: autoscalingV1, Verbs: []string{"get", "patch", "update"}, CheckedByWriter: true}
	subs := func(s ...*Subresource) map[string]*Subresource {
		m := map[string]*Subresource{}
		for _, x := range s {
			m[x.Name] = x
		}
		return m
	}
	withStatus := Generic{HasStatus: true}
	withGeneration := Generic{HasStatus: true, Generation: true}
	plain := Generic{}

	return append(reviews(o), []*Resource{
		{GroupVersion: coreV1, Name: "namespaces", ReturnDeletedObject: true, SingularName: "namespace", Kind: "Namespace", ShortNames: []string{"ns"},
			Verbs:        []string{"create", "delete", "get", "list", "patch", "update", "watch"},
			Subresources: subs(status(coreV1, "Namespace"), &Subresource{Name: "finalize", Kind: "Namespace", GroupVersion: coreV1, Verbs: []string{"update"}, Strategy: namespaceFinalize{}}),
			Strategy:     Generic{HasStatus: true, Create: createNamespace, Update: updateNamespace},
			FieldAttrs: func(obj runtime.Object) fields.Set {
				return fields.Set{"status.phase": string(obj.(*corev1.Namespace).Status.Phase)}
			}},
		{GroupVersion: coreV1, Name: "pods", ReturnDeletedObject: true, SingularName: "pod", Kind: "Pod", Namespaced: true, ShortNames: []string{"po"}, Categories: []string{"all"},
			Verbs: allVerbs, Subresources: subs(append([]*Subresource{status(coreV1, "Pod"), evictionSubresource}, kubeletSubresources...)...),
			Strategy: podStrategy{Generic{HasStatus: true, Create: createPod}}, FieldAttrs: podFields},
		{GroupVersion: coreV1, Name: "services", ReturnDeletedObject: true, SingularName: "service", Kind: "Service", Namespaced: true, ShortNames: []string{"svc"}, Categories: []string{"all"},
			Verbs: allVerbs, Subresources: subs(status(coreV1, "Service")), StoragePath: "services/specs",
			Strategy: Generic{HasStatus: true, Update: updateService}, FieldAttrs: func(obj runtime.Object) fields.Set {
				s := obj.(*corev1.Service)
				return fields.Set{"spec.clusterIP": s.Spec.ClusterIP, "spec.type": string(s.Spec.Type)}
			}},
		{GroupVersion: coreV1, Name: "endpoints", SingularName: "endpoints", Kind: "Endpoints", Namespaced: true, ShortNames: []string{"ep"},
			Verbs: allVerbs, StoragePath: "services/endpoints", Strategy: plain, AllowCreateOnUpdate: true},
		{GroupVersion: coreV1, Name: "configmaps", SingularName: "configmap", Kind: "ConfigMap", Namespaced: true, ShortNames: []string{"cm"},
			Verbs: allVerbs, Strategy: plain},
		{GroupVersion: coreV1, Name: "secrets", SingularName: "secret", Kind: "Secret", Namespaced: true,
			Verbs: allVerbs, Strategy: secretStrategy{},
			FieldAttrs: func(obj runtime.Object) fields.Set {
				return fields.Set{"type": string(obj.(*corev1.Secret).Type)}
			}},
		{GroupVersion: coreV1, Name: "serviceaccounts", ReturnDeletedObject: true, SingularName: "serviceaccount", Kind: "ServiceAccount", Namespaced: true, ShortNames: []string{"sa"},
			Verbs: allVerbs, Strategy: plain, Subresources: subs(tokenSubresource(o))},
		{GroupVersion: coreV1, Name: "events", SingularName: "event", Kind: "Event", Namespaced: true, ShortNames: []string{"ev"},
			Verbs: allVerbs, Strategy: plain, AllowCreateOnUpdate: true, FieldAttrs: eventFields,
			TTL: func(runtime.Object) time.Duration { return o.EventTTL }},
		{GroupVersion: coreV1, Name: "nodes", SingularName: "node", Kind: "Node", ShortNames: []string{"no"},
			Verbs: allVerbs, Subresources: subs(status(coreV1, "Node")), StoragePath: "minions", Strategy: withStatus,
			FieldAttrs: func(obj runtime.Object) fields.Set {
				return fields.Set{"spec.unschedulable": strconv.FormatBool(obj.(*corev1.Node).Spec.Unschedulable)}
			}},
		{GroupVersion: coreV1, Name: "podtemplates", ReturnDeletedObject: true, SingularName: "podtemplate", Kind: "PodTemplate", Namespaced: true,
			Verbs: allVerbs, Strategy: newPodTemplateStrategy()},
		{GroupVersion: coreV1, Name: "limitranges", SingularName: "limitrange", Kind: "LimitRange", Namespaced: true, ShortNames: []string{"limits"},
			Verbs: allVerbs, Strategy: plain},
		{GroupVersion: coreV1, Name: "resourcequotas", ReturnDeletedObject: true, SingularName: "resourcequota", Kind: "ResourceQuota", Namespaced: true, ShortNames: []string{"quota"},
			Verbs: allVerbs, Subresources: subs(status(coreV1, "ResourceQuota")), Strategy: withStatus},
		{GroupVersion: coreV1, Name: "persistentvolumeclaims", ReturnDeletedObject: true, SingularName: "persistentvolumeclaim", Kind: "PersistentVolumeClaim", Namespaced: true, ShortNames: []string{"pvc"},
			Verbs: allVerbs, Subresources: subs(status(coreV1, "PersistentVolumeClaim")),
			Strategy: Generic{HasStatus: true, Create: func(obj runtime.Object) {
				// kube's read-time defaulting shows a new claim Pending.
				obj.(*corev1.PersistentVolumeClaim).Status.Phase = corev1.ClaimPending
			}}},

		{GroupVersion: appsV1, Name: "deployments", SingularName: "deployment", Kind: "Deployment", Namespaced: true, ShortNames: []string{"deploy"}, Categories: []string{"all"},
			Verbs: allVerbs, Subresources: subs(status(appsV1, "Deployment"), scale), Strategy: deploymentStrategy},
		{GroupVersion: appsV1, Name: "replicasets", SingularName: "replicaset", Kind: "ReplicaSet", Namespaced: true, ShortNames: []string{"rs"}, Categories: []string{"all"},
			Verbs: allVerbs, Subresources: subs(status(appsV1, "ReplicaSet"), scale), Strategy: replicaSetStrategy,
			FieldAttrs: func(obj runtime.Object) fields.Set {
				return fields.Set{"status.replicas": strconv.Itoa(int(obj.(*appsv1.ReplicaSet).Status.Replicas))}
			}},
		{GroupVersion: appsV1, Name: "statefulsets", SingularName: "statefulset", Kind: "StatefulSet", Namespaced: true, ShortNames: []string{"sts"}, Categories: []string{"all"},
			Verbs: allVerbs, Subresources: subs(status(appsV1, "StatefulSet"), scale), Strategy: statefulSetStrategy},
		{GroupVersion: appsV1, Name: "daemonsets", SingularName: "daemonset", Kind: "DaemonSet", Namespaced: true, ShortNames: []string{"ds"}, Categories: []string{"all"},
			Verbs: allVerbs, Subresources: subs(status(appsV1, "DaemonSet")), Strategy: daemonSetStrategy},
		{GroupVersion: appsV1, Name: "controllerrevisions", SingularName: "controllerrevision", Kind: "ControllerRevision", Namespaced: true,
			Verbs: allVerbs, Strategy: plain},

		{GroupVersion: batchV1, Name: "jobs", SingularName: "job", Kind: "Job", Namespaced: true, Categories: []string{"all"},
			Verbs: allVerbs, Subresources: subs(status(batchV1, "Job")), Strategy: newJobStrategy(), FieldAttrs: jobFields},
		{GroupVersion: batchV1, Name: "cronjobs", SingularName: "cronjob", Kind: "CronJob", Namespaced: true, ShortNames: []string{"cj"}, Categories: []string{"all"},
			Verbs: allVerbs, Subresources: subs(status(batchV1, "CronJob")), Strategy: cronJobStrategy{withGeneration}},

		{GroupVersion: autoscalingV2, Name: "horizontalpodautoscalers", SingularName: "horizontalpodautoscaler", Kind: "HorizontalPodAutoscaler", Namespaced: true, ShortNames: []string{"hpa"}, Categories: []string{"all"},
			Verbs: allVerbs, Subresources: subs(status(autoscalingV2, "HorizontalPodAutoscaler")), Strategy: withGeneration},
		{GroupVersion: policyV1, Name: "poddisruptionbudgets", SingularName: "poddisruptionbudget", Kind: "PodDisruptionBudget", Namespaced: true, ShortNames: []string{"pdb"},
			Verbs: allVerbs, RequireResourceVersion: true, Subresources: subs(status(policyV1, "PodDisruptionBudget")), Strategy: newPDBStrategy()},

		{GroupVersion: schema.GroupVersion{Group: "coordination.k8s.io", Version: "v1"}, Name: "leases", SingularName: "lease", Kind: "Lease", Namespaced: true,
			Verbs: allVerbs, Strategy: plain},
		{GroupVersion: schema.GroupVersion{Group: "discovery.k8s.io", Version: "v1"}, Name: "endpointslices", SingularName: "endpointslice", Kind: "EndpointSlice", Namespaced: true,
			Verbs: allVerbs, Strategy: plain},

		{GroupVersion: rbacV1, Name: "roles", SingularName: "role", Kind: "Role", Namespaced: true, Verbs: allVerbs, Strategy: plain, WriteCheck: o.RBACWriteCheck},
		{GroupVersion: rbacV1, Name: "rolebindings", SingularName: "rolebinding", Kind: "RoleBinding", Namespaced: true, Verbs: allVerbs, Strategy: plain, WriteCheck: o.RBACWriteCheck},
		{GroupVersion: rbacV1, Name: "clusterroles", SingularName: "clusterrole", Kind: "ClusterRole", Verbs: allVerbs, Strategy: plain, WriteCheck: o.RBACWriteCheck},
		{GroupVersion: rbacV1, Name: "clusterrolebindings", SingularName: "clusterrolebinding", Kind: "ClusterRoleBinding", Verbs: allVerbs, Strategy: plain, WriteCheck: o.RBACWriteCheck},

		{GroupVersion: networkingV1, Name: "ingresses", SingularName: "ingress", Kind: "Ingress", Namespaced: true, ShortNames: []string{"ing"},
			Verbs: allVerbs, Subresources: subs(ingressStatus()), StoragePath: "ingress", Strategy: ingressStrategy{withGeneration}},
		{GroupVersion: networkingV1, Name: "ingressclasses", SingularName: "ingressclass", Kind: "IngressClass",
			Verbs: allVerbs, Strategy: Generic{Generation: true}},
		{GroupVersion: networkingV1, Name: "networkpolicies", SingularName: "networkpolicy", Kind: "NetworkPolicy", Namespaced: true, ShortNames: []string{"netpol"},
			Verbs: allVerbs, Strategy: networkPolicyStrategy{Generic{Generation: true}}},

		{GroupVersion: schedulingV1, Name: "priorityclasses", SingularName: "priorityclass", Kind: "PriorityClass", ShortNames: []string{"pc"},
			Verbs: allVerbs, Strategy: plain},

		{GroupVersion: admissionV1, Name: "mutatingwebhookconfigurations", SingularName: "mutatingwebhookconfiguration", Kind: "MutatingWebhookConfiguration",
			Categories: []string{"api-extensions"}, Verbs: allVerbs, Strategy: Generic{Generation: true}},
		{GroupVersion: admissionV1, Name: "validatingwebhookconfigurations", SingularName: "validatingwebhookconfiguration", Kind: "ValidatingWebhookConfiguration",
			Categories: []string{"api-extensions"}, Verbs: allVerbs, Strategy: Generic{Generation: true}},
		{GroupVersion: admissionV1, Name: "validatingadmissionpolicies", SingularName: "validatingadmissionpolicy", Kind: "ValidatingAdmissionPolicy",
			Categories: []string{"api-extensions"}, Verbs: allVerbs, Subresources: subs(status(admissionV1, "ValidatingAdmissionPolicy")), Strategy: withGeneration},
		{GroupVersion: admissionV1, Name: "validatingadmissionpolicybindings", SingularName: "validatingadmissionpolicybinding", Kind: "ValidatingAdmissionPolicyBinding",
			Categories: []string{"api-extensions"}, Verbs: allVerbs, Strategy: Generic{Generation: true}},
	}...)
}

var (
	rbacV1       = schema.GroupVersion{Group: "rbac.authorization.k8s.io", Version: "v1"}
	admissionV1  = schema.GroupVersion{Group: "admissionregistration.k8s.io", Version: "v1"}
	schedulingV1 = schema.GroupVersion{Group: "scheduling.k8s.io", Version: "v1"}
)

// createNamespace sets what kube's namespace strategy sets: the kubernetes
// finalizer and phase Active.
func createNamespace(obj runtime.Object) {
	ns := obj.(*corev1.Namespace)
	ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	for _, f := range ns.Spec.Finalizers {
		if f == corev1.FinalizerKubernetes {
			return
		}
	}
	ns.Spec.Finalizers = append(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
}

// updateNamespace keeps spec.finalizers: only /finalize changes them.
func updateNamespace(obj, old runtime.Object) {
	obj.(*corev1.Namespace).Spec.Finalizers = old.(*corev1.Namespace).Spec.Finalizers
}

// kubeletSubresources are the pods' subresources kube serves from the
// pod's kubelet, with the kinds and verbs kube's discovery lists.
var kubeletSubresources = []*Subresource{
	{Name: "log", Kind: "Pod", GroupVersion: coreV1, Verbs: []string{"get"}, Kubelet: true},
	{Name: "exec", Kind: "PodExecOptions", GroupVersion: coreV1, Verbs: []string{"create", "get"}, Kubelet: true},
	{Name: "attach", Kind: "PodAttachOptions", GroupVersion: coreV1, Verbs: []string{"create", "get"}, Kubelet: true},
	{Name: "portforward", Kind: "PodPortForwardOptions", GroupVersion: coreV1, Verbs: []string{"create", "get"}, Kubelet: true},
}

// secretStrategy folds stringData into data where kube does: in the
// conversion of a decoded Secret to the internal version, before the
// field manager records the write (managedFields own f:data, not
// f:stringData) and, for an apply, after the field manager merged it.
// Default is where both paths pass: decode calls it on every decoded or
// patched object, the field manager on every applied one.
type secretStrategy struct{ Generic }

// Default implements Strategy.
func (s secretStrategy) Default(obj runtime.Object) {
	s.Generic.Default(obj)
	mergeStringData(obj)
}

// mergeStringData moves stringData into data, as kube's conversion does:
// stringData is write-only and wins over data for the same key.
func mergeStringData(obj runtime.Object) {
	sec := obj.(*corev1.Secret)
	if len(sec.StringData) == 0 {
		return
	}
	if sec.Data == nil {
		sec.Data = map[string][]byte{}
	}
	for k, v := range sec.StringData {
		sec.Data[k] = []byte(v)
	}
	sec.StringData = nil
}

// namespaceFinalize is /finalize: only spec.finalizers change.
type namespaceFinalize struct{}

func (namespaceFinalize) PrepareForUpdate(obj, old runtime.Object) {
	ns, o := obj.(*corev1.Namespace), old.(*corev1.Namespace)
	finalizers := ns.Spec.Finalizers
	*ns = *o.DeepCopy()
	ns.Spec.Finalizers = finalizers
}

func (namespaceFinalize) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.ValidateUpdate(obj, old)
}

// createPod starts a pod Pending with its QoS class, as kube's pod strategy.
func createPod(obj runtime.Object) {
	pod := obj.(*corev1.Pod)
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: qosClass(pod)}
}

func podFields(obj runtime.Object) fields.Set {
	p := obj.(*corev1.Pod)
	return fields.Set{
		"spec.nodeName":            p.Spec.NodeName,
		"spec.restartPolicy":       string(p.Spec.RestartPolicy),
		"spec.schedulerName":       p.Spec.SchedulerName,
		"spec.serviceAccountName":  p.Spec.ServiceAccountName,
		"spec.hostNetwork":         strconv.FormatBool(p.Spec.HostNetwork),
		"status.phase":             string(p.Status.Phase),
		"status.podIP":             p.Status.PodIP,
		"status.nominatedNodeName": p.Status.NominatedNodeName,
	}
}

func eventFields(obj runtime.Object) fields.Set {
	e := obj.(*corev1.Event)
	return fields.Set{
		"involvedObject.kind":            e.InvolvedObject.Kind,
		"involvedObject.namespace":       e.InvolvedObject.Namespace,
		"involvedObject.name":            e.InvolvedObject.Name,
		"involvedObject.uid":             string(e.InvolvedObject.UID),
		"involvedObject.apiVersion":      e.InvolvedObject.APIVersion,
		"involvedObject.resourceVersion": e.InvolvedObject.ResourceVersion,
		"involvedObject.fieldPath":       e.InvolvedObject.FieldPath,
		"reason":                         e.Reason,
		"reportingComponent":             e.ReportingController,
		"source":                         e.Source.Component,
		"type":                           e.Type,
	}
}

// qosClass is kube's QoS rule: Guaranteed when every container has equal
// cpu and memory requests and limits, BestEffort when none has any,
// Burstable otherwise.
func qosClass(pod *corev1.Pod) corev1.PodQOSClass {
	containers := append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	any, guaranteed := false, true
	for _, c := range containers {
		if len(c.Resources.Requests) > 0 || len(c.Resources.Limits) > 0 {
			any = true
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			l, hasLimit := c.Resources.Limits[r]
			q, hasReq := c.Resources.Requests[r]
			if !hasLimit || (hasReq && q.Cmp(l) != 0) {
				guaranteed = false
			}
		}
	}
	switch {
	case !any:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

package tables

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func init() {
	register("apps", "controllerrevisions", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Controller", Type: "string", Description: "Controller of the object"},
		{Name: "Revision", Type: "string", Description: appsv1.ControllerRevision{}.SwaggerDoc()["revision"]},
		ageColumn,
	}, func(r *appsv1.ControllerRevision, now time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{r.Name, controllerName(r), r.Revision, age(r.CreationTimestamp, now)}}
	}))

	register("apps", "deployments", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
		{Name: "Up-to-date", Type: "string", Description: appsv1.DeploymentStatus{}.SwaggerDoc()["updatedReplicas"]},
		{Name: "Available", Type: "string", Description: appsv1.DeploymentStatus{}.SwaggerDoc()["availableReplicas"]},
		ageColumn,
		containersWide,
		imagesWide,
		{Name: "Selector", Type: "string", Priority: 1, Description: appsv1.DeploymentSpec{}.SwaggerDoc()["selector"]},
	}, deploymentRow))

	register("apps", "replicasets", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Desired", Type: "integer", Description: appsv1.ReplicaSetSpec{}.SwaggerDoc()["replicas"]},
		{Name: "Current", Type: "integer", Description: appsv1.ReplicaSetStatus{}.SwaggerDoc()["replicas"]},
		{Name: "Ready", Type: "integer", Description: appsv1.ReplicaSetStatus{}.SwaggerDoc()["readyReplicas"]},
		ageColumn,
		containersWide,
		imagesWide,
		{Name: "Selector", Type: "string", Priority: 1, Description: appsv1.ReplicaSetSpec{}.SwaggerDoc()["selector"]},
	}, func(rs *appsv1.ReplicaSet, now time.Time) metav1.TableRow {
		names, images := containerCells(rs.Spec.Template.Spec.Containers)
		return metav1.TableRow{Cells: []any{
			rs.Name, replicas(rs.Spec.Replicas), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas), age(rs.CreationTimestamp, now),
			names, images, metav1.FormatLabelSelector(rs.Spec.Selector),
		}}
	}))

	// StatefulSets have no wide SELECTOR in kube.
	register("apps", "statefulsets", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
		ageColumn,
		containersWide,
		imagesWide,
	}, func(ss *appsv1.StatefulSet, now time.Time) metav1.TableRow {
		names, images := containerCells(ss.Spec.Template.Spec.Containers)
		return metav1.TableRow{Cells: []any{
			ss.Name, fmt.Sprintf("%d/%d", ss.Status.ReadyReplicas, replicas(ss.Spec.Replicas)), age(ss.CreationTimestamp, now),
			names, images,
		}}
	}))

	register("apps", "daemonsets", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Desired", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["desiredNumberScheduled"]},
		{Name: "Current", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["currentNumberScheduled"]},
		{Name: "Ready", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["numberReady"]},
		{Name: "Up-to-date", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["updatedNumberScheduled"]},
		{Name: "Available", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["numberAvailable"]},
		{Name: "Node Selector", Type: "string", Description: corev1.PodSpec{}.SwaggerDoc()["nodeSelector"]},
		ageColumn,
		containersWide,
		imagesWide,
		{Name: "Selector", Type: "string", Priority: 1, Description: appsv1.DaemonSetSpec{}.SwaggerDoc()["selector"]},
	}, func(ds *appsv1.DaemonSet, now time.Time) metav1.TableRow {
		names, images := containerCells(ds.Spec.Template.Spec.Containers)
		st := ds.Status
		return metav1.TableRow{Cells: []any{
			ds.Name,
			int64(st.DesiredNumberScheduled), int64(st.CurrentNumberScheduled), int64(st.NumberReady), int64(st.UpdatedNumberScheduled), int64(st.NumberAvailable),
			labels.FormatLabels(ds.Spec.Template.Spec.NodeSelector),
			age(ds.CreationTimestamp, now),
			names, images, metav1.FormatLabelSelector(ds.Spec.Selector),
		}}
	}))
}

func deploymentRow(d *appsv1.Deployment, now time.Time) metav1.TableRow {
	// Unlike the other workloads, kube prints an empty deployment
	// selector as "" rather than "<none>".
	selector := "<invalid>"
	if s, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err == nil {
		selector = s.String()
	}
	names, images := containerCells(d.Spec.Template.Spec.Containers)
	return metav1.TableRow{Cells: []any{
		d.Name,
		fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, replicas(d.Spec.Replicas)),
		int64(d.Status.UpdatedReplicas),
		int64(d.Status.AvailableReplicas),
		age(d.CreationTimestamp, now),
		names, images, selector,
	}}
}

// controllerName is kube's CONTROLLER cell: "<kind>.<group>/<name>" in
// lower case for the controller owner, "<none>" without one. Validation
// keeps an owner's apiVersion parseable.
func controllerName(obj metav1.Object) string {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil {
		return "<none>"
	}
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	gk := gv.WithKind(ref.Kind).GroupKind()
	if gk.Empty() {
		return ref.Name
	}
	return strings.ToLower(gk.String()) + "/" + ref.Name
}

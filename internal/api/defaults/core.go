package defaults

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// roundResourceList rounds every quantity up to milli precision. kube does
// this on every resource list for API compatibility, instead of rejecting
// values finer than 1m.
func roundResourceList(l corev1.ResourceList) {
	for name, q := range l {
		q.RoundUp(resource.Milli)
		l[name] = q
	}
}

func roundRequirements(r *corev1.ResourceRequirements) {
	if r != nil {
		roundResourceList(r.Limits)
		roundResourceList(r.Requests)
	}
}

// replicationController defaults the selector and the labels from the pod
// template's labels, then the replica count and the template.
func replicationController(rc *corev1.ReplicationController) {
	if t := rc.Spec.Template; t != nil && t.Labels != nil {
		// Copies, so that later edits of one map do not change the other.
		if len(rc.Spec.Selector) == 0 {
			rc.Spec.Selector = maps.Clone(t.Labels)
		}
		if len(rc.Labels) == 0 {
			rc.Labels = maps.Clone(t.Labels)
		}
	}
	if rc.Spec.Replicas == nil {
		rc.Spec.Replicas = ptr.To[int32](1)
	}
	if rc.Spec.Template != nil {
		podSpec(&rc.Spec.Template.Spec)
	}
}

func endpoints(e *corev1.Endpoints) {
	for i := range e.Subsets {
		for j := range e.Subsets[i].Ports {
			if p := &e.Subsets[i].Ports[j]; p.Protocol == "" {
				p.Protocol = corev1.ProtocolTCP
			}
		}
	}
}

// configMap gives a ConfigMap an empty data map; it is not visible on the
// wire (data is omitted when empty) but kube sets it.
func configMap(c *corev1.ConfigMap) {
	if c.Data == nil {
		c.Data = map[string]string{}
	}
}

func secret(s *corev1.Secret) {
	if s.Type == "" {
		s.Type = corev1.SecretTypeOpaque
	}
}

// namespace labels a named namespace with its own name (so that namespace
// selectors can pick it by name) and starts it Active.
func namespace(n *corev1.Namespace) {
	// A namespace created with generateName has no name yet.
	if n.Name != "" {
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels[corev1.LabelMetadataName] = n.Name
	}
	if n.Status.Phase == "" {
		n.Status.Phase = corev1.NamespaceActive
	}
}

// node defaults allocatable to capacity when a node reports only capacity.
func node(n *corev1.Node) {
	s := &n.Status
	if s.Allocatable == nil && s.Capacity != nil {
		s.Allocatable = make(corev1.ResourceList, len(s.Capacity))
		for name, q := range s.Capacity {
			s.Allocatable[name] = q.DeepCopy()
		}
	}
	roundResourceList(s.Capacity)
	roundResourceList(s.Allocatable)
}

func limitRange(lr *corev1.LimitRange) {
	for i := range lr.Spec.Limits {
		item := &lr.Spec.Limits[i]
		if item.Type == corev1.LimitTypeContainer {
			containerLimitDefaults(item)
		}
		roundResourceList(item.Max)
		roundResourceList(item.Min)
		roundResourceList(item.Default)
		roundResourceList(item.DefaultRequest)
		roundResourceList(item.MaxLimitRequestRatio)
	}
}

// containerLimitDefaults fills a container limit range's default limit from
// its max, and its default request from the default limit, then from min.
func containerLimitDefaults(item *corev1.LimitRangeItem) {
	if item.Default == nil {
		item.Default = corev1.ResourceList{}
	}
	if item.DefaultRequest == nil {
		item.DefaultRequest = corev1.ResourceList{}
	}
	fillMissing(item.Default, item.Max)
	fillMissing(item.DefaultRequest, item.Default)
	fillMissing(item.DefaultRequest, item.Min)
}

// fillMissing copies into dst the quantities of src that dst lacks.
func fillMissing(dst, src corev1.ResourceList) {
	for name, q := range src {
		if _, ok := dst[name]; !ok {
			dst[name] = q.DeepCopy()
		}
	}
}

func resourceQuota(q *corev1.ResourceQuota) {
	roundResourceList(q.Spec.Hard)
	roundResourceList(q.Status.Hard)
	roundResourceList(q.Status.Used)
}

func persistentVolumeClaim(c *corev1.PersistentVolumeClaim) {
	if c.Status.Phase == "" {
		c.Status.Phase = corev1.ClaimPending
	}
	persistentVolumeClaimSpec(&c.Spec)
	roundResourceList(c.Status.Capacity)
	roundResourceList(c.Status.AllocatedResources)
}

// persistentVolumeClaimSpec defaults a claim spec wherever it appears: in a
// claim, a StatefulSet's volumeClaimTemplates and a pod's ephemeral volume.
func persistentVolumeClaimSpec(s *corev1.PersistentVolumeClaimSpec) {
	if s.VolumeMode == nil {
		s.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
	}
	roundResourceList(s.Resources.Limits)
	roundResourceList(s.Resources.Requests)
}

func persistentVolume(pv *corev1.PersistentVolume) {
	if pv.Status.Phase == "" {
		pv.Status.Phase = corev1.VolumePending
	}
	s := &pv.Spec
	if s.PersistentVolumeReclaimPolicy == "" {
		s.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	}
	if s.VolumeMode == nil {
		s.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
	}
	roundResourceList(s.Capacity)
	src := &s.PersistentVolumeSource
	if src.HostPath != nil {
		hostPathType(&src.HostPath.Type)
	}
	if src.RBD != nil {
		rbd(&src.RBD.RBDPool, &src.RBD.RadosUser, &src.RBD.Keyring)
	}
	if src.ISCSI != nil && src.ISCSI.ISCSIInterface == "" {
		src.ISCSI.ISCSIInterface = "default"
	}
	if src.AzureDisk != nil {
		azureDisk(src.AzureDisk)
	}
	if src.ScaleIO != nil {
		scaleIO(&src.ScaleIO.StorageMode, &src.ScaleIO.FSType)
	}
}

package tables

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Node role labels, as kubectl and kube's printer read them.
const (
	nodeRoleLabelPrefix = "node-role.kubernetes.io/"
	nodeRoleLabel       = "kubernetes.io/role"
)

func init() {
	register("", "services", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Type", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["type"]},
		{Name: "Cluster-IP", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["clusterIP"]},
		{Name: "External-IP", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["externalIPs"]},
		{Name: "Port(s)", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["ports"]},
		ageColumn,
		{Name: "Selector", Type: "string", Priority: 1, Description: corev1.ServiceSpec{}.SwaggerDoc()["selector"]},
	}, serviceRow))

	register("", "endpoints", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Endpoints", Type: "string", Description: corev1.Endpoints{}.SwaggerDoc()["subsets"]},
		ageColumn,
	}, func(e *corev1.Endpoints, now time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{e.Name, formatEndpoints(e), age(e.CreationTimestamp, now)}}
	}))

	register("", "namespaces", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Status", Type: "string", Description: "The status of the namespace"},
		ageColumn,
	}, func(ns *corev1.Namespace, now time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{ns.Name, string(ns.Status.Phase), age(ns.CreationTimestamp, now)}}
	}))

	register("", "nodes", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Status", Type: "string", Description: "The status of the node"},
		{Name: "Roles", Type: "string", Description: "The roles of the node"},
		ageColumn,
		{Name: "Version", Type: "string", Description: corev1.NodeSystemInfo{}.SwaggerDoc()["kubeletVersion"]},
		{Name: "Internal-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
		{Name: "External-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
		{Name: "OS-Image", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["osImage"]},
		{Name: "Kernel-Version", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["kernelVersion"]},
		{Name: "Container-Runtime", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["containerRuntimeVersion"]},
	}, nodeRow))

	register("", "configmaps", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Data", Type: "string", Description: corev1.ConfigMap{}.SwaggerDoc()["data"]},
		ageColumn,
	}, func(cm *corev1.ConfigMap, now time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), age(cm.CreationTimestamp, now)}}
	}))

	register("", "secrets", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Type", Type: "string", Description: corev1.Secret{}.SwaggerDoc()["type"]},
		{Name: "Data", Type: "string", Description: corev1.Secret{}.SwaggerDoc()["data"]},
		ageColumn,
	}, func(s *corev1.Secret, now time.Time) metav1.TableRow {
		// StringData never reaches storage: kube folds it into Data on
		// write, so only Data is counted.
		return metav1.TableRow{Cells: []any{s.Name, string(s.Type), int64(len(s.Data)), age(s.CreationTimestamp, now)}}
	}))

	// Kube dropped the SECRETS column in 1.24, when token secrets stopped
	// being generated for service accounts.
	register("", "serviceaccounts", typed([]metav1.TableColumnDefinition{
		nameColumn,
		ageColumn,
	}, func(sa *corev1.ServiceAccount, now time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{sa.Name, age(sa.CreationTimestamp, now)}}
	}))

	eventColumns := []metav1.TableColumnDefinition{
		{Name: "Last Seen", Type: "string", Description: corev1.Event{}.SwaggerDoc()["lastTimestamp"]},
		{Name: "Type", Type: "string", Description: corev1.Event{}.SwaggerDoc()["type"]},
		{Name: "Reason", Type: "string", Description: corev1.Event{}.SwaggerDoc()["reason"]},
		{Name: "Object", Type: "string", Description: corev1.Event{}.SwaggerDoc()["involvedObject"]},
		{Name: "Subobject", Type: "string", Priority: 1, Description: corev1.ObjectReference{}.SwaggerDoc()["fieldPath"]},
		{Name: "Source", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["source"]},
		{Name: "Message", Type: "string", Description: corev1.Event{}.SwaggerDoc()["message"]},
		{Name: "First Seen", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["firstTimestamp"]},
		{Name: "Count", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["count"]},
		{Name: "Name", Type: "string", Priority: 1, Format: "name", Description: objectMetaDoc["name"]},
	}
	register("", "events", typed(eventColumns, eventRow))
	// events.k8s.io is another view of the same events, printed alike.
	register("events.k8s.io", "events", typed(eventColumns, func(e *eventsv1.Event, now time.Time) metav1.TableRow {
		return eventRow(coreEvent(e), now)
	}))

	register("", "resourcequotas", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Request", Type: "string", Description: "Request represents a minimum amount of cpu/memory that a container may consume."},
		{Name: "Limit", Type: "string", Description: "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."},
		ageColumn,
	}, resourceQuotaRow))

	register("", "persistentvolumeclaims", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Status", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["phase"]},
		{Name: "Volume", Type: "string", Description: corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeName"]},
		{Name: "Capacity", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["capacity"]},
		{Name: "Access Modes", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["accessModes"]},
		{Name: "StorageClass", Type: "string", Description: "StorageClass of the pvc"},
		{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pvc"},
		ageColumn,
		{Name: "VolumeMode", Type: "string", Priority: 1, Description: corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeMode"]},
	}, pvcRow))

	register("", "persistentvolumes", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Capacity", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["capacity"]},
		{Name: "Access Modes", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["accessModes"]},
		{Name: "Reclaim Policy", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["persistentVolumeReclaimPolicy"]},
		{Name: "Status", Type: "string", Description: corev1.PersistentVolumeStatus{}.SwaggerDoc()["phase"]},
		{Name: "Claim", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["claimRef"]},
		{Name: "StorageClass", Type: "string", Description: "StorageClass of the pv"},
		{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pv"},
		{Name: "Reason", Type: "string", Description: corev1.PersistentVolumeStatus{}.SwaggerDoc()["reason"]},
		ageColumn,
		{Name: "VolumeMode", Type: "string", Priority: 1, Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["volumeMode"]},
	}, pvRow))

	register("", "replicationcontrollers", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Desired", Type: "integer", Description: corev1.ReplicationControllerSpec{}.SwaggerDoc()["replicas"]},
		{Name: "Current", Type: "integer", Description: corev1.ReplicationControllerStatus{}.SwaggerDoc()["replicas"]},
		{Name: "Ready", Type: "integer", Description: corev1.ReplicationControllerStatus{}.SwaggerDoc()["readyReplicas"]},
		ageColumn,
		containersWide,
		imagesWide,
		{Name: "Selector", Type: "string", Priority: 1, Description: corev1.ReplicationControllerSpec{}.SwaggerDoc()["selector"]},
	}, func(rc *corev1.ReplicationController, now time.Time) metav1.TableRow {
		var containers []corev1.Container
		if rc.Spec.Template != nil {
			containers = rc.Spec.Template.Spec.Containers
		}
		names, images := containerCells(containers)
		return metav1.TableRow{Cells: []any{
			rc.Name, replicas(rc.Spec.Replicas), int64(rc.Status.Replicas), int64(rc.Status.ReadyReplicas), age(rc.CreationTimestamp, now),
			names, images, labels.FormatLabels(rc.Spec.Selector),
		}}
	}))

	register("", "podtemplates", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Containers", Type: "string", Description: "Names of each container in the template."},
		{Name: "Images", Type: "string", Description: "Images referenced by each container in the template."},
		{Name: "Pod Labels", Type: "string", Description: "The labels for the pod template."},
	}, func(pt *corev1.PodTemplate, _ time.Time) metav1.TableRow {
		names, images := containerCells(pt.Template.Spec.Containers)
		return metav1.TableRow{Cells: []any{pt.Name, names, images, labels.FormatLabels(pt.Template.Labels)}}
	}))
}

func serviceRow(svc *corev1.Service, now time.Time) metav1.TableRow {
	// Defaulting sets an empty type to ClusterIP before kube ever prints.
	svcType := svc.Spec.Type
	if svcType == "" {
		svcType = corev1.ServiceTypeClusterIP
	}
	clusterIP := svc.Spec.ClusterIP
	if len(svc.Spec.ClusterIPs) > 0 {
		clusterIP = svc.Spec.ClusterIPs[0]
	}
	ports := servicePorts(svc.Spec.Ports)
	if ports == "" {
		ports = "<none>"
	}
	return metav1.TableRow{Cells: []any{
		svc.Name,
		string(svcType),
		orNone(clusterIP),
		serviceExternalIP(svc, svcType),
		ports,
		age(svc.CreationTimestamp, now),
		labels.FormatLabels(svc.Spec.Selector),
	}}
}

// serviceExternalIP is EXTERNAL-IP: the external IPs, and for a load
// balancer its ingress points, "<pending>" until it has one.
func serviceExternalIP(svc *corev1.Service, svcType corev1.ServiceType) string {
	switch svcType {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(svc.Spec.ExternalIPs) > 0 {
			return strings.Join(svc.Spec.ExternalIPs, ",")
		}
		return "<none>"
	case corev1.ServiceTypeLoadBalancer:
		ips := loadBalancerIngress(svc.Status.LoadBalancer.Ingress)
		ips = append(ips, svc.Spec.ExternalIPs...)
		if len(ips) == 0 {
			return "<pending>"
		}
		return strings.Join(ips, ",")
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	}
	return "<unknown>"
}

// loadBalancerIngress lists the distinct ingress IPs, or hostnames where
// there is no IP, sorted. Not truncated: kube prints wide on the server.
func loadBalancerIngress(ingress []corev1.LoadBalancerIngress) []string {
	seen := map[string]bool{}
	var out []string
	for _, in := range ingress {
		v := in.IP
		if v == "" {
			v = in.Hostname
		}
		if v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

// servicePorts is PORT(S): "80/TCP,443:30443/TCP".
func servicePorts(ports []corev1.ServicePort) string {
	parts := make([]string, len(ports))
	for i, p := range ports {
		proto := p.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP // the default kube fills in
		}
		if p.NodePort > 0 {
			parts[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, proto)
		} else {
			parts[i] = fmt.Sprintf("%d/%s", p.Port, proto)
		}
	}
	return strings.Join(parts, ",")
}

// formatEndpoints is ENDPOINTS: up to three ip:port pairs (bare IPs for a
// subset without ports), then "+ N more...". Subsets without addresses
// print as an empty cell, as in kube.
func formatEndpoints(e *corev1.Endpoints) string {
	if len(e.Subsets) == 0 {
		return "<none>"
	}
	var all []string
	for _, ss := range e.Subsets {
		if len(ss.Ports) == 0 {
			for _, a := range ss.Addresses {
				all = append(all, a.IP)
			}
			continue
		}
		for _, p := range ss.Ports {
			for _, a := range ss.Addresses {
				all = append(all, net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))))
			}
		}
	}
	const max = 3
	if len(all) > max {
		return fmt.Sprintf("%s + %d more...", strings.Join(all[:max], ","), len(all)-max)
	}
	return strings.Join(all, ",")
}

func nodeRow(n *corev1.Node, now time.Time) metav1.TableRow {
	// Only the Ready condition makes STATUS; the others show in describe.
	var status []string
	for _, c := range n.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			status = []string{string(c.Type)}
		} else {
			status = []string{"Not" + string(c.Type)}
		}
	}
	if len(status) == 0 {
		status = []string{"Unknown"}
	}
	if n.Spec.Unschedulable {
		status = append(status, "SchedulingDisabled")
	}

	roles := nodeRoles(n.Labels)
	rolesCell := strings.Join(roles, ",")
	if rolesCell == "" {
		rolesCell = "<none>"
	}

	info := n.Status.NodeInfo
	osImage, kernel, crVersion := orUnknown(info.OSImage), orUnknown(info.KernelVersion), orUnknown(info.ContainerRuntimeVersion)
	if info.Architecture != "" {
		kernel += " (" + info.Architecture + ")"
	}
	return metav1.TableRow{Cells: []any{
		n.Name,
		strings.Join(status, ","),
		rolesCell,
		age(n.CreationTimestamp, now),
		info.KubeletVersion,
		nodeAddress(n, corev1.NodeInternalIP),
		nodeAddress(n, corev1.NodeExternalIP),
		osImage,
		kernel,
		crVersion,
	}}
}

// nodeRoles reads node-role.kubernetes.io/<role> keys and the older
// kubernetes.io/role=<role> label, sorted and without duplicates.
func nodeRoles(ls map[string]string) []string {
	set := map[string]bool{}
	for k, v := range ls {
		switch {
		case strings.HasPrefix(k, nodeRoleLabelPrefix):
			if r := strings.TrimPrefix(k, nodeRoleLabelPrefix); r != "" {
				set[r] = true
			}
		case k == nodeRoleLabel && v != "":
			set[v] = true
		}
	}
	roles := make([]string, 0, len(set))
	for r := range set {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	return roles
}

func nodeAddress(n *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range n.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return "<none>"
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}

// coreEvent maps an events.k8s.io event onto the core fields the printer
// reads, as kube's conversion between the two does.
func coreEvent(e *eventsv1.Event) *corev1.Event {
	out := &corev1.Event{
		ObjectMeta:          e.ObjectMeta,
		InvolvedObject:      e.Regarding,
		Reason:              e.Reason,
		Message:             e.Note,
		Source:              e.DeprecatedSource,
		FirstTimestamp:      e.DeprecatedFirstTimestamp,
		LastTimestamp:       e.DeprecatedLastTimestamp,
		Count:               e.DeprecatedCount,
		Type:                e.Type,
		EventTime:           e.EventTime,
		ReportingController: e.ReportingController,
		ReportingInstance:   e.ReportingInstance,
	}
	if e.Series != nil {
		out.Series = &corev1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	return out
}

func eventRow(e *corev1.Event, now time.Time) metav1.TableRow {
	// Events from the events.k8s.io API carry eventTime and series
	// instead of the first/last timestamps and count.
	first := age(e.FirstTimestamp, now)
	if e.FirstTimestamp.IsZero() {
		first = microAge(e.EventTime, now)
	}
	last := age(e.LastTimestamp, now)
	if e.LastTimestamp.IsZero() {
		last = first
	}
	count := e.Count
	if e.Series != nil {
		last = microAge(e.Series.LastObservedTime, now)
		count = e.Series.Count
	} else if count == 0 {
		count = 1
	}

	target := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		target += "/" + e.InvolvedObject.Name
	}

	component := firstNonEmpty(e.Source.Component, e.ReportingController)
	source := component
	if instance := firstNonEmpty(e.Source.Host, e.ReportingInstance); instance != "" {
		source = component + ", " + instance
	}

	return metav1.TableRow{Cells: []any{
		last,
		e.Type,
		e.Reason,
		target,
		e.InvolvedObject.FieldPath,
		source,
		strings.TrimSpace(e.Message),
		first,
		int64(count),
		e.Name,
	}}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// resourceQuotaRow prints "resource: used/hard" pairs sorted by name,
// limits.* under LIMIT and everything else under REQUEST.
func resourceQuotaRow(q *corev1.ResourceQuota, now time.Time) metav1.TableRow {
	names := make([]string, 0, len(q.Status.Hard))
	for n := range q.Status.Hard {
		names = append(names, string(n))
	}
	sort.Strings(names)
	var request, limit []string
	for _, n := range names {
		used := q.Status.Used[corev1.ResourceName(n)]
		hard := q.Status.Hard[corev1.ResourceName(n)]
		pair := fmt.Sprintf("%s: %s/%s", n, used.String(), hard.String())
		if pieces := strings.Split(n, "."); len(pieces) > 1 && pieces[0] == "limits" {
			limit = append(limit, pair)
		} else {
			request = append(request, pair)
		}
	}
	return metav1.TableRow{Cells: []any{q.Name, strings.Join(request, ", "), strings.Join(limit, ", "), age(q.CreationTimestamp, now)}}
}

func pvcRow(pvc *corev1.PersistentVolumeClaim, now time.Time) metav1.TableRow {
	phase := string(pvc.Status.Phase)
	if pvc.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	// Capacity and access modes are the bound volume's, so blank until
	// the claim is bound.
	capacity, modes := "", ""
	if pvc.Spec.VolumeName != "" {
		modes = accessModes(pvc.Status.AccessModes)
		q := pvc.Status.Capacity[corev1.ResourceStorage]
		capacity = q.String()
	}
	class := ""
	if c, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		class = c
	} else if pvc.Spec.StorageClassName != nil {
		class = *pvc.Spec.StorageClassName
	}
	return metav1.TableRow{Cells: []any{
		pvc.Name,
		phase,
		pvc.Spec.VolumeName,
		capacity,
		modes,
		class,
		derefOrUnset(pvc.Spec.VolumeAttributesClassName),
		age(pvc.CreationTimestamp, now),
		volumeMode(pvc.Spec.VolumeMode),
	}}
}

func pvRow(pv *corev1.PersistentVolume, now time.Time) metav1.TableRow {
	claim := ""
	if ref := pv.Spec.ClaimRef; ref != nil {
		claim = ref.Namespace + "/" + ref.Name
	}
	phase := string(pv.Status.Phase)
	if pv.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	class := pv.Spec.StorageClassName
	if c, ok := pv.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		class = c
	}
	size := pv.Spec.Capacity[corev1.ResourceStorage]
	return metav1.TableRow{Cells: []any{
		pv.Name,
		size.String(),
		accessModes(pv.Spec.AccessModes),
		string(pv.Spec.PersistentVolumeReclaimPolicy),
		phase,
		claim,
		class,
		derefOrUnset(pv.Spec.VolumeAttributesClassName),
		pv.Status.Reason,
		age(pv.CreationTimestamp, now),
		volumeMode(pv.Spec.VolumeMode),
	}}
}

// accessModes abbreviates access modes in kube's fixed order.
func accessModes(modes []corev1.PersistentVolumeAccessMode) string {
	has := map[corev1.PersistentVolumeAccessMode]bool{}
	for _, m := range modes {
		has[m] = true
	}
	var out []string
	for _, m := range []struct {
		mode  corev1.PersistentVolumeAccessMode
		short string
	}{
		{corev1.ReadWriteOnce, "RWO"},
		{corev1.ReadOnlyMany, "ROX"},
		{corev1.ReadWriteMany, "RWX"},
		{corev1.ReadWriteOncePod, "RWOP"},
	} {
		if has[m.mode] {
			out = append(out, m.short)
		}
	}
	return strings.Join(out, ",")
}

func volumeMode(m *corev1.PersistentVolumeMode) string {
	if m == nil {
		return "<unset>"
	}
	return string(*m)
}

func derefOrUnset(s *string) string {
	if s == nil {
		return "<unset>"
	}
	return *s
}

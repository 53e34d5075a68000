package tables

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestServiceRows(t *testing.T) {
	svc := func(name string, spec corev1.ServiceSpec) *corev1.Service {
		return &corev1.Service{ObjectMeta: om("default", name), Spec: spec}
	}
	lb := svc("lb", corev1.ServiceSpec{
		Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.96.3.3", ClusterIPs: []string{"10.96.3.3"},
		Ports: []corev1.ServicePort{{Port: 80, NodePort: 31000, Protocol: corev1.ProtocolTCP}},
	})
	lbReady := lb.DeepCopy()
	lbReady.Name = "lb-ready"
	lbReady.Spec.ExternalIPs = []string{"192.0.2.10"}
	lbReady.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{
		{IP: "203.0.113.7"}, {Hostname: "a1.elb.example.com"}, {IP: "203.0.113.7"},
	}

	runRows(t, schema.GroupResource{Resource: "services"}, []rowCase{
		{
			name: "kubernetes ClusterIP",
			obj: svc("kubernetes", corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.1", ClusterIPs: []string{"10.96.0.1"},
				Ports: []corev1.ServicePort{{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP}},
			}),
			want: []any{"kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP", "10m", "<none>"},
		},
		{
			name: "NodePort with selector",
			obj: svc("web", corev1.ServiceSpec{
				Type: corev1.ServiceTypeNodePort, ClusterIP: "10.96.1.2", ClusterIPs: []string{"10.96.1.2", "fd00::2"},
				Selector: map[string]string{"app": "web", "tier": "fe"},
				Ports: []corev1.ServicePort{
					{Name: "http", Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP},
					{Name: "https", Port: 443, NodePort: 30443, Protocol: corev1.ProtocolTCP},
				},
			}),
			want: []any{"web", "NodePort", "10.96.1.2", "<none>", "80:30080/TCP,443:30443/TCP", "10m", "app=web,tier=fe"},
		},
		{
			name: "ClusterIP with external IPs and UDP",
			obj: svc("dns", corev1.ServiceSpec{
				ClusterIP: "10.96.0.10", ExternalIPs: []string{"192.0.2.1", "192.0.2.2"},
				Ports: []corev1.ServicePort{{Port: 53, Protocol: corev1.ProtocolUDP}, {Port: 53}},
			}),
			want: []any{"dns", "ClusterIP", "10.96.0.10", "192.0.2.1,192.0.2.2", "53/UDP,53/TCP", "10m", "<none>"},
		},
		{
			name: "headless",
			obj:  svc("db", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "None", ClusterIPs: []string{"None"}}),
			want: []any{"db", "ClusterIP", "None", "<none>", "<none>", "10m", "<none>"},
		},
		{name: "LoadBalancer pending", obj: lb, want: []any{"lb", "LoadBalancer", "10.96.3.3", "<pending>", "80:31000/TCP", "10m", "<none>"}},
		{
			name: "LoadBalancer with ingress and external IPs",
			obj:  lbReady,
			want: []any{"lb-ready", "LoadBalancer", "10.96.3.3", "203.0.113.7,a1.elb.example.com,192.0.2.10", "80:31000/TCP", "10m", "<none>"},
		},
		{
			name: "ExternalName",
			obj:  svc("ext", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"}),
			want: []any{"ext", "ExternalName", "<none>", "db.example.com", "<none>", "10m", "<none>"},
		},
	})
}

func TestEndpointsRows(t *testing.T) {
	ep := func(name string, subsets ...corev1.EndpointSubset) *corev1.Endpoints {
		return &corev1.Endpoints{ObjectMeta: om("default", name), Subsets: subsets}
	}
	addrs := func(ips ...string) []corev1.EndpointAddress {
		var out []corev1.EndpointAddress
		for _, ip := range ips {
			out = append(out, corev1.EndpointAddress{IP: ip})
		}
		return out
	}
	runRows(t, schema.GroupResource{Resource: "endpoints"}, []rowCase{
		{name: "kubernetes", obj: ep("kubernetes", corev1.EndpointSubset{Addresses: addrs("10.0.0.1"), Ports: []corev1.EndpointPort{{Name: "https", Port: 6443}}}), want: []any{"kubernetes", "10.0.0.1:6443", "10m"}},
		{name: "no subsets", obj: ep("empty"), want: []any{"empty", "<none>", "10m"}},
		{
			name: "more than three",
			obj: ep("web", corev1.EndpointSubset{
				Addresses: addrs("10.244.0.1", "10.244.0.2", "10.244.0.3"),
				Ports:     []corev1.EndpointPort{{Name: "http", Port: 80}, {Name: "https", Port: 443}},
			}),
			want: []any{"web", "10.244.0.1:80,10.244.0.2:80,10.244.0.3:80 + 3 more...", "10m"},
		},
		{name: "headless without ports", obj: ep("db", corev1.EndpointSubset{Addresses: addrs("10.244.1.1", "fd00::1")}), want: []any{"db", "10.244.1.1,fd00::1", "10m"}},
		{name: "ipv6 with port", obj: ep("v6", corev1.EndpointSubset{Addresses: addrs("fd00::1"), Ports: []corev1.EndpointPort{{Port: 80}}}), want: []any{"v6", "[fd00::1]:80", "10m"}},
		{name: "only not-ready addresses", obj: ep("warming", corev1.EndpointSubset{NotReadyAddresses: addrs("10.244.0.9"), Ports: []corev1.EndpointPort{{Port: 80}}}), want: []any{"warming", "", "10m"}},
	})
}

func TestNamespaceRows(t *testing.T) {
	ns := func(name string, phase corev1.NamespacePhase, age time.Duration) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: ago(age)}, Status: corev1.NamespaceStatus{Phase: phase}}
	}
	runRows(t, schema.GroupResource{Resource: "namespaces"}, []rowCase{
		{name: "active", obj: ns("default", corev1.NamespaceActive, 5*24*time.Hour), want: []any{"default", "Active", "5d"}},
		{name: "terminating", obj: ns("gone", corev1.NamespaceTerminating, 90*time.Second), want: []any{"gone", "Terminating", "90s"}},
		{name: "created just now", obj: ns("new", corev1.NamespaceActive, 0), want: []any{"new", "Active", "0s"}},
		{name: "unset", obj: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "raw"}}, want: []any{"raw", "", "<unknown>"}},
	})
}

func TestNodeRows(t *testing.T) {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: "cp-1", CreationTimestamp: ago(5 * 24 * time.Hour),
			Labels: map[string]string{"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "master", "kubernetes.io/hostname": "cp-1"},
		},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
				{Type: corev1.NodeReady, Status: corev1.ConditionTrue},
			},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "cp-1"}, {Type: corev1.NodeInternalIP, Address: "10.0.0.1"}},
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion: "v1.37.2", OSImage: "Ubuntu 24.04.2 LTS", KernelVersion: "6.8.0-60-generic",
				ContainerRuntimeVersion: "containerd://2.1.1", Architecture: "amd64",
			},
		},
	}
	cordoned := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "w-1", CreationTimestamp: ago(30 * time.Hour)},
		Spec:       corev1.NodeSpec{Unschedulable: true},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}},
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "198.51.100.4"}},
			NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.36.0"},
		},
	}
	registering := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w-2", CreationTimestamp: ago(3 * time.Minute)}}

	runRows(t, schema.GroupResource{Resource: "nodes"}, []rowCase{
		{name: "ready control plane", obj: node, want: []any{"cp-1", "Ready", "control-plane,master", "5d", "v1.37.2", "10.0.0.1", "<none>", "Ubuntu 24.04.2 LTS", "6.8.0-60-generic (amd64)", "containerd://2.1.1"}},
		{name: "not ready and cordoned", obj: cordoned, want: []any{"w-1", "NotReady,SchedulingDisabled", "<none>", "30h", "v1.36.0", "<none>", "198.51.100.4", "<unknown>", "<unknown>", "<unknown>"}},
		{name: "no conditions yet", obj: registering, want: []any{"w-2", "Unknown", "<none>", "3m", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"}},
	})
}

func TestConfigMapSecretServiceAccountRows(t *testing.T) {
	runRows(t, schema.GroupResource{Resource: "configmaps"}, []rowCase{
		{name: "data and binaryData", obj: &corev1.ConfigMap{ObjectMeta: om("default", "cfg"), Data: map[string]string{"a": "1", "b": "2"}, BinaryData: map[string][]byte{"c": {1}}}, want: []any{"cfg", int64(3), "10m"}},
		{name: "empty", obj: &corev1.ConfigMap{ObjectMeta: om("default", "empty")}, want: []any{"empty", int64(0), "10m"}},
	})
	runRows(t, schema.GroupResource{Resource: "secrets"}, []rowCase{
		{name: "opaque", obj: &corev1.Secret{ObjectMeta: om("default", "creds"), Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"user": nil, "pass": nil}}, want: []any{"creds", "Opaque", int64(2), "10m"}},
		{name: "tls", obj: &corev1.Secret{ObjectMeta: om("default", "tls"), Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": nil, "tls.key": nil}}, want: []any{"tls", "kubernetes.io/tls", int64(2), "10m"}},
	})
	runRows(t, schema.GroupResource{Resource: "serviceaccounts"}, []rowCase{
		{name: "default", obj: &corev1.ServiceAccount{ObjectMeta: om("default", "default"), Secrets: []corev1.ObjectReference{{Name: "legacy-token"}}}, want: []any{"default", "10m"}},
	})
}

func TestEventRows(t *testing.T) {
	scheduled := &corev1.Event{
		ObjectMeta:     om("default", "web.17f9a"),
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web", Namespace: "default"},
		Reason:         "Scheduled", Message: "Successfully assigned default/web to node-1\n", Type: corev1.EventTypeNormal,
		ReportingController: "default-scheduler", EventTime: metav1.NewMicroTime(now.Add(-2 * time.Minute)),
	}
	backoff := &corev1.Event{
		ObjectMeta:     om("default", "crash.17f9b"),
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "crash", FieldPath: "spec.containers{app}"},
		Reason:         "BackOff", Message: "Back-off restarting failed container app", Type: corev1.EventTypeWarning,
		Source:         corev1.EventSource{Component: "kubelet", Host: "node-1"},
		FirstTimestamp: ago(9 * time.Minute), LastTimestamp: ago(20 * time.Second), Count: 42,
	}
	series := &corev1.Event{
		ObjectMeta:     om("kube-system", "lease.1"),
		InvolvedObject: corev1.ObjectReference{Kind: "Node"},
		Reason:         "Flap", Type: corev1.EventTypeNormal, EventTime: metav1.NewMicroTime(now.Add(-time.Hour)),
		ReportingController: "ctl", ReportingInstance: "ctl-0",
		Series: &corev1.EventSeries{Count: 7, LastObservedTime: metav1.NewMicroTime(now.Add(-4 * time.Minute))},
	}
	runRows(t, schema.GroupResource{Resource: "events"}, []rowCase{
		{name: "new-style singleton", obj: scheduled, want: []any{"2m", "Normal", "Scheduled", "pod/web", "", "default-scheduler", "Successfully assigned default/web to node-1", "2m", int64(1), "web.17f9a"}},
		{name: "legacy with count", obj: backoff, want: []any{"20s", "Warning", "BackOff", "pod/crash", "spec.containers{app}", "kubelet, node-1", "Back-off restarting failed container app", "9m", int64(42), "crash.17f9b"}},
		{name: "series without object name", obj: series, want: []any{"4m", "Normal", "Flap", "node", "", "ctl, ctl-0", "", "60m", int64(7), "lease.1"}},
	})

	// events.k8s.io/v1 prints what the same event prints through core/v1.
	runRows(t, schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, []rowCase{
		{
			name: "events.k8s.io",
			obj: &eventsv1.Event{
				ObjectMeta: om("default", "web.17f9a"),
				Regarding:  corev1.ObjectReference{Kind: "Pod", Name: "web"},
				Reason:     "Pulled", Note: "Container image already present", Type: corev1.EventTypeNormal,
				ReportingController: "kubelet", ReportingInstance: "node-1", Action: "Pull",
				EventTime: metav1.NewMicroTime(now.Add(-3 * time.Minute)),
			},
			want: []any{"3m", "Normal", "Pulled", "pod/web", "", "kubelet, node-1", "Container image already present", "3m", int64(1), "web.17f9a"},
		},
		{
			name: "events.k8s.io deprecated fields and series",
			obj: &eventsv1.Event{
				ObjectMeta: om("default", "x"),
				Regarding:  corev1.ObjectReference{Kind: "Deployment", Name: "web"},
				Reason:     "ScalingReplicaSet", Note: "Scaled up", Type: corev1.EventTypeNormal,
				DeprecatedSource:         corev1.EventSource{Component: "deployment-controller"},
				DeprecatedFirstTimestamp: ago(8 * time.Minute), DeprecatedLastTimestamp: ago(7 * time.Minute), DeprecatedCount: 3,
				Series: &eventsv1.EventSeries{Count: 4, LastObservedTime: metav1.NewMicroTime(now.Add(-time.Minute))},
			},
			want: []any{"60s", "Normal", "ScalingReplicaSet", "deployment/web", "", "deployment-controller", "Scaled up", "8m", int64(4), "x"},
		},
	})
}

func TestResourceQuotaRows(t *testing.T) {
	q := &corev1.ResourceQuota{
		ObjectMeta: om("team-a", "compute"),
		Status: corev1.ResourceQuotaStatus{
			Hard: corev1.ResourceList{
				"pods": resource.MustParse("10"), "requests.cpu": resource.MustParse("1"),
				"limits.memory": resource.MustParse("2Gi"), "limits.cpu": resource.MustParse("2"), "configmaps": resource.MustParse("5"),
			},
			Used: corev1.ResourceList{
				"pods": resource.MustParse("2"), "requests.cpu": resource.MustParse("500m"), "limits.memory": resource.MustParse("1Gi"),
			},
		},
	}
	runRows(t, schema.GroupResource{Resource: "resourcequotas"}, []rowCase{
		{name: "requests and limits", obj: q, want: []any{"compute", "configmaps: 0/5, pods: 2/10, requests.cpu: 500m/1", "limits.cpu: 0/2, limits.memory: 1Gi/2Gi", "10m"}},
		{name: "not yet computed", obj: &corev1.ResourceQuota{ObjectMeta: om("team-a", "new")}, want: []any{"new", "", "", "10m"}},
	})
}

func TestPersistentVolumeClaimRows(t *testing.T) {
	bound := &corev1.PersistentVolumeClaim{
		ObjectMeta: om("default", "data"),
		Spec: corev1.PersistentVolumeClaimSpec{
			VolumeName: "pvc-1234", StorageClassName: ptr("standard"), VolumeMode: ptr(corev1.PersistentVolumeFilesystem),
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")}},
		},
		Status: corev1.PersistentVolumeClaimStatus{
			Phase:       corev1.ClaimBound,
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany, corev1.ReadWriteOnce, corev1.ReadWriteOnce},
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
		},
	}
	pending := &corev1.PersistentVolumeClaim{
		ObjectMeta: om("default", "wait"),
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName:          ptr("fast"),
			VolumeAttributesClassName: ptr("gold"),
			Resources:                 corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
	deleting := bound.DeepCopy()
	deleting.Name = "old"
	deleting.DeletionTimestamp = agoPtr(time.Second)
	deleting.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: "legacy"}

	runRows(t, schema.GroupResource{Resource: "persistentvolumeclaims"}, []rowCase{
		{name: "bound", obj: bound, want: []any{"data", "Bound", "pvc-1234", "10Gi", "RWO,RWX", "standard", "<unset>", "10m", "Filesystem"}},
		{name: "pending", obj: pending, want: []any{"wait", "Pending", "", "", "", "fast", "gold", "10m", "<unset>"}},
		{name: "terminating with beta class annotation", obj: deleting, want: []any{"old", "Terminating", "pvc-1234", "10Gi", "RWO,RWX", "legacy", "<unset>", "10m", "Filesystem"}},
	})
}

func TestPersistentVolumeRows(t *testing.T) {
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-1234", CreationTimestamp: ago(10 * time.Minute)},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			ClaimRef:                      &corev1.ObjectReference{Namespace: "default", Name: "data"},
			StorageClassName:              "standard",
			VolumeMode:                    ptr(corev1.PersistentVolumeBlock),
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound},
	}
	runRows(t, schema.GroupResource{Resource: "persistentvolumes"}, []rowCase{
		{name: "bound", obj: pv, want: []any{"pvc-1234", "10Gi", "RWOP", "Delete", "Bound", "default/data", "standard", "<unset>", "", "10m", "Block"}},
	})
}

func TestReplicationControllerAndPodTemplateRows(t *testing.T) {
	tmpl := &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "legacy"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}, {Name: "log", Image: "fluent:2"}}},
	}
	runRows(t, schema.GroupResource{Resource: "replicationcontrollers"}, []rowCase{
		{
			name: "rc",
			obj: &corev1.ReplicationController{
				ObjectMeta: om("default", "legacy"),
				Spec:       corev1.ReplicationControllerSpec{Replicas: ptr(int32(3)), Selector: map[string]string{"app": "legacy"}, Template: tmpl},
				Status:     corev1.ReplicationControllerStatus{Replicas: 3, ReadyReplicas: 2},
			},
			want: []any{"legacy", int64(3), int64(3), int64(2), "10m", "app,log", "app:1,fluent:2", "app=legacy"},
		},
	})
	runRows(t, schema.GroupResource{Resource: "podtemplates"}, []rowCase{
		{name: "template", obj: &corev1.PodTemplate{ObjectMeta: om("default", "t"), Template: *tmpl}, want: []any{"t", "app,log", "app:1,fluent:2", "app=legacy"}},
	})
}

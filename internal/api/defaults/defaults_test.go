package defaults

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

const digest64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestImagePullPolicy(t *testing.T) {
	for _, tc := range []struct {
		name, image string
		want        corev1.PullPolicy
	}{
		{"no tag", "nginx", corev1.PullAlways},
		{"latest tag", "nginx:latest", corev1.PullAlways},
		{"version tag", "nginx:1.25", corev1.PullIfNotPresent},
		{"tag is case sensitive", "nginx:LATEST", corev1.PullIfNotPresent},
		{"digest only", "nginx@sha256:" + digest64, corev1.PullIfNotPresent},
		{"latest tag and digest", "nginx:latest@sha256:" + digest64, corev1.PullAlways},
		{"version tag and digest", "nginx:1.25@sha256:" + digest64, corev1.PullIfNotPresent},
		{"registry with port, no tag", "localhost:5000/nginx", corev1.PullAlways},
		{"registry with port and tag", "localhost:5000/nginx:v1", corev1.PullIfNotPresent},
		{"registry host and path", "registry.example.com/team/app", corev1.PullAlways},
		{"hub namespace", "fluent/fluentd:v1.16", corev1.PullIfNotPresent},
		{"legacy hub host", "index.docker.io/library/nginx", corev1.PullAlways},
		{"ipv6 registry", "[::1]:5000/app", corev1.PullAlways},
		{"bare host:port reads as name:tag", "localhost:5000", corev1.PullIfNotPresent},
		// References kube cannot parse get IfNotPresent; validation rejects them.
		{"empty", "", corev1.PullIfNotPresent},
		{"upper-case repository", "NGINX", corev1.PullIfNotPresent},
		{"image ID", digest64, corev1.PullIfNotPresent},
		{"short digest", "nginx@sha256:abc", corev1.PullIfNotPresent},
		{"upper-case digest", "nginx@sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef", corev1.PullIfNotPresent},
		{"unknown digest algorithm", "nginx@md5:0123456789abcdef0123456789abcdef", corev1.PullIfNotPresent},
		{"trailing colon", "nginx:", corev1.PullIfNotPresent},
		{"upper-case registry is a host", "Registry.example.com/app", corev1.PullAlways},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: tc.image}}}}
			Apply(p)
			if got := p.Spec.Containers[0].ImagePullPolicy; got != tc.want {
				t.Errorf("container %q: imagePullPolicy %q, want %q", tc.image, got, tc.want)
			}
			v := &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{{
				Name: "v", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: tc.image}},
			}}}}
			Apply(v)
			if got := v.Spec.Volumes[0].Image.PullPolicy; got != tc.want {
				t.Errorf("image volume %q: pullPolicy %q, want %q", tc.image, got, tc.want)
			}
		})
	}
}

func TestServiceTargetPort(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   intstr.IntOrString
		want intstr.IntOrString
	}{
		{"unset", intstr.IntOrString{}, intstr.FromInt32(80)},
		{"zero", intstr.FromInt32(0), intstr.FromInt32(80)},
		{"empty name", intstr.FromString(""), intstr.FromInt32(80)},
		{"number", intstr.FromInt32(8080), intstr.FromInt32(8080)},
		{"name", intstr.FromString("http"), intstr.FromString("http")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, TargetPort: tc.in}}}}
			Apply(s)
			if got := s.Spec.Ports[0].TargetPort; got != tc.want {
				t.Errorf("targetPort %v, want %v", got.String(), tc.want.String())
			}
		})
	}
}

func TestRequestsFromLimits(t *testing.T) {
	q := resource.MustParse
	for _, tc := range []struct {
		name   string
		in     corev1.ResourceRequirements
		want   corev1.ResourceRequirements
		inTmpl bool // in a Deployment's template rather than a Pod
	}{
		{
			name: "no limits",
			in:   corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": q("1")}},
			want: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": q("1")}},
		},
		{
			name: "limits only",
			in:   corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": q("1"), "memory": q("1Gi")}},
			want: corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{"cpu": q("1"), "memory": q("1Gi")},
				Requests: corev1.ResourceList{"cpu": q("1"), "memory": q("1Gi")},
			},
		},
		{
			name: "requests kept, missing ones added",
			in: corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{"cpu": q("1"), "memory": q("1Gi")},
				Requests: corev1.ResourceList{"cpu": q("100m")},
			},
			want: corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{"cpu": q("1"), "memory": q("1Gi")},
				Requests: corev1.ResourceList{"cpu": q("100m"), "memory": q("1Gi")},
			},
		},
		{
			name: "rounded up to milli",
			in:   corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": q("100u")}},
			want: corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{"cpu": q("1m")},
				Requests: corev1.ResourceList{"cpu": q("1m")},
			},
		},
		{
			name:   "not in a pod template",
			inTmpl: true,
			in:     corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": q("1")}},
			want:   corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": q("1")}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := corev1.PodSpec{
				InitContainers: []corev1.Container{{Name: "i", Image: "x", Resources: *tc.in.DeepCopy()}},
				Containers:     []corev1.Container{{Name: "c", Image: "x", Resources: *tc.in.DeepCopy()}},
			}
			var got *corev1.PodSpec
			if tc.inTmpl {
				d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: spec}}}
				Apply(d)
				got = &d.Spec.Template.Spec
			} else {
				p := &corev1.Pod{Spec: spec}
				Apply(p)
				got = &p.Spec
			}
			for _, c := range []corev1.Container{got.InitContainers[0], got.Containers[0]} {
				if !equality.Semantic.DeepEqual(tc.want, c.Resources) {
					t.Errorf("%s resources (-want +got):\n%s", c.Name, cmp.Diff(tc.want, c.Resources, quantityCmp))
				}
			}
		})
	}
}

func TestServiceIPFamilies(t *testing.T) {
	for _, tc := range []struct {
		name         string
		spec         corev1.ServiceSpec
		wantIPs      []string
		wantPolicy   *corev1.IPFamilyPolicy
		wantFamilies []corev1.IPFamily
	}{
		{
			name:         "cluster IP to allocate",
			spec:         corev1.ServiceSpec{Selector: map[string]string{"a": "b"}},
			wantPolicy:   ptr.To(corev1.IPFamilyPolicySingleStack),
			wantFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
		},
		{
			name:         "headless with selector",
			spec:         corev1.ServiceSpec{ClusterIP: "None", Selector: map[string]string{"a": "b"}},
			wantIPs:      []string{"None"},
			wantPolicy:   ptr.To(corev1.IPFamilyPolicySingleStack),
			wantFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
		},
		{
			name:         "headless without selector",
			spec:         corev1.ServiceSpec{ClusterIP: "None"},
			wantIPs:      []string{"None"},
			wantPolicy:   ptr.To(corev1.IPFamilyPolicyRequireDualStack),
			wantFamilies: []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol},
		},
		{
			name:         "headless without selector, single stack asked",
			spec:         corev1.ServiceSpec{ClusterIP: "None", IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicySingleStack)},
			wantIPs:      []string{"None"},
			wantPolicy:   ptr.To(corev1.IPFamilyPolicySingleStack),
			wantFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
		},
		{
			name:         "old client sets clusterIP only",
			spec:         corev1.ServiceSpec{ClusterIP: "10.96.0.10"},
			wantIPs:      []string{"10.96.0.10"},
			wantPolicy:   ptr.To(corev1.IPFamilyPolicySingleStack),
			wantFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
		},
		{
			name:         "family follows an IPv6 cluster IP",
			spec:         corev1.ServiceSpec{ClusterIP: "fd00::10", ClusterIPs: []string{"fd00::10"}},
			wantIPs:      []string{"fd00::10"},
			wantPolicy:   ptr.To(corev1.IPFamilyPolicySingleStack),
			wantFamilies: []corev1.IPFamily{corev1.IPv6Protocol},
		},
		{
			name: "set fields kept",
			spec: corev1.ServiceSpec{
				ClusterIPs:     []string{"10.96.0.10"},
				IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicyPreferDualStack),
				IPFamilies:     []corev1.IPFamily{corev1.IPv4Protocol},
			},
			wantIPs:      []string{"10.96.0.10"},
			wantPolicy:   ptr.To(corev1.IPFamilyPolicyPreferDualStack),
			wantFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
		},
		{
			name: "external name has none",
			spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &corev1.Service{Spec: tc.spec}
			Apply(s)
			if diff := cmp.Diff(tc.wantIPs, s.Spec.ClusterIPs); diff != "" {
				t.Errorf("clusterIPs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPolicy, s.Spec.IPFamilyPolicy); diff != "" {
				t.Errorf("ipFamilyPolicy (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantFamilies, s.Spec.IPFamilies); diff != "" {
				t.Errorf("ipFamilies (-want +got):\n%s", diff)
			}
		})
	}
}

func TestServiceTypes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		spec      corev1.ServiceSpec
		wantETP   corev1.ServiceExternalTrafficPolicy
		wantITP   *corev1.ServiceInternalTrafficPolicy
		wantAlloc *bool
	}{
		{"cluster IP", corev1.ServiceSpec{}, "", ptr.To(corev1.ServiceInternalTrafficPolicyCluster), nil},
		{"cluster IP with external IPs", corev1.ServiceSpec{ExternalIPs: []string{"1.2.3.4"}}, corev1.ServiceExternalTrafficPolicyCluster, ptr.To(corev1.ServiceInternalTrafficPolicyCluster), nil},
		{"node port", corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort}, corev1.ServiceExternalTrafficPolicyCluster, ptr.To(corev1.ServiceInternalTrafficPolicyCluster), nil},
		{"load balancer", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer}, corev1.ServiceExternalTrafficPolicyCluster, ptr.To(corev1.ServiceInternalTrafficPolicyCluster), ptr.To(true)},
		{"external name", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName}, "", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &corev1.Service{Spec: tc.spec}
			Apply(s)
			if s.Spec.ExternalTrafficPolicy != tc.wantETP {
				t.Errorf("externalTrafficPolicy %q, want %q", s.Spec.ExternalTrafficPolicy, tc.wantETP)
			}
			if diff := cmp.Diff(tc.wantITP, s.Spec.InternalTrafficPolicy); diff != "" {
				t.Errorf("internalTrafficPolicy (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantAlloc, s.Spec.AllocateLoadBalancerNodePorts); diff != "" {
				t.Errorf("allocateLoadBalancerNodePorts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestServiceSessionAffinity(t *testing.T) {
	tenSeconds := &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](10)}}
	defaulted := &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](10800)}}
	for _, tc := range []struct {
		name     string
		affinity corev1.ServiceAffinity
		config   *corev1.SessionAffinityConfig
		want     *corev1.SessionAffinityConfig
	}{
		{"none drops a config", corev1.ServiceAffinityNone, tenSeconds, nil},
		{"unset drops a config", "", tenSeconds, nil},
		{"client IP gets a timeout", corev1.ServiceAffinityClientIP, nil, defaulted},
		{"client IP with empty config", corev1.ServiceAffinityClientIP, &corev1.SessionAffinityConfig{}, defaulted},
		{"client IP timeout kept", corev1.ServiceAffinityClientIP, tenSeconds, tenSeconds},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &corev1.Service{Spec: corev1.ServiceSpec{SessionAffinity: tc.affinity, SessionAffinityConfig: tc.config.DeepCopy()}}
			Apply(s)
			if diff := cmp.Diff(tc.want, s.Spec.SessionAffinityConfig); diff != "" {
				t.Errorf("sessionAffinityConfig (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadBalancerIngressIPMode(t *testing.T) {
	s := &corev1.Service{
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{
			{IP: "1.2.3.4"},
			{Hostname: "lb.example.com"},
			{IP: "5.6.7.8", IPMode: ptr.To(corev1.LoadBalancerIPModeProxy)},
		}}},
	}
	Apply(s)
	want := []*corev1.LoadBalancerIPMode{ptr.To(corev1.LoadBalancerIPModeVIP), nil, ptr.To(corev1.LoadBalancerIPModeProxy)}
	for i, ing := range s.Status.LoadBalancer.Ingress {
		if diff := cmp.Diff(want[i], ing.IPMode); diff != "" {
			t.Errorf("ingress %d ipMode (-want +got):\n%s", i, diff)
		}
	}
}

func TestPodOnlyRules(t *testing.T) {
	t.Run("negative grace period becomes 1 on a pod", func(t *testing.T) {
		p := &corev1.Pod{Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](-5)}}
		Apply(p)
		if got := *p.Spec.TerminationGracePeriodSeconds; got != 1 {
			t.Errorf("terminationGracePeriodSeconds %d, want 1", got)
		}
	})
	t.Run("negative grace period kept in a template", func(t *testing.T) {
		pt := &corev1.PodTemplate{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](-5)}}}
		Apply(pt)
		if got := *pt.Template.Spec.TerminationGracePeriodSeconds; got != -5 {
			t.Errorf("terminationGracePeriodSeconds %d, want -5", got)
		}
		if pt.Template.Spec.EnableServiceLinks != nil {
			t.Errorf("enableServiceLinks set on a template")
		}
	})
	t.Run("host network ports", func(t *testing.T) {
		p := &corev1.Pod{Spec: corev1.PodSpec{
			HostNetwork: true,
			Containers: []corev1.Container{{Name: "c", Image: "x", Ports: []corev1.ContainerPort{
				{ContainerPort: 80},
				{ContainerPort: 443, HostPort: 8443},
			}}},
			InitContainers: []corev1.Container{{Name: "i", Image: "x", Ports: []corev1.ContainerPort{{ContainerPort: 53}}}},
		}}
		Apply(p)
		if got := p.Spec.Containers[0].Ports[0].HostPort; got != 80 {
			t.Errorf("hostPort %d, want 80", got)
		}
		if got := p.Spec.Containers[0].Ports[1].HostPort; got != 8443 {
			t.Errorf("hostPort %d, want 8443 (kept)", got)
		}
		if got := p.Spec.InitContainers[0].Ports[0].HostPort; got != 53 {
			t.Errorf("init hostPort %d, want 53", got)
		}
	})
	t.Run("no host ports off the host network", func(t *testing.T) {
		p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x", Ports: []corev1.ContainerPort{{ContainerPort: 80}}}}}}
		Apply(p)
		if got := p.Spec.Containers[0].Ports[0].HostPort; got != 0 {
			t.Errorf("hostPort %d, want 0", got)
		}
	})
}

func TestServiceAccountAlias(t *testing.T) {
	for _, tc := range []struct {
		name, sa, deprecated, want string
	}{
		{"neither", "", "", ""},
		{"name only", "a", "", "a"},
		{"deprecated only", "", "b", "b"},
		{"name wins", "a", "b", "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &corev1.Pod{Spec: corev1.PodSpec{ServiceAccountName: tc.sa, DeprecatedServiceAccount: tc.deprecated}}
			Apply(p)
			if p.Spec.ServiceAccountName != tc.want || p.Spec.DeprecatedServiceAccount != tc.want {
				t.Errorf("serviceAccountName %q, serviceAccount %q, want both %q", p.Spec.ServiceAccountName, p.Spec.DeprecatedServiceAccount, tc.want)
			}
		})
	}
}

func TestPodStatusIPs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      corev1.PodStatus
		wantIP  string
		wantIPs []corev1.PodIP
	}{
		{"none", corev1.PodStatus{}, "", nil},
		{"podIP fills podIPs", corev1.PodStatus{PodIP: "10.0.0.1"}, "10.0.0.1", []corev1.PodIP{{IP: "10.0.0.1"}}},
		{"podIPs fill podIP", corev1.PodStatus{PodIPs: []corev1.PodIP{{IP: "10.0.0.2"}, {IP: "fd00::2"}}}, "10.0.0.2", []corev1.PodIP{{IP: "10.0.0.2"}, {IP: "fd00::2"}}},
		{"podIP wins a mismatch", corev1.PodStatus{PodIP: "10.0.0.1", PodIPs: []corev1.PodIP{{IP: "10.0.0.2"}}}, "10.0.0.1", []corev1.PodIP{{IP: "10.0.0.1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &corev1.Pod{Status: tc.in}
			Apply(p)
			if p.Status.PodIP != tc.wantIP {
				t.Errorf("podIP %q, want %q", p.Status.PodIP, tc.wantIP)
			}
			if diff := cmp.Diff(tc.wantIPs, p.Status.PodIPs); diff != "" {
				t.Errorf("podIPs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVolumeDefaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   corev1.VolumeSource
		want corev1.VolumeSource
	}{
		{"no source is emptyDir", corev1.VolumeSource{}, corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{
			"rbd",
			corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{CephMonitors: []string{"m"}, RBDImage: "i"}},
			corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{CephMonitors: []string{"m"}, RBDImage: "i", RBDPool: "rbd", RadosUser: "admin", Keyring: "/etc/ceph/keyring"}},
		},
		{
			"iscsi",
			corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{TargetPortal: "t", IQN: "q"}},
			corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{TargetPortal: "t", IQN: "q", ISCSIInterface: "default"}},
		},
		{
			"azure disk",
			corev1.VolumeSource{AzureDisk: &corev1.AzureDiskVolumeSource{DiskName: "d", DataDiskURI: "u"}},
			corev1.VolumeSource{AzureDisk: &corev1.AzureDiskVolumeSource{
				DiskName: "d", DataDiskURI: "u",
				CachingMode: ptr.To(corev1.AzureDataDiskCachingReadWrite), FSType: ptr.To("ext4"),
				ReadOnly: ptr.To(false), Kind: ptr.To(corev1.AzureSharedBlobDisk),
			}},
		},
		{
			"scaleio",
			corev1.VolumeSource{ScaleIO: &corev1.ScaleIOVolumeSource{Gateway: "g"}},
			corev1.VolumeSource{ScaleIO: &corev1.ScaleIOVolumeSource{Gateway: "g", StorageMode: "ThinProvisioned", FSType: "xfs"}},
		},
		{
			"modes kept",
			corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s", DefaultMode: ptr.To[int32](0o400)}},
			corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s", DefaultMode: ptr.To[int32](0o400)}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "v", VolumeSource: tc.in}}}}
			Apply(p)
			if diff := cmp.Diff(tc.want, p.Spec.Volumes[0].VolumeSource); diff != "" {
				t.Errorf("volume source (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnvValueFrom(t *testing.T) {
	p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x", Env: []corev1.EnvVar{
		{Name: "A", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "B", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v2", FieldPath: "metadata.name"}}},
		{Name: "C", ValueFrom: &corev1.EnvVarSource{FileKeyRef: &corev1.FileKeySelector{VolumeName: "v", Path: "p", Key: "k"}}},
		{Name: "D", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "k"}}},
	}}}}}
	Apply(p)
	env := p.Spec.Containers[0].Env
	if got := env[0].ValueFrom.FieldRef.APIVersion; got != "v1" {
		t.Errorf("fieldRef apiVersion %q, want v1", got)
	}
	if got := env[1].ValueFrom.FieldRef.APIVersion; got != "v2" {
		t.Errorf("fieldRef apiVersion %q, want v2 (kept)", got)
	}
	if diff := cmp.Diff(ptr.To(false), env[2].ValueFrom.FileKeyRef.Optional); diff != "" {
		t.Errorf("fileKeyRef optional (-want +got):\n%s", diff)
	}
	if env[3].ValueFrom.SecretKeyRef.Optional != nil {
		t.Errorf("secretKeyRef optional defaulted; kube leaves it unset")
	}
}

func TestEphemeralContainers(t *testing.T) {
	p := &corev1.Pod{Spec: corev1.PodSpec{EphemeralContainers: []corev1.EphemeralContainer{{
		EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name: "debug", Image: "busybox",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": resource.MustParse("1")}},
		},
	}}}}
	Apply(p)
	e := p.Spec.EphemeralContainers[0]
	if e.ImagePullPolicy != corev1.PullAlways || e.TerminationMessagePath != corev1.TerminationMessagePathDefault || e.TerminationMessagePolicy != corev1.TerminationMessageReadFile {
		t.Errorf("ephemeral container not defaulted like a container: %+v", e.EphemeralContainerCommon)
	}
	if e.Resources.Requests != nil {
		t.Errorf("ephemeral container requests defaulted from limits; kube does not")
	}
}

func TestStatefulSetStrategy(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   appsv1.StatefulSetUpdateStrategy
		want appsv1.StatefulSetUpdateStrategy
	}{
		{
			"unset",
			appsv1.StatefulSetUpdateStrategy{},
			appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{
				Partition: ptr.To[int32](0), MaxUnavailable: ptr.To(intstr.FromInt32(1)),
			}},
		},
		{
			"explicit rolling update without parameters stays bare",
			appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
		},
		{
			"partition kept",
			appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](3)}},
			appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{
				Partition: ptr.To[int32](3), MaxUnavailable: ptr.To(intstr.FromInt32(1)),
			}},
		},
		{
			"on delete",
			appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
			appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ss := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{UpdateStrategy: tc.in}}
			Apply(ss)
			if diff := cmp.Diff(tc.want, ss.Spec.UpdateStrategy); diff != "" {
				t.Errorf("updateStrategy (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWorkloadStrategies(t *testing.T) {
	t.Run("deployment recreate gets no rolling update", func(t *testing.T) {
		d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}}}
		Apply(d)
		if d.Spec.Strategy.RollingUpdate != nil {
			t.Errorf("rollingUpdate %+v, want nil", d.Spec.Strategy.RollingUpdate)
		}
	})
	t.Run("daemonset on delete gets no rolling update", func(t *testing.T) {
		ds := &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}}}
		Apply(ds)
		if ds.Spec.UpdateStrategy.RollingUpdate != nil {
			t.Errorf("rollingUpdate %+v, want nil", ds.Spec.UpdateStrategy.RollingUpdate)
		}
	})
	t.Run("replicaset", func(t *testing.T) {
		rs := &appsv1.ReplicaSet{}
		Apply(rs)
		if rs.Spec.Replicas == nil || *rs.Spec.Replicas != 1 {
			t.Errorf("replicas %v, want 1", rs.Spec.Replicas)
		}
		if rs.Spec.Template.Spec.SecurityContext == nil {
			t.Errorf("template not defaulted")
		}
	})
}

func TestJobDefaults(t *testing.T) {
	for _, tc := range []struct {
		name                       string
		in                         batchv1.JobSpec
		wantCompletions, wantParal *int32
		wantBackoff                int32
		wantReplacement            batchv1.PodReplacementPolicy
	}{
		{"neither completions nor parallelism", batchv1.JobSpec{}, ptr.To[int32](1), ptr.To[int32](1), 6, batchv1.TerminatingOrFailed},
		{"parallelism only", batchv1.JobSpec{Parallelism: ptr.To[int32](3)}, nil, ptr.To[int32](3), 6, batchv1.TerminatingOrFailed},
		{"completions only", batchv1.JobSpec{Completions: ptr.To[int32](5)}, ptr.To[int32](5), ptr.To[int32](1), 6, batchv1.TerminatingOrFailed},
		{"backoff per index", batchv1.JobSpec{BackoffLimitPerIndex: ptr.To[int32](1)}, ptr.To[int32](1), ptr.To[int32](1), 2147483647, batchv1.TerminatingOrFailed},
		{"pod failure policy", batchv1.JobSpec{PodFailurePolicy: &batchv1.PodFailurePolicy{}}, ptr.To[int32](1), ptr.To[int32](1), 6, batchv1.Failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := &batchv1.Job{Spec: tc.in}
			Apply(j)
			if diff := cmp.Diff(tc.wantCompletions, j.Spec.Completions); diff != "" {
				t.Errorf("completions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantParal, j.Spec.Parallelism); diff != "" {
				t.Errorf("parallelism (-want +got):\n%s", diff)
			}
			if *j.Spec.BackoffLimit != tc.wantBackoff {
				t.Errorf("backoffLimit %d, want %d", *j.Spec.BackoffLimit, tc.wantBackoff)
			}
			if *j.Spec.PodReplacementPolicy != tc.wantReplacement {
				t.Errorf("podReplacementPolicy %q, want %q", *j.Spec.PodReplacementPolicy, tc.wantReplacement)
			}
		})
	}
	t.Run("pod failure policy condition status", func(t *testing.T) {
		j := &batchv1.Job{Spec: batchv1.JobSpec{PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action:          batchv1.PodFailurePolicyActionIgnore,
			OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget}, {Type: "X", Status: corev1.ConditionFalse}},
		}}}}}
		Apply(j)
		conds := j.Spec.PodFailurePolicy.Rules[0].OnPodConditions
		if conds[0].Status != corev1.ConditionTrue || conds[1].Status != corev1.ConditionFalse {
			t.Errorf("condition statuses %q, %q; want True, False", conds[0].Status, conds[1].Status)
		}
	})
}

func TestNamespaceWithoutName(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tmp-"}}
	Apply(ns)
	if ns.Labels != nil {
		t.Errorf("labels %v on a nameless namespace, want none", ns.Labels)
	}
	if ns.Status.Phase != corev1.NamespaceActive {
		t.Errorf("phase %q, want Active", ns.Status.Phase)
	}
}

func TestNodeAllocatable(t *testing.T) {
	n := &corev1.Node{Status: corev1.NodeStatus{Capacity: corev1.ResourceList{"cpu": resource.MustParse("4"), "pods": resource.MustParse("110")}}}
	Apply(n)
	if !equality.Semantic.DeepEqual(n.Status.Capacity, n.Status.Allocatable) {
		t.Errorf("allocatable %v, want capacity %v", n.Status.Allocatable, n.Status.Capacity)
	}
	kept := &corev1.Node{Status: corev1.NodeStatus{
		Capacity:    corev1.ResourceList{"cpu": resource.MustParse("4")},
		Allocatable: corev1.ResourceList{"cpu": resource.MustParse("3")},
	}}
	Apply(kept)
	if got := kept.Status.Allocatable["cpu"]; got.Cmp(resource.MustParse("3")) != 0 {
		t.Errorf("allocatable cpu %s, want 3 (kept)", got.String())
	}
}

// TestExistingValuesKept sets every defaulted field to a value other than
// its default and checks that Apply leaves each object exactly as it was.
func TestExistingValuesKept(t *testing.T) {
	spec := func() corev1.PodSpec {
		probe := &corev1.Probe{
			ProbeHandler:   corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(1), Scheme: corev1.URISchemeHTTPS}},
			TimeoutSeconds: 2, PeriodSeconds: 3, SuccessThreshold: 1, FailureThreshold: 5,
		}
		c := corev1.Container{
			Name: "c", Image: "nginx", ImagePullPolicy: corev1.PullNever,
			TerminationMessagePath: "/tmp/msg", TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			Ports:          []corev1.ContainerPort{{ContainerPort: 53, Protocol: corev1.ProtocolUDP}},
			LivenessProbe:  probe,
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 1, Service: ptr.To("svc")}}, TimeoutSeconds: 2, PeriodSeconds: 3, SuccessThreshold: 1, FailureThreshold: 5},
			Resources: corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{"cpu": resource.MustParse("2")},
				Requests: corev1.ResourceList{"cpu": resource.MustParse("1")},
			},
		}
		return corev1.PodSpec{
			ServiceAccountName: "sa", DeprecatedServiceAccount: "sa",
			DNSPolicy: corev1.DNSDefault, RestartPolicy: corev1.RestartPolicyNever,
			SecurityContext:               &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)},
			TerminationGracePeriodSeconds: ptr.To[int64](5), SchedulerName: "custom",
			EnableServiceLinks: ptr.To(false),
			Containers:         []corev1.Container{c},
			Volumes: []corev1.Volume{
				{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{DefaultMode: ptr.To[int32](0o400)}}},
				{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x", Type: ptr.To(corev1.HostPathDirectory)}}},
				{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: ptr.To[int32](0o600), Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t", ExpirationSeconds: ptr.To[int64](600)}},
				}}}},
			},
		}
	}
	templ := func() corev1.PodTemplateSpec {
		s := spec()
		s.EnableServiceLinks = nil // not a template field kube defaults
		return corev1.PodTemplateSpec{Spec: s}
	}
	for _, tc := range []struct {
		name string
		obj  runtime.Object
	}{
		{"pod", &corev1.Pod{Spec: spec()}},
		{"service", &corev1.Service{Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeNodePort, SessionAffinity: corev1.ServiceAffinityClientIP,
			SessionAffinityConfig: &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](60)}},
			Ports:                 []corev1.ServicePort{{Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromString("dns")}},
			ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal,
			InternalTrafficPolicy: ptr.To(corev1.ServiceInternalTrafficPolicyLocal),
			ClusterIP:             "10.0.0.1", ClusterIPs: []string{"10.0.0.1"},
			IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicySingleStack), IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
		}}},
		{"secret", &corev1.Secret{Type: corev1.SecretTypeTLS}},
		{"deployment", &appsv1.Deployment{Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3), RevisionHistoryLimit: ptr.To[int32](2), ProgressDeadlineSeconds: ptr.To[int32](60),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxUnavailable: ptr.To(intstr.FromInt32(0)), MaxSurge: ptr.To(intstr.FromString("50%")),
			}},
			Template: templ(),
		}}},
		{"statefulset", &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](3), RevisionHistoryLimit: ptr.To[int32](2), PodManagementPolicy: appsv1.ParallelPodManagement,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{
				Partition: ptr.To[int32](1), MaxUnavailable: ptr.To(intstr.FromInt32(2)),
			}},
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
			},
			Template: templ(),
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				Spec:   corev1.PersistentVolumeClaimSpec{VolumeMode: ptr.To(corev1.PersistentVolumeBlock)},
				Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound},
			}},
		}}},
		{"daemonset", &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{
			RevisionHistoryLimit: ptr.To[int32](2),
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType, RollingUpdate: &appsv1.RollingUpdateDaemonSet{
				MaxUnavailable: ptr.To(intstr.FromInt32(0)), MaxSurge: ptr.To(intstr.FromString("10%")),
			}},
			Template: templ(),
		}}},
		{"validating webhook", &admissionregistrationv1.ValidatingWebhookConfiguration{Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			FailurePolicy: ptr.To(admissionregistrationv1.Ignore), MatchPolicy: ptr.To(admissionregistrationv1.Exact),
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
			ObjectSelector:    &metav1.LabelSelector{MatchLabels: map[string]string{"c": "d"}},
			TimeoutSeconds:    ptr.To[int32](30),
			ClientConfig:      admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Port: ptr.To[int32](8443)}},
			Rules:             []admissionregistrationv1.RuleWithOperations{{Rule: admissionregistrationv1.Rule{Scope: ptr.To(admissionregistrationv1.ClusterScope)}}},
		}}}},
		{"mutating webhook", &admissionregistrationv1.MutatingWebhookConfiguration{Webhooks: []admissionregistrationv1.MutatingWebhook{{
			FailurePolicy: ptr.To(admissionregistrationv1.Ignore), MatchPolicy: ptr.To(admissionregistrationv1.Exact),
			NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{},
			TimeoutSeconds: ptr.To[int32](30), ReinvocationPolicy: ptr.To(admissionregistrationv1.IfNeededReinvocationPolicy),
		}}}},
		{"rolebinding", &rbacv1.RoleBinding{
			RoleRef:  rbacv1.RoleRef{APIGroup: "example.com", Kind: "Role", Name: "r"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: "example.com", Name: "u"}},
		}},
		{"endpointslice", &discoveryv1.EndpointSlice{Ports: []discoveryv1.EndpointPort{{Name: ptr.To("p"), Protocol: ptr.To(corev1.ProtocolSCTP)}}}},
		{"priorityclass", &schedulingv1.PriorityClass{PreemptionPolicy: ptr.To(corev1.PreemptNever)}},
		{"pvc", &corev1.PersistentVolumeClaim{
			Spec:   corev1.PersistentVolumeClaimSpec{VolumeMode: ptr.To(corev1.PersistentVolumeBlock)},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound},
		}},
		{"namespace", &corev1.Namespace{
			ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{corev1.LabelMetadataName: "n"}},
			Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating},
		}},
		{"job", &batchv1.Job{Spec: batchv1.JobSpec{
			Completions: ptr.To[int32](2), Parallelism: ptr.To[int32](2), BackoffLimit: ptr.To[int32](1),
			CompletionMode: ptr.To(batchv1.IndexedCompletion), Suspend: ptr.To(true),
			PodReplacementPolicy: ptr.To(batchv1.Failed), ManualSelector: ptr.To(true),
			Template: templ(),
		}}},
		{"cronjob", &batchv1.CronJob{Spec: batchv1.CronJobSpec{
			ConcurrencyPolicy: batchv1.ForbidConcurrent, Suspend: ptr.To(true),
			SuccessfulJobsHistoryLimit: ptr.To[int32](0), FailedJobsHistoryLimit: ptr.To[int32](0),
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: templ()}},
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.obj.DeepCopyObject()
			Apply(got)
			if !equality.Semantic.DeepEqual(tc.obj, got) {
				t.Errorf("Apply changed set fields (-before +after):\n%s", cmp.Diff(tc.obj, got, quantityCmp))
			}
		})
	}
}

// Types kube has no defaults for, and types outside this package's list,
// come out unchanged.
func TestNoDefaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		obj  runtime.Object
	}{
		{"service account", &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa"}}},
		{"event", &corev1.Event{Reason: "r"}},
		{"lease", &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("h")}}},
		{"role", &rbacv1.Role{Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}}}}},
		{"cluster role", &rbacv1.ClusterRole{Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}}}}},
		{"unknown", &metav1.Status{Message: "m"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.obj.DeepCopyObject()
			Apply(got)
			if !equality.Semantic.DeepEqual(tc.obj, got) {
				t.Errorf("Apply changed a type without defaults (-before +after):\n%s", cmp.Diff(tc.obj, got))
			}
		})
	}
}

package api

import (
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/randfill"
)

func TestPodTemplateWarnings(t *testing.T) {
	const tp = "spec.template."
	ctr := func(name string, ports ...corev1.ContainerPort) corev1.Container {
		return corev1.Container{Name: name, Image: "busybox", Ports: ports}
	}
	i64 := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		name string
		tmpl func(*corev1.PodTemplateSpec)
		want []string
	}{
		{"plain", func(*corev1.PodTemplateSpec) {}, nil},
		{"deprecated node selector label", func(t *corev1.PodTemplateSpec) {
			t.Spec.NodeSelector = map[string]string{"beta.kubernetes.io/arch": "amd64"}
		}, []string{tp + `spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use "kubernetes.io/arch" instead`}},
		{"node affinity", func(t *corev1.PodTemplateSpec) {
			t.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "failure-domain.beta.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a b"}}},
				}}},
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1, Preference: corev1.NodeSelectorTerm{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a b"}}},
				}}},
			}}
		}, []string{
			tp + `spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key: failure-domain.beta.kubernetes.io/zone is deprecated since v1.17; use "topology.kubernetes.io/zone" instead`,
			tp + `spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].values[0]: a b is invalid, a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
		}},
		{"topology spread", func(t *corev1.PodTemplateSpec) {
			t.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "failure-domain.beta.kubernetes.io/region", WhenUnsatisfiable: corev1.DoNotSchedule}}
		}, []string{
			tp + `spec.topologySpreadConstraints[0].topologyKey: failure-domain.beta.kubernetes.io/region is deprecated since v1.17; use "topology.kubernetes.io/region" instead`,
			tp + `spec.topologySpreadConstraints[0].labelSelector: a null labelSelector results in matching no pod`,
		}},
		{"deprecated annotations", func(t *corev1.PodTemplateSpec) {
			t.Annotations = map[string]string{
				"scheduler.alpha.kubernetes.io/critical-pod":                    "",
				corev1.SeccompPodAnnotationKey:                                  "runtime/default",
				corev1.SeccompContainerAnnotationKeyPrefix + "c":                "runtime/default",
				corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + "c": "runtime/default",
			}
		}, []string{
			tp + `metadata.annotations[scheduler.alpha.kubernetes.io/critical-pod]: non-functional in v1.16+; use the "priorityClassName" field instead`,
			tp + `metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: non-functional in v1.27+; use the "seccompProfile" field instead`,
			tp + `metadata.annotations[container.seccomp.security.alpha.kubernetes.io/c]: non-functional in v1.27+; use the "seccompProfile" field instead`,
			tp + `metadata.annotations[container.apparmor.security.beta.kubernetes.io/c]: deprecated since v1.30; use the "appArmorProfile" field instead`,
		}},
		{"apparmor annotation matching the pod's profile", func(t *corev1.PodTemplateSpec) {
			t.Annotations = map[string]string{corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + "c": "localhost/p"}
			t.Spec.SecurityContext = &corev1.PodSecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptrTo("p")}}
		}, nil},
		{"removed volume plugins", func(t *corev1.PodTemplateSpec) {
			t.Spec.Volumes = []corev1.Volume{
				{Name: "g", VolumeSource: corev1.VolumeSource{GitRepo: &corev1.GitRepoVolumeSource{Repository: "r"}}},
				{Name: "c", VolumeSource: corev1.VolumeSource{CephFS: &corev1.CephFSVolumeSource{Monitors: []string{"m"}}}},
				{Name: "e", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
					Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1.5")}}},
				}}}},
			}
		}, []string{
			tp + `spec.volumes[0].gitRepo: deprecated in v1.11, and disabled by default in v1.33+`,
			tp + `spec.volumes[1].cephfs: deprecated in v1.28, non-functional in v1.31+`,
			tp + `spec.volumes[2].ephemeral.volumeClaimTemplate.spec.resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer`,
		}},
		{"overlapping paths", func(t *corev1.PodTemplateSpec) {
			t.Spec.Volumes = []corev1.Volume{
				{Name: "v", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"},
					Items: []corev1.KeyToPath{{Key: "a", Path: "x"}, {Key: "b", Path: "x/y/"}}}}},
				{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{},
					{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Items: []corev1.KeyToPath{{Key: "k", Path: "token"}}}},
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
				}}}},
			}
		}, []string{
			`volume "v" (ConfigMap "cm"): overlapping paths: "x/y" with "x"`,
			`volume "p" (Projected) has no sources provided`,
			`volume "p" (Projected): overlapping paths: "token" (ServiceAccountToken) with "token" (Secret "s")`,
		}},
		{"duplicates apply would drop", func(t *corev1.PodTemplateSpec) {
			t.Spec.HostAliases = []corev1.HostAlias{{IP: "10.0.0.1"}, {IP: "10.0.0.1"}}
			t.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "r"}, {Name: "r"}, {}}
			t.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "X", Value: "1"}, {Name: "X", Value: "$(X)-2"}, {Name: "X", Value: "3"}}
		}, []string{
			tp + `spec.hostAliases[1].ip: duplicate ip "10.0.0.1"`,
			tp + `spec.imagePullSecrets[1].name: duplicate name "r"`,
			tp + `spec.imagePullSecrets[2].name: invalid empty name ""`,
			tp + `spec.containers[0].env[2]: hides previous definition of "X", which may be dropped when using apply`,
		}},
		{"fractional bytes", func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1.5")}
			t.Spec.Overhead = corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("0.5")}
		}, []string{
			tp + `spec.overhead[ephemeral-storage]: fractional byte value "500m" is invalid, must be an integer`,
			tp + `spec.containers[0].resources.limits[memory]: fractional byte value "1500m" is invalid, must be an integer`,
		}},
		{"ports", func(t *corev1.PodTemplateSpec) {
			t.Spec.InitContainers = []corev1.Container{ctr("i", corev1.ContainerPort{ContainerPort: 81, Protocol: corev1.ProtocolTCP, HostIP: "10.0.0.1"})}
			t.Spec.Containers = []corev1.Container{
				ctr("c", corev1.ContainerPort{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}),
				ctr("d", corev1.ContainerPort{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}, corev1.ContainerPort{ContainerPort: 80, Protocol: corev1.ProtocolTCP, HostPort: 8080}),
			}
		}, []string{
			tp + `spec.initContainers[0].ports[0]: hostIP set without hostPort: {Name: HostPort:0 ContainerPort:81 Protocol:TCP HostIP:10.0.0.1}`,
			tp + `spec.containers[1].ports[0]: duplicate port definition with spec.template.spec.containers[0].ports[0]`,
			tp + `spec.containers[1].ports[1]: overlapping port definition with spec.template.spec.containers[0].ports[0]`,
			tp + `spec.containers[1].ports[1]: overlapping port definition with spec.template.spec.containers[1].ports[0]`,
			tp + `spec.containers[1].ports[0]: duplicate port name "http" with spec.template.spec.containers[0].ports[0], services and probes that select ports by name will use spec.template.spec.containers[0].ports[0]`,
		}},
		{"grace period, pod affinity, IPs", func(t *corev1.PodTemplateSpec) {
			t.Spec.TerminationGracePeriodSeconds = i64(-5)
			t.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution:  []corev1.PodAffinityTerm{{TopologyKey: "k"}},
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "k", LabelSelector: &metav1.LabelSelector{}}}},
			}}
			t.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"010.0.0.1"}}
		}, []string{
			tp + `spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1`,
			tp + `spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector: a null labelSelector results in matching no pod`,
			tp + `spec.dnsConfig.nameservers[0]: non-standard IP address "010.0.0.1" is invalid: use "10.0.0.1"`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{ctr("c")}}}
			tc.tmpl(tmpl)
			got := podTemplateWarnings(field.NewPath("spec", "template"), tmpl)
			if !slices.Equal(got, tc.want) {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// A CronJob's template warnings carry the job template's path.
func TestCronJobTemplateWarnings(t *testing.T) {
	c := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
	c.Spec.JobTemplate.Spec.Template.Spec.NodeSelector = map[string]string{"beta.kubernetes.io/os": "linux"}
	want := []string{`spec.jobTemplate.spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead`}
	if got := (cronJobStrategy{}).WarningsOnCreate(c); !slices.Equal(got, want) {
		t.Errorf("warnings = %q, want %q", got, want)
	}
}

func ptrTo[T any](v T) *T { return &v }

// Random templates, nil pointers included, warn without panicking.
func TestPodTemplateWarningsRandom(t *testing.T) {
	filler := randfill.NewWithSeed(1).NilChance(0.3).NumElements(0, 3)
	for i := 0; i < 200; i++ {
		var tmpl corev1.PodTemplateSpec
		filler.Fill(&tmpl)
		_ = podTemplateWarnings(field.NewPath("spec", "template"), &tmpl)
	}
}

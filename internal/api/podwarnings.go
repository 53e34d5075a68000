package api

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// podTemplateWarnings are kube's warnings for a pod template
// (GetWarningsForPodTemplate) at v1.37: deprecated node labels, annotations
// and volume plugins, overlapping volume paths, duplicates that apply would
// drop, fractional byte quantities, ambiguous ports, null label selectors,
// and IP addresses in deprecated forms. path is the template's.
func podTemplateWarnings(path *field.Path, t *corev1.PodTemplateSpec) []string {
	var ws []string
	add := func(format string, args ...any) { ws = append(ws, fmt.Sprintf(format, args...)) }
	spec, annotations := &t.Spec, t.Annotations
	sp := path.Child("spec")

	for k := range spec.NodeSelector {
		if msg, ok := deprecatedNodeLabels[k]; ok {
			add("%s: %s", sp.Child("nodeSelector").Key(k), msg)
		}
	}
	if spec.Affinity != nil && spec.Affinity.NodeAffinity != nil {
		n := spec.Affinity.NodeAffinity
		if n.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			tp := sp.Child("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
			for i, term := range n.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
				ws = append(ws, nodeSelectorTermWarnings(term, false, tp.Index(i))...)
			}
		}
		pp := sp.Child("affinity", "nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution")
		for i, term := range n.PreferredDuringSchedulingIgnoredDuringExecution {
			ws = append(ws, nodeSelectorTermWarnings(term.Preference, true, pp.Index(i).Child("preference"))...)
		}
	}
	for i, c := range spec.TopologySpreadConstraints {
		cp := sp.Child("topologySpreadConstraints").Index(i)
		if msg, ok := deprecatedNodeLabels[c.TopologyKey]; ok {
			add("%s: %s is %s", cp.Child("topologyKey"), c.TopologyKey, msg)
		}
		if c.LabelSelector == nil {
			add("%s: a null labelSelector results in matching no pod", cp.Child("labelSelector"))
		}
	}

	ap := path.Child("metadata", "annotations")
	for _, d := range deprecatedPodAnnotations {
		if _, ok := annotations[d.key]; ok {
			add("%s: %s", ap.Key(d.key), d.message)
		}
	}

	for i, v := range spec.Volumes {
		vp := sp.Child("volumes").Index(i)
		removed := func(name, msg string) { add("%s: %s", vp.Child(name), msg) }
		if v.PhotonPersistentDisk != nil {
			removed("photonPersistentDisk", "deprecated in v1.11, non-functional in v1.16+")
		}
		if v.GitRepo != nil {
			// The GitRepoVolumeDriver gate is off and locked from v1.36.
			removed("gitRepo", "deprecated in v1.11, and disabled by default in v1.33+")
		}
		if v.ScaleIO != nil {
			removed("scaleIO", "deprecated in v1.16, non-functional in v1.22+")
		}
		if v.Flocker != nil {
			removed("flocker", "deprecated in v1.22, non-functional in v1.25+")
		}
		if v.StorageOS != nil {
			removed("storageOS", "deprecated in v1.22, non-functional in v1.25+")
		}
		if v.Quobyte != nil {
			removed("quobyte", "deprecated in v1.22, non-functional in v1.25+")
		}
		if v.Glusterfs != nil {
			removed("glusterfs", "deprecated in v1.25, non-functional in v1.26+")
		}
		if v.Ephemeral != nil && v.Ephemeral.VolumeClaimTemplate != nil {
			rp := vp.Child("ephemeral", "volumeClaimTemplate", "spec", "resources")
			res := v.Ephemeral.VolumeClaimTemplate.Spec.Resources
			// A missing value is zero, which is whole.
			req, lim := res.Requests[corev1.ResourceStorage], res.Limits[corev1.ResourceStorage]
			if req.MilliValue()%1000 != 0 {
				add("%s: fractional byte value %q is invalid, must be an integer", rp.Child("requests").Key(string(corev1.ResourceStorage)), req.String())
			}
			if lim.MilliValue()%1000 != 0 {
				add("%s: fractional byte value %q is invalid, must be an integer", rp.Child("limits").Key(string(corev1.ResourceStorage)), lim.String())
			}
		}
		if v.CephFS != nil {
			removed("cephfs", "deprecated in v1.28, non-functional in v1.31+")
		}
		if v.RBD != nil {
			removed("rbd", "deprecated in v1.28, non-functional in v1.31+")
		}
	}
	ws = append(ws, overlappingPathWarnings(spec.Volumes)...)

	if len(spec.HostAliases) > 1 {
		seen := sets.New[string]()
		for i, h := range spec.HostAliases {
			if seen.Has(h.IP) {
				add("%s: duplicate ip %q", sp.Child("hostAliases").Index(i).Child("ip"), h.IP)
			}
			seen.Insert(h.IP)
		}
	}
	if len(spec.ImagePullSecrets) > 1 {
		seen := sets.New[string]()
		for i, s := range spec.ImagePullSecrets {
			if seen.Has(s.Name) {
				add("%s: duplicate name %q", sp.Child("imagePullSecrets").Index(i).Child("name"), s.Name)
			}
			seen.Insert(s.Name)
		}
	}
	for i, s := range spec.ImagePullSecrets {
		if s.Name == "" {
			add("%s: invalid empty name %q", sp.Child("imagePullSecrets").Index(i).Child("name"), s.Name)
		}
	}

	fractional := func(list corev1.ResourceList, name corev1.ResourceName, p *field.Path) {
		if q, ok := list[name]; ok && q.MilliValue()%1000 != 0 {
			add("%s: fractional byte value %q is invalid, must be an integer", p.Key(string(name)), q.String())
		}
	}
	fractional(spec.Overhead, corev1.ResourceMemory, sp.Child("overhead"))
	fractional(spec.Overhead, corev1.ResourceEphemeralStorage, sp.Child("overhead"))

	if spec.SecurityContext == nil || spec.SecurityContext.SeccompProfile == nil {
		if _, ok := annotations[corev1.SeccompPodAnnotationKey]; ok {
			add(`%s: non-functional in v1.27+; use the "seccompProfile" field instead`, ap.Key(corev1.SeccompPodAnnotationKey))
		}
	}
	var podAppArmor *corev1.AppArmorProfile
	if spec.SecurityContext != nil {
		podAppArmor = spec.SecurityContext.AppArmorProfile
	}

	visitContainers(spec, sp, func(c *corev1.Container, p *field.Path) {
		if c.SecurityContext == nil || c.SecurityContext.SeccompProfile == nil {
			if key := corev1.SeccompContainerAnnotationKeyPrefix + c.Name; hasKey(annotations, key) {
				add(`%s: non-functional in v1.27+; use the "seccompProfile" field instead`, ap.Key(key))
			}
		}
		if c.SecurityContext == nil || c.SecurityContext.AppArmorProfile == nil {
			key := corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + c.Name
			if a, ok := annotations[key]; ok && (podAppArmor == nil || !equality.Semantic.DeepEqual(podAppArmor, appArmorForAnnotation(a))) {
				add(`%s: deprecated since v1.30; use the "appArmorProfile" field instead`, ap.Key(key))
			}
		}
		fractional(c.Resources.Limits, corev1.ResourceMemory, p.Child("resources", "limits"))
		fractional(c.Resources.Requests, corev1.ResourceMemory, p.Child("resources", "requests"))
		fractional(c.Resources.Limits, corev1.ResourceEphemeralStorage, p.Child("resources", "limits"))
		fractional(c.Resources.Requests, corev1.ResourceEphemeralStorage, p.Child("resources", "requests"))
		if len(c.Env) > 1 {
			seen := sets.New[string]()
			for i, e := range c.Env {
				if !seen.Has(e.Name) {
					seen.Insert(e.Name)
					continue
				}
				// A redefinition that builds on the earlier value is fine.
				ref := fmt.Sprintf("$(%s)", e.Name)
				if e.ValueFrom != nil || e.Value == ref || !strings.Contains(e.Value, ref) {
					add("%s: hides previous definition of %q, which may be dropped when using apply", p.Child("env").Index(i), e.Name)
				}
			}
		}
	})

	type portAt struct {
		path *field.Path
		port corev1.ContainerPort
	}
	ports := map[string][]portAt{}
	visitContainers(spec, sp, func(c *corev1.Container, p *field.Path) {
		for i, port := range c.Ports {
			pp := p.Child("ports").Index(i)
			if port.HostIP != "" && port.HostPort == 0 {
				add("%s: hostIP set without hostPort: %+v", pp, port)
			}
			k := fmt.Sprintf("%d/%s", port.ContainerPort, port.Protocol)
			for _, other := range ports[k] {
				a, b := port.HostIP == "", other.port.HostIP == ""
				switch {
				case port.HostIP == other.port.HostIP && port.HostPort == other.port.HostPort:
					add("%s: duplicate port definition with %s", pp, other.path)
				case port.HostPort == 0 || other.port.HostPort == 0:
					add("%s: overlapping port definition with %s", pp, other.path)
				case port.HostPort == other.port.HostPort && (a || b) && !(a && b):
					add("%s: dangerously ambiguous port definition with %s", pp, other.path)
				}
			}
			ports[k] = append(ports[k], portAt{pp, port})
		}
	})
	names := map[string]*field.Path{}
	visitContainers(spec, sp, func(c *corev1.Container, p *field.Path) {
		for i, port := range c.Ports {
			if port.Name == "" {
				continue
			}
			if other, ok := names[port.Name]; ok {
				add("%s: duplicate port name %q with %s, services and probes that select ports by name will use %s", p.Child("ports").Index(i), port.Name, other, other)
			} else {
				names[port.Name] = p.Child("ports").Index(i)
			}
		}
	})

	if g := spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		add("%s: must be >= 0; negative values are invalid and will be treated as 1", sp.Child("terminationGracePeriodSeconds"))
	}
	nullSelectors := func(name string, req []corev1.PodAffinityTerm, pref []corev1.WeightedPodAffinityTerm) {
		ap := sp.Child("affinity", name)
		for i, term := range req {
			if term.LabelSelector == nil {
				add("%s: a null labelSelector results in matching no pod", ap.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i).Child("labelSelector"))
			}
		}
		for i, term := range pref {
			if term.PodAffinityTerm.LabelSelector == nil {
				add("%s: a null labelSelector results in matching no pod", ap.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i).Child("podAffinityTerm", "labelSelector"))
			}
		}
	}
	if a := spec.Affinity; a != nil {
		if pa := a.PodAffinity; pa != nil {
			nullSelectors("podAffinity", pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
		}
		if pa := a.PodAntiAffinity; pa != nil {
			nullSelectors("podAntiAffinity", pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
		}
	}
	if spec.DNSConfig != nil {
		for i, ns := range spec.DNSConfig.Nameservers {
			ws = append(ws, validation.GetWarningsForIP(sp.Child("dnsConfig", "nameservers").Index(i), ns)...)
		}
	}
	for i, h := range spec.HostAliases {
		ws = append(ws, validation.GetWarningsForIP(sp.Child("hostAliases").Index(i).Child("ip"), h.IP)...)
	}
	return ws
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}

// visitContainers visits init containers, containers and ephemeral
// containers, in kube's order.
func visitContainers(spec *corev1.PodSpec, sp *field.Path, visit func(*corev1.Container, *field.Path)) {
	for i := range spec.InitContainers {
		visit(&spec.InitContainers[i], sp.Child("initContainers").Index(i))
	}
	for i := range spec.Containers {
		visit(&spec.Containers[i], sp.Child("containers").Index(i))
	}
	for i := range spec.EphemeralContainers {
		visit((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon), sp.Child("ephemeralContainers").Index(i))
	}
}

var deprecatedNodeLabels = map[string]string{
	`beta.kubernetes.io/arch`:                       `deprecated since v1.14; use "kubernetes.io/arch" instead`,
	`beta.kubernetes.io/os`:                         `deprecated since v1.14; use "kubernetes.io/os" instead`,
	`failure-domain.beta.kubernetes.io/region`:      `deprecated since v1.17; use "topology.kubernetes.io/region" instead`,
	`failure-domain.beta.kubernetes.io/zone`:        `deprecated since v1.17; use "topology.kubernetes.io/zone" instead`,
	`beta.kubernetes.io/instance-type`:              `deprecated since v1.17; use "node.kubernetes.io/instance-type" instead`,
	`app.kubernetes.io/created-by`:                  `deprecated since v1.9`,
	`scheduler.alpha.kubernetes.io/preferAvoidPods`: `deprecated since v1.22; use Taints and Tolerations instead`,
	`node-role.kubernetes.io/master`:                `use "node-role.kubernetes.io/control-plane" instead`,
}

var deprecatedPodAnnotations = []struct{ key, message string }{
	{`scheduler.alpha.kubernetes.io/critical-pod`, `non-functional in v1.16+; use the "priorityClassName" field instead`},
	{`security.alpha.kubernetes.io/sysctls`, `non-functional in v1.11+; use the "sysctls" field instead`},
	{`security.alpha.kubernetes.io/unsafe-sysctls`, `non-functional in v1.11+; use the "sysctls" field instead`},
}

func nodeSelectorTermWarnings(term corev1.NodeSelectorTerm, checkValues bool, p *field.Path) []string {
	var ws []string
	for i, e := range term.MatchExpressions {
		ep := p.Child("matchExpressions").Index(i)
		if msg, ok := deprecatedNodeLabels[e.Key]; ok {
			ws = append(ws, fmt.Sprintf("%s: %s is %s", ep.Child("key"), e.Key, msg))
		}
		if checkValues {
			for j, v := range e.Values {
				for _, msg := range validation.IsValidLabelValue(v) {
					ws = append(ws, fmt.Sprintf("%s: %s is invalid, %s", ep.Child("values").Index(j), v, msg))
				}
			}
		}
	}
	return ws
}

// appArmorForAnnotation is the profile field a deprecated AppArmor
// annotation value stands for, or nil.
func appArmorForAnnotation(a string) *corev1.AppArmorProfile {
	switch {
	case a == corev1.DeprecatedAppArmorBetaProfileNameUnconfined:
		return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
	case a == corev1.DeprecatedAppArmorBetaProfileRuntimeDefault:
		return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}
	case strings.HasPrefix(a, corev1.DeprecatedAppArmorBetaProfileNamePrefix):
		if name := strings.TrimPrefix(a, corev1.DeprecatedAppArmorBetaProfileNamePrefix); name != "" {
			return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: &name}
		}
	}
	return nil
}

// pathFrom is a file path in a volume and what put it there.
type pathFrom struct{ path, source string }

func (p pathFrom) String() string {
	if p.source != "" {
		return fmt.Sprintf("%q (%s)", p.path, p.source)
	}
	return fmt.Sprintf("%q", p.path)
}

// overlappingPathWarnings: two keys of one volume written to the same
// path, or one inside the other, overwrite each other or fail.
func overlappingPathWarnings(volumes []corev1.Volume) []string {
	var ws []string
	warn := func(vol, desc, body string) {
		ws = append(ws, fmt.Sprintf("volume %q (%s): overlapping paths: %s", vol, desc, body))
	}
	keyPaths := func(items []corev1.KeyToPath, source string) []pathFrom {
		out := make([]pathFrom, 0, len(items))
		for _, it := range items {
			out = append(out, pathFrom{it.Path, source})
		}
		return out
	}
	downwardPaths := func(items []corev1.DownwardAPIVolumeFile, source string) []pathFrom {
		out := make([]pathFrom, 0, len(items))
		for _, it := range items {
			out = append(out, pathFrom{it.Path, source})
		}
		return out
	}
	for _, v := range volumes {
		if v.ConfigMap != nil && v.ConfigMap.Items != nil {
			for _, o := range mappingOverlaps(keyPaths(v.ConfigMap.Items, "")) {
				warn(v.Name, fmt.Sprintf("ConfigMap %q", v.ConfigMap.Name), o)
			}
		}
		if v.Secret != nil && v.Secret.Items != nil {
			for _, o := range mappingOverlaps(keyPaths(v.Secret.Items, "")) {
				warn(v.Name, fmt.Sprintf("Secret %q", v.Secret.SecretName), o)
			}
		}
		if v.DownwardAPI != nil && v.DownwardAPI.Items != nil {
			for _, o := range mappingOverlaps(downwardPaths(v.DownwardAPI.Items, "")) {
				warn(v.Name, "DownwardAPI", o)
			}
		}
		if v.Projected == nil {
			continue
		}
		var all []pathFrom
		for _, s := range v.Projected.Sources {
			if s == (corev1.VolumeProjection{}) {
				ws = append(ws, fmt.Sprintf("volume %q (Projected) has no sources provided", v.Name))
				continue
			}
			var paths []pathFrom
			switch {
			case s.ConfigMap != nil && s.ConfigMap.Items != nil:
				paths = keyPaths(s.ConfigMap.Items, fmt.Sprintf("ConfigMap %q", s.ConfigMap.Name))
			case s.Secret != nil && s.Secret.Items != nil:
				paths = keyPaths(s.Secret.Items, fmt.Sprintf("Secret %q", s.Secret.Name))
			case s.DownwardAPI != nil && s.DownwardAPI.Items != nil:
				paths = downwardPaths(s.DownwardAPI.Items, "DownwardAPI")
			case s.ServiceAccountToken != nil:
				paths = []pathFrom{{s.ServiceAccountToken.Path, "ServiceAccountToken"}}
			case s.ClusterTrustBundle != nil:
				name := ""
				if s.ClusterTrustBundle.Name != nil {
					name = *s.ClusterTrustBundle.Name
				} else if s.ClusterTrustBundle.SignerName != nil {
					name = *s.ClusterTrustBundle.SignerName
				}
				paths = []pathFrom{{s.ClusterTrustBundle.Path, fmt.Sprintf("ClusterTrustBundle %q", name)}}
			case s.PodCertificate != nil:
				pc := s.PodCertificate
				for _, x := range []pathFrom{{pc.CertificateChainPath, "PodCertificate chain"}, {pc.KeyPath, "PodCertificate key"}, {pc.CredentialBundlePath, "PodCertificate credential bundle"}} {
					if x.path != "" {
						paths = append(paths, x)
					}
				}
			}
			for _, p := range paths {
				p.path = strings.TrimRight(p.path, "/")
				for _, c := range pathCollisions(all, p) {
					warn(v.Name, "Projected", fmt.Sprintf("%s with %s", p, c))
				}
				all = append(all, p)
			}
		}
	}
	return ws
}

func mappingOverlaps(paths []pathFrom) []string {
	var ws []string
	var all []pathFrom
	for _, p := range paths {
		p.path = strings.TrimRight(p.path, "/")
		for _, c := range pathCollisions(all, p) {
			ws = append(ws, fmt.Sprintf("%s with %s", p, c))
		}
		all = append(all, p)
	}
	return ws
}

func pathCollisions(haystack []pathFrom, needle pathFrom) []pathFrom {
	if needle.path == "" {
		return nil
	}
	var out []pathFrom
	for _, it := range haystack {
		switch {
		case it.path == "":
		case it == needle,
			strings.HasPrefix(it.path+"/", needle.path+"/"),
			strings.HasPrefix(needle.path+"/", it.path+"/"):
			out = append(out, it)
		}
	}
	return out
}

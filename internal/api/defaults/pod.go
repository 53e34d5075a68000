package defaults

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// pod defaults a Pod. Some rules apply to a Pod only, not to the pod
// templates inside workloads: kube keeps them out of templates so that
// adding a default never changes an existing template (which would roll
// every workload on upgrade).
func pod(p *corev1.Pod) {
	podOnly(p)
	podSpec(&p.Spec)
	podStatus(&p.Status)
}

// podOnly holds the rules kube applies to a Pod but not to a PodSpec in a
// template. They run before the PodSpec rules, as in kube.
func podOnly(p *corev1.Pod) {
	s := &p.Spec
	// A negative grace period means "now", which kube turns into 1s.
	if s.TerminationGracePeriodSeconds != nil && *s.TerminationGracePeriodSeconds < 0 {
		s.TerminationGracePeriodSeconds = ptr.To[int64](1)
	}
	// Requests default to limits for the resources that have a limit and
	// no request. Ephemeral containers have no resources to default.
	for i := range s.Containers {
		requestsFromLimits(&s.Containers[i].Resources)
	}
	for i := range s.InitContainers {
		requestsFromLimits(&s.InitContainers[i].Resources)
	}
	// Pod-level resource defaulting (PodLevelResources) runs at create, not
	// at decode, once PodLevelResourcesFixDefaulting is on, as it is by
	// default: that is a strategy's job, not this package's.
	if s.EnableServiceLinks == nil {
		s.EnableServiceLinks = ptr.To(corev1.DefaultEnableServiceLinks)
	}
	// On the host network a container port is a host port.
	if s.HostNetwork {
		hostNetworkPorts(s.Containers)
		hostNetworkPorts(s.InitContainers)
	}
	// The HTTP probe protocol (H2CContainerProbe) is alpha and off by
	// default, so it is not defaulted.
}

func requestsFromLimits(r *corev1.ResourceRequirements) {
	if r.Limits == nil {
		return
	}
	if r.Requests == nil {
		r.Requests = corev1.ResourceList{}
	}
	for name, limit := range r.Limits {
		if _, ok := r.Requests[name]; !ok {
			r.Requests[name] = limit.DeepCopy()
		}
	}
}

func hostNetworkPorts(cs []corev1.Container) {
	for i := range cs {
		for j := range cs[i].Ports {
			p := &cs[i].Ports[j]
			if p.HostPort == 0 {
				p.HostPort = p.ContainerPort
			}
		}
	}
}

// podStatus keeps status.podIP and status.podIPs in step, podIP winning,
// and rounds the quantities in the status.
func podStatus(s *corev1.PodStatus) {
	switch {
	case s.PodIP != "" && len(s.PodIPs) == 0:
		s.PodIPs = []corev1.PodIP{{IP: s.PodIP}}
	case s.PodIP == "" && len(s.PodIPs) > 0:
		s.PodIP = s.PodIPs[0].IP
	case s.PodIP != "" && s.PodIPs[0].IP != s.PodIP:
		// Older kubelets only set podIP, so it is the one to trust.
		s.PodIPs = []corev1.PodIP{{IP: s.PodIP}}
	}
	for _, list := range [][]corev1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses, s.EphemeralContainerStatuses} {
		for i := range list {
			roundResourceList(list[i].AllocatedResources)
			roundRequirements(list[i].Resources)
		}
	}
	roundResourceList(s.AllocatedResources)
	roundRequirements(s.Resources)
}

// podSpec defaults a PodSpec wherever it appears: in a Pod and in every
// pod template (PodTemplate, ReplicationController, the apps and batch
// workloads).
func podSpec(s *corev1.PodSpec) {
	// serviceAccount is the deprecated alias of serviceAccountName; the
	// two are kept equal, serviceAccountName winning.
	if s.ServiceAccountName == "" {
		s.ServiceAccountName = s.DeprecatedServiceAccount
	}
	s.DeprecatedServiceAccount = s.ServiceAccountName
	if s.DNSPolicy == "" {
		s.DNSPolicy = corev1.DNSClusterFirst
	}
	if s.RestartPolicy == "" {
		s.RestartPolicy = corev1.RestartPolicyAlways
	}
	// kube always stores an empty pod securityContext rather than none.
	if s.SecurityContext == nil {
		s.SecurityContext = &corev1.PodSecurityContext{}
	}
	if s.TerminationGracePeriodSeconds == nil {
		s.TerminationGracePeriodSeconds = ptr.To[int64](corev1.DefaultTerminationGracePeriodSeconds)
	}
	if s.SchedulerName == "" {
		s.SchedulerName = corev1.DefaultSchedulerName
	}

	for i := range s.Volumes {
		volume(&s.Volumes[i])
	}
	for i := range s.InitContainers {
		container(&s.InitContainers[i])
	}
	for i := range s.Containers {
		container(&s.Containers[i])
	}
	for i := range s.EphemeralContainers {
		// An ephemeral container shares the Container layout and rules.
		container((*corev1.Container)(&s.EphemeralContainers[i].EphemeralContainerCommon))
	}
	roundResourceList(s.Overhead)
	roundRequirements(s.Resources)
}

func container(c *corev1.Container) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = pullPolicyFor(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
	for i := range c.Env {
		from := c.Env[i].ValueFrom
		if from == nil {
			continue
		}
		if from.FieldRef != nil {
			fieldSelector(from.FieldRef)
		}
		if from.FileKeyRef != nil && from.FileKeyRef.Optional == nil {
			from.FileKeyRef.Optional = ptr.To(false)
		}
	}
	roundResourceList(c.Resources.Limits)
	roundResourceList(c.Resources.Requests)
	probe(c.LivenessProbe)
	probe(c.ReadinessProbe)
	probe(c.StartupProbe)
	if c.Lifecycle != nil {
		lifecycleHandler(c.Lifecycle.PostStart)
		lifecycleHandler(c.Lifecycle.PreStop)
	}
}

func probe(p *corev1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	httpGet(p.HTTPGet)
	// An unset gRPC service means the server's overall health: "".
	if p.GRPC != nil && p.GRPC.Service == nil {
		p.GRPC.Service = ptr.To("")
	}
}

func lifecycleHandler(h *corev1.LifecycleHandler) {
	if h != nil {
		httpGet(h.HTTPGet)
	}
}

func httpGet(a *corev1.HTTPGetAction) {
	if a == nil {
		return
	}
	if a.Path == "" {
		a.Path = "/"
	}
	if a.Scheme == "" {
		a.Scheme = corev1.URISchemeHTTP
	}
}

// fieldSelector defaults the API version of a downward API field path.
func fieldSelector(f *corev1.ObjectFieldSelector) {
	if f.APIVersion == "" {
		f.APIVersion = "v1"
	}
}

func volume(v *corev1.Volume) {
	src := &v.VolumeSource
	// A volume with no source is an emptyDir.
	if ptr.AllPtrFieldsNil(src) {
		src.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	// Image volumes (GA) pull like containers do.
	if src.Image != nil && src.Image.PullPolicy == "" {
		src.Image.PullPolicy = pullPolicyFor(src.Image.Reference)
	}
	if src.HostPath != nil {
		hostPathType(&src.HostPath.Type)
	}
	if src.Secret != nil && src.Secret.DefaultMode == nil {
		src.Secret.DefaultMode = ptr.To(corev1.SecretVolumeSourceDefaultMode)
	}
	if src.ISCSI != nil && src.ISCSI.ISCSIInterface == "" {
		src.ISCSI.ISCSIInterface = "default"
	}
	if src.RBD != nil {
		rbd(&src.RBD.RBDPool, &src.RBD.RadosUser, &src.RBD.Keyring)
	}
	if src.DownwardAPI != nil {
		if src.DownwardAPI.DefaultMode == nil {
			src.DownwardAPI.DefaultMode = ptr.To(corev1.DownwardAPIVolumeSourceDefaultMode)
		}
		downwardAPIItems(src.DownwardAPI.Items)
	}
	if src.ConfigMap != nil && src.ConfigMap.DefaultMode == nil {
		src.ConfigMap.DefaultMode = ptr.To(corev1.ConfigMapVolumeSourceDefaultMode)
	}
	if src.AzureDisk != nil {
		azureDisk(src.AzureDisk)
	}
	if src.Projected != nil {
		projected(src.Projected)
	}
	if src.ScaleIO != nil {
		scaleIO(&src.ScaleIO.StorageMode, &src.ScaleIO.FSType)
	}
	if src.Ephemeral != nil && src.Ephemeral.VolumeClaimTemplate != nil {
		persistentVolumeClaimSpec(&src.Ephemeral.VolumeClaimTemplate.Spec)
	}
}

func hostPathType(t **corev1.HostPathType) {
	// The unset type ("") means no check before mounting.
	if *t == nil {
		*t = ptr.To(corev1.HostPathUnset)
	}
}

func rbd(pool, user, keyring *string) {
	if *pool == "" {
		*pool = "rbd"
	}
	if *user == "" {
		*user = "admin"
	}
	if *keyring == "" {
		*keyring = "/etc/ceph/keyring"
	}
}

func azureDisk(a *corev1.AzureDiskVolumeSource) {
	if a.CachingMode == nil {
		a.CachingMode = ptr.To(corev1.AzureDataDiskCachingReadWrite)
	}
	if a.FSType == nil {
		a.FSType = ptr.To("ext4")
	}
	if a.ReadOnly == nil {
		a.ReadOnly = ptr.To(false)
	}
	if a.Kind == nil {
		a.Kind = ptr.To(corev1.AzureSharedBlobDisk)
	}
}

func scaleIO(storageMode, fsType *string) {
	if *storageMode == "" {
		*storageMode = "ThinProvisioned"
	}
	if *fsType == "" {
		*fsType = "xfs"
	}
}

func downwardAPIItems(items []corev1.DownwardAPIVolumeFile) {
	for i := range items {
		if items[i].FieldRef != nil {
			fieldSelector(items[i].FieldRef)
		}
	}
}

func projected(p *corev1.ProjectedVolumeSource) {
	if p.DefaultMode == nil {
		p.DefaultMode = ptr.To(corev1.ProjectedVolumeSourceDefaultMode)
	}
	for i := range p.Sources {
		s := &p.Sources[i]
		if s.DownwardAPI != nil {
			downwardAPIItems(s.DownwardAPI.Items)
		}
		// A projected token lives an hour unless asked otherwise.
		if s.ServiceAccountToken != nil && s.ServiceAccountToken.ExpirationSeconds == nil {
			s.ServiceAccountToken.ExpirationSeconds = ptr.To(int64(time.Hour.Seconds()))
		}
	}
}

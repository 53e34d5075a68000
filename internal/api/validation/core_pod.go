package validation

import (
	"fmt"
	"math"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

const (
	fileModeErrorMsg      = "must be a number between 0 and 0777 (octal), both inclusive"
	emptyDirModeErrorMsg  = "must be a number between 0 and 01777 (octal), both inclusive"
	isNotPositiveErrorMsg = "must be greater than zero"
	isNotIntegerErrorMsg  = "must be an integer"
	maxDNSNameservers     = 3
	maxDNSSearchPaths     = 32
	maxDNSSearchListChars = 2048
	mirrorPodAnnotation   = "kubernetes.io/config.mirror"
	podDeletionCost       = "controller.kubernetes.io/pod-deletion-cost"
	hugePagesPrefix       = "hugepages-"
)

// podOptions are the parts of kube's PodValidationOptions that differ between
// a Pod and an embedded template. Everything else is fixed at the v1.37
// feature-gate defaults.
type podOptions struct {
	// resourceIsPod is set when the spec is a Pod's, not a template's.
	resourceIsPod bool
}

func dns1123Label(value string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(value) {
		errs = append(errs, field.Invalid(p, value, msg))
	}
	return errs
}

func dns1123Subdomain(value string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(value) {
		errs = append(errs, field.Invalid(p, value, msg))
	}
	return errs
}

func qualifiedName(value string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(value) {
		errs = append(errs, field.Invalid(p, value, msg))
	}
	return errs
}

func nameErrs(fn nameFunc, value string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range fn(value, false) {
		errs = append(errs, field.Invalid(p, value, msg))
	}
	return errs
}

func nonNegative(v int64, p *field.Path) field.ErrorList {
	return apimachineryvalidation.ValidateNonnegativeField(v, p)
}

// strictIPs is the StrictIPCIDRValidation gate, on by default in v1.37.
const strictIPs = true

func legacyIP(p *field.Path, value string, validOld []string) field.ErrorList {
	return validation.IsValidIPForLegacyField(p, value, strictIPs, validOld)
}

func legacyCIDR(p *field.Path, value string, validOld []string) field.ErrorList {
	return validation.IsValidCIDRForLegacyField(p, value, strictIPs, validOld)
}

// sortedKeys gives map keys in order: kube walks these maps in Go's random
// order, a stable order keeps messages reproducible.
func sortedKeys[V any](m map[corev1.ResourceName]V) []corev1.ResourceName {
	keys := make([]corev1.ResourceName, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}

// validatePod is kube's ValidatePodCreate.
func validatePod(pod *corev1.Pod) field.ErrorList {
	opts := podOptions{resourceIsPod: true}
	errs := validatePodMetadataAndSpec(pod, opts)
	specPath := field.NewPath("spec")
	if len(pod.Spec.EphemeralContainers) > 0 {
		errs = append(errs, field.Forbidden(specPath.Child("ephemeralContainers"), "cannot be set on create"))
	}
	if pod.Spec.NodeName != "" && len(pod.Spec.SchedulingGates) != 0 {
		errs = append(errs, field.Forbidden(specPath.Child("nodeName"), "cannot be set until all schedulingGates have been cleared"))
	}
	return errs
}

func validatePodMetadataAndSpec(pod *corev1.Pod, opts podOptions) field.ErrorList {
	specPath := field.NewPath("spec")
	errs := objectMeta(&pod.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	errs = append(errs, validatePodAnnotations(pod.Annotations, &pod.Spec, metadataPath.Child("annotations"))...)
	errs = append(errs, validatePodSpec(&pod.Spec, &pod.ObjectMeta, specPath, opts)...)

	if pod.Spec.ServiceAccountName == "" {
		for vi, v := range pod.Spec.Volumes {
			if v.Projected == nil {
				continue
			}
			for si, s := range v.Projected.Sources {
				if s.ServiceAccountToken != nil {
					errs = append(errs, field.Forbidden(specPath.Child("volumes").Index(vi).Child("projected", "sources").Index(si).Child("serviceAccountToken"), "must not be specified when serviceAccountName is not set"))
				}
			}
		}
	}
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		errs = append(errs, nonNegative(*pod.Spec.TerminationGracePeriodSeconds, specPath.Child("terminationGracePeriodSeconds"))...)
	}
	errs = append(errs, imageWhitespace(pod.Spec.Containers, specPath.Child("containers"))...)
	errs = append(errs, imageWhitespace(pod.Spec.InitContainers, specPath.Child("initContainers"))...)
	return errs
}

// imageWhitespace is a Pod-only rule: templates have long allowed padded images.
func imageWhitespace(ctrs []corev1.Container, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, c := range ctrs {
		if len(c.Image) != len(strings.TrimSpace(c.Image)) {
			errs = append(errs, field.Invalid(p.Index(i).Child("image"), c.Image, "must not have leading or trailing whitespace"))
		}
	}
	return errs
}

func validatePodAnnotations(annotations map[string]string, spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if v, ok := annotations[mirrorPodAnnotation]; ok && spec.NodeName == "" {
		errs = append(errs, field.Invalid(p.Key(mirrorPodAnnotation), v, "must set spec.nodeName if mirror pod annotation is set"))
	}
	if v, ok := annotations[podDeletionCost]; ok {
		// No plus sign and no leading zeros.
		validFirst := v != "" && (v[0] == '-' || v == "0" || (v[0] >= '1' && v[0] <= '9'))
		if _, err := strconv.ParseInt(v, 10, 32); err != nil || !validFirst {
			errs = append(errs, field.Invalid(p.Key(podDeletionCost), v, "must be a 32bit integer"))
		}
	}
	if v, ok := annotations[corev1.SeccompPodAnnotationKey]; ok {
		errs = append(errs, validateSeccompAnnotation(v, p.Child(corev1.SeccompPodAnnotationKey))...)
	}
	keys := sortedStrings(annotations)
	for _, k := range keys {
		if strings.HasPrefix(k, corev1.SeccompContainerAnnotationKeyPrefix) {
			errs = append(errs, validateSeccompAnnotation(annotations[k], p.Child(k))...)
		}
	}
	for _, k := range keys {
		name, ok := strings.CutPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix)
		if !ok {
			continue
		}
		if !specHasContainer(spec, name) {
			errs = append(errs, field.Invalid(p.Key(k), name, "container not found"))
		}
		v := annotations[k]
		if v != "" && v != corev1.DeprecatedAppArmorBetaProfileRuntimeDefault && v != corev1.DeprecatedAppArmorBetaProfileNameUnconfined &&
			!strings.HasPrefix(v, corev1.DeprecatedAppArmorBetaProfileNamePrefix) {
			errs = append(errs, field.Invalid(p.Key(k), v, fmt.Sprintf("invalid AppArmor profile name: %q", v)))
		}
	}
	return errs
}

func validateSeccompAnnotation(v string, p *field.Path) field.ErrorList {
	switch {
	case v == corev1.SeccompProfileRuntimeDefault, v == corev1.DeprecatedSeccompProfileDockerDefault, v == corev1.SeccompProfileNameUnconfined:
		return nil
	case strings.HasPrefix(v, corev1.SeccompLocalhostProfileNamePrefix):
		return validateLocalDescendingPath(strings.TrimPrefix(v, corev1.SeccompLocalhostProfileNamePrefix), p)
	}
	return field.ErrorList{field.Invalid(p, v, "must be a valid seccomp profile")}
}

func specHasContainer(spec *corev1.PodSpec, name string) bool {
	found := false
	visitContainers(spec, field.NewPath("spec"), func(c *corev1.Container, _ *field.Path) {
		found = found || c.Name == name
	})
	return found
}

func validateAppArmorProfile(ap *corev1.AppArmorProfile, p *field.Path) field.ErrorList {
	if ap == nil {
		return nil
	}
	var errs field.ErrorList
	switch ap.Type {
	case corev1.AppArmorProfileTypeLocalhost:
		lp := p.Child("localhostProfile")
		if ap.LocalhostProfile == nil {
			return field.ErrorList{field.Required(lp, "must be set when AppArmor type is Localhost")}
		}
		trimmed := strings.TrimSpace(*ap.LocalhostProfile)
		if trimmed != *ap.LocalhostProfile {
			errs = append(errs, field.Invalid(lp, *ap.LocalhostProfile, "must not be padded with whitespace"))
		} else if trimmed == "" {
			errs = append(errs, field.Required(lp, "must be set when AppArmor type is Localhost"))
		}
		if len(*ap.LocalhostProfile) > 4095 {
			errs = append(errs, field.TooLong(lp, "", 4095))
		}
	case corev1.AppArmorProfileTypeRuntimeDefault, corev1.AppArmorProfileTypeUnconfined:
		if ap.LocalhostProfile != nil {
			errs = append(errs, field.Invalid(p.Child("localhostProfile"), ap.LocalhostProfile, "can only be set when AppArmor type is Localhost"))
		}
	case "":
		errs = append(errs, field.Required(p.Child("type"), "type is required when appArmorProfile is set"))
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), ap.Type,
			[]corev1.AppArmorProfileType{corev1.AppArmorProfileTypeLocalhost, corev1.AppArmorProfileTypeRuntimeDefault, corev1.AppArmorProfileTypeUnconfined}))
	}
	return errs
}

// validatePodUpdate is kube's ValidatePodUpdate: only images, deadlines,
// added tolerations and removed scheduling gates may change.
func validatePodUpdate(pod, old *corev1.Pod) field.ErrorList {
	opts := podOptions{resourceIsPod: true}
	errs := objectMetaUpdate(&pod.ObjectMeta, &old.ObjectMeta, metadataPath)
	errs = append(errs, validatePodMetadataAndSpec(pod, opts)...)
	errs = append(errs, validatePodAnnotationUpdates(pod, old, metadataPath.Child("annotations"))...)
	specPath := field.NewPath("spec")

	cErrs, stop := validateContainerUpdates(pod.Spec.Containers, old.Spec.Containers, specPath.Child("containers"))
	errs = append(errs, cErrs...)
	if stop {
		return errs
	}
	cErrs, stop = validateContainerUpdates(pod.Spec.InitContainers, old.Spec.InitContainers, specPath.Child("initContainers"))
	errs = append(errs, cErrs...)
	if stop {
		return errs
	}

	if pod.Spec.ActiveDeadlineSeconds != nil {
		v := *pod.Spec.ActiveDeadlineSeconds
		if v < 0 || v > math.MaxInt32 {
			return append(errs, field.Invalid(specPath.Child("activeDeadlineSeconds"), v, validation.InclusiveRangeError(0, math.MaxInt32)))
		}
		if old.Spec.ActiveDeadlineSeconds != nil && *old.Spec.ActiveDeadlineSeconds < v {
			return append(errs, field.Invalid(specPath.Child("activeDeadlineSeconds"), v, "must be less than or equal to previous value"))
		}
	} else if old.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Invalid(specPath.Child("activeDeadlineSeconds"), pod.Spec.ActiveDeadlineSeconds, "must not update from a positive integer to nil value"))
	}

	errs = append(errs, validateOnlyAddedTolerations(pod.Spec.Tolerations, old.Spec.Tolerations, specPath.Child("tolerations"))...)
	errs = append(errs, validateOnlyDeletedSchedulingGates(pod.Spec.SchedulingGates, old.Spec.SchedulingGates, specPath.Child("schedulingGates"))...)

	if apiequality.Semantic.DeepEqual(pod.Spec, old.Spec) {
		return errs
	}
	// Put the updatable fields back to their old values and compare the rest.
	munged := *pod.Spec.DeepCopy()
	for i := range munged.Containers {
		munged.Containers[i].Image = old.Spec.Containers[i].Image
	}
	for i := range munged.InitContainers {
		munged.InitContainers[i].Image = old.Spec.InitContainers[i].Image
	}
	munged.ActiveDeadlineSeconds = old.Spec.ActiveDeadlineSeconds
	munged.SchedulingGates = old.Spec.SchedulingGates
	munged.Tolerations = old.Spec.Tolerations
	if old.Spec.TerminationGracePeriodSeconds != nil && *old.Spec.TerminationGracePeriodSeconds < 0 &&
		munged.TerminationGracePeriodSeconds != nil && *munged.TerminationGracePeriodSeconds == 1 {
		munged.TerminationGracePeriodSeconds = old.Spec.TerminationGracePeriodSeconds
	}
	if len(old.Spec.SchedulingGates) > 0 {
		// Gated pods may gain node selector entries and node affinity.
		if !apiequality.Semantic.DeepEqual(munged.NodeSelector, old.Spec.NodeSelector) {
			errs = append(errs, validateNodeSelectorMutation(specPath.Child("nodeSelector"), munged.NodeSelector, old.Spec.NodeSelector)...)
			munged.NodeSelector = old.Spec.NodeSelector
		}
	}
	if !apiequality.Semantic.DeepEqual(munged, old.Spec) {
		// kube diffs the JSON of its internal type; internal{} comes close.
		errs = append(errs, field.Forbidden(specPath, fmt.Sprintf("pod updates may not change fields other than %s\n%v", strings.Join(updatablePodSpecFields, ","), diff.Diff(internal{old.Spec}, internal{munged}))))
	}
	return errs
}

var updatablePodSpecFields = []string{
	"`spec.containers[*].image`",
	"`spec.initContainers[*].image`",
	"`spec.activeDeadlineSeconds`",
	"`spec.tolerations` (only additions to existing tolerations)",
	"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
}

func validateNodeSelectorMutation(p *field.Path, newSel, oldSel map[string]string) field.ErrorList {
	var errs field.ErrorList
	for k, v := range oldSel {
		if nv, ok := newSel[k]; !ok || nv != v {
			errs = append(errs, field.Invalid(p.Key(k), nv, "cannot be updated or removed"))
		}
	}
	return errs
}

func validatePodAnnotationUpdates(pod, old *corev1.Pod, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for k, ov := range old.Annotations {
		if nv, ok := pod.Annotations[k]; ok && nv == ov {
			continue
		}
		if strings.HasPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) {
			errs = append(errs, field.Forbidden(p.Key(k), "may not remove or update AppArmor annotations"))
		}
		if k == mirrorPodAnnotation {
			errs = append(errs, field.Forbidden(p.Key(k), "may not remove or update mirror pod annotation"))
		}
	}
	for k := range pod.Annotations {
		if _, ok := old.Annotations[k]; ok {
			continue
		}
		if strings.HasPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) {
			errs = append(errs, field.Forbidden(p.Key(k), "may not add AppArmor annotations"))
		}
		if k == mirrorPodAnnotation {
			errs = append(errs, field.Forbidden(p.Key(k), "may not add mirror pod annotation"))
		}
	}
	return append(errs, validatePodAnnotations(pod.Annotations, &pod.Spec, p)...)
}

func validateContainerUpdates(ctrs, old []corev1.Container, p *field.Path) (field.ErrorList, bool) {
	if len(ctrs) != len(old) {
		return field.ErrorList{field.Forbidden(p, "pod updates may not add or remove containers")}, true
	}
	var errs field.ErrorList
	for i, c := range ctrs {
		if c.Image == "" {
			errs = append(errs, field.Required(p.Index(i).Child("image"), ""))
		}
		if len(strings.TrimSpace(c.Image)) != len(c.Image) {
			errs = append(errs, field.Invalid(p.Index(i).Child("image"), c.Image, "must not have leading or trailing whitespace"))
		}
	}
	return errs, false
}

func validateOnlyAddedTolerations(tols, old []corev1.Toleration, p *field.Path) field.ErrorList {
	for _, o := range old {
		found := false
		for _, t := range tols {
			o.TolerationSeconds = t.TolerationSeconds
			if apiequality.Semantic.DeepEqual(o, t) {
				found = true
				break
			}
		}
		if !found {
			return field.ErrorList{field.Forbidden(p, "existing toleration can not be modified except its tolerationSeconds")}
		}
	}
	return validateTolerations(tols, p)
}

func validateOnlyDeletedSchedulingGates(gates, old []corev1.PodSchedulingGate, p *field.Path) field.ErrorList {
	oldNames := sets.New[string]()
	for _, g := range old {
		oldNames.Insert(g.Name)
	}
	var errs field.ErrorList
	for i, g := range gates {
		if !oldNames.Has(g.Name) {
			errs = append(errs, field.Forbidden(p.Index(i).Child("name"), fmt.Sprintf("only deletion is allowed, but found new scheduling gate '%s'", g.Name)))
		}
	}
	return errs
}

// validatePodStatusUpdate is the part of kube's ValidatePodStatusUpdate that
// concerns what an API client sends: metadata, conditions and node names.
func validatePodStatusUpdate(pod, old *corev1.Pod) field.ErrorList {
	errs := objectMetaUpdate(&pod.ObjectMeta, &old.ObjectMeta, metadataPath)
	errs = append(errs, validatePodAnnotationUpdates(pod, old, metadataPath.Child("annotations"))...)
	sp := field.NewPath("status")
	errs = append(errs, validatePodConditions(pod.Status.Conditions, sp.Child("conditions"))...)
	if pod.Spec.NodeName != old.Spec.NodeName {
		errs = append(errs, field.Forbidden(sp.Child("nodeName"), "may not be changed directly"))
	}
	if pod.Status.NominatedNodeName != old.Status.NominatedNodeName && pod.Status.NominatedNodeName != "" {
		errs = append(errs, nameErrs(apimachineryvalidation.NameIsDNSSubdomain, pod.Status.NominatedNodeName, sp.Child("nominatedNodeName"))...)
	}
	if old.Spec.NodeName != "" && pod.Status.NominatedNodeName != "" && pod.Status.NominatedNodeName != old.Status.NominatedNodeName {
		errs = append(errs, field.Forbidden(sp.Child("nominatedNodeName"), "may not be set on pods that are already bound to a node"))
	}
	if pod.Status.ObservedGeneration < 0 {
		errs = append(errs, field.Invalid(sp.Child("observedGeneration"), pod.Status.ObservedGeneration, "must be a non-negative integer"))
	}
	errs = append(errs, apimachineryvalidation.ValidateImmutableField(pod.Status.QOSClass, old.Status.QOSClass, sp.Child("qosClass"))...)
	errs = append(errs, validatePodIPs(pod, old)...)
	return append(errs, validateHostIPs(pod, old)...)
}

func validatePodConditions(conds []corev1.PodCondition, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	system := sets.New(corev1.PodScheduled, corev1.PodReady, corev1.PodInitialized)
	for i, c := range conds {
		if c.ObservedGeneration < 0 {
			errs = append(errs, field.Invalid(p.Index(i).Child("observedGeneration"), c.ObservedGeneration, "must be a non-negative integer"))
		}
		if system.Has(c.Type) {
			continue
		}
		errs = append(errs, qualifiedName(string(c.Type), p.Index(i).Child("Type"))...)
	}
	return errs
}

func validatePodIPs(pod, old *corev1.Pod) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("status", "podIPs")
	// Stored addresses stay acceptable even if newer rules reject them.
	oldIPs := make([]string, 0, len(old.Status.PodIPs))
	for _, ip := range old.Status.PodIPs {
		oldIPs = append(oldIPs, ip.IP)
	}
	ips := make([]string, 0, len(pod.Status.PodIPs))
	for i, ip := range pod.Status.PodIPs {
		errs = append(errs, legacyIP(p.Index(i), ip.IP, oldIPs)...)
		ips = append(ips, ip.IP)
	}
	if len(ips) > 1 {
		dual, err := netutils.IsDualStackIPStrings(ips)
		if err != nil {
			errs = append(errs, field.InternalError(p, fmt.Errorf("failed to check for dual stack with error:%v", err)))
		}
		if !dual || len(ips) > 2 {
			errs = append(errs, field.Invalid(p, internal{pod.Status.PodIPs}, "may specify no more than one IP for each IP family"))
		}
	}
	switch hasIP, hasIPs := pod.Status.PodIP != "", len(ips) > 0; {
	case hasIP != hasIPs:
		errs = append(errs, field.Invalid(p, internal{pod.Status.PodIPs}, "podIP and podIPs must either both be set or both be unset"))
	case hasIPs && pod.Status.PodIP != ips[0]:
		errs = append(errs, field.Invalid(p.Index(0).Child("ip"), ips[0], "must be equal to `podIP`"))
	}
	return errs
}

func validateHostIPs(pod, old *corev1.Pod) field.ErrorList {
	if len(pod.Status.HostIPs) == 0 {
		return nil
	}
	var errs field.ErrorList
	p := field.NewPath("status", "hostIPs")
	if pod.Status.HostIP != pod.Status.HostIPs[0].IP {
		errs = append(errs, field.Invalid(p.Index(0).Child("ip"), pod.Status.HostIPs[0].IP, "must be equal to `hostIP`"))
	}
	oldIPs := make([]string, 0, len(old.Status.HostIPs))
	for _, ip := range old.Status.HostIPs {
		oldIPs = append(oldIPs, ip.IP)
	}
	ips := make([]string, 0, len(pod.Status.HostIPs))
	for i, ip := range pod.Status.HostIPs {
		errs = append(errs, legacyIP(p.Index(i), ip.IP, oldIPs)...)
		ips = append(ips, ip.IP)
	}
	if len(ips) > 1 {
		dual, err := netutils.IsDualStackIPStrings(ips)
		if err != nil {
			errs = append(errs, field.InternalError(p, fmt.Errorf("failed to check for dual stack with error:%v", err)))
		}
		if !dual || len(ips) > 2 {
			errs = append(errs, field.Invalid(p, internal{pod.Status.HostIPs}, "may specify no more than one IP for each IP family"))
		}
	}
	return errs
}

// validatePodTemplateSpec is kube's ValidatePodTemplateSpec.
func validatePodTemplateSpec(t *corev1.PodTemplateSpec, p *field.Path, opts podOptions) field.ErrorList {
	errs := metav1validation.ValidateLabels(t.Labels, p.Child("labels"))
	errs = append(errs, apimachineryvalidation.ValidateAnnotations(t.Annotations, p.Child("annotations"))...)
	errs = append(errs, validatePodAnnotations(t.Annotations, &t.Spec, p.Child("annotations"))...)
	errs = append(errs, validatePodSpec(&t.Spec, nil, p.Child("spec"), opts)...)
	if len(t.Spec.EphemeralContainers) > 0 {
		errs = append(errs, field.Forbidden(p.Child("spec", "ephemeralContainers"), "ephemeral containers not allowed in pod template"))
	}
	return errs
}

// validatePodSpec is kube's ValidatePodSpec, in its order.
func validatePodSpec(spec *corev1.PodSpec, podMeta *metav1.ObjectMeta, p *field.Path, opts podOptions) field.ErrorList {
	var errs field.ErrorList
	if spec.TerminationGracePeriodSeconds == nil {
		errs = append(errs, field.Required(p.Child("terminationGracePeriodSeconds"), ""))
	}
	grace := spec.TerminationGracePeriodSeconds
	hostUsers := spec.HostUsers == nil || *spec.HostUsers

	vols, vErrs := validateVolumes(spec.Volumes, podMeta, p.Child("volumes"))
	errs = append(errs, vErrs...)
	claimNames := sets.New[string]()
	for _, c := range spec.ResourceClaims {
		if c.Name != "" {
			claimNames.Insert(c.Name)
		}
	}
	errs = append(errs, validatePodResourceClaims(podMeta, spec.ResourceClaims, p.Child("resourceClaims"))...)
	errs = append(errs, validateContainers(spec.Containers, spec.OS, vols, claimNames, grace, p.Child("containers"), spec.RestartPolicy, hostUsers)...)
	errs = append(errs, validateInitContainers(spec.InitContainers, spec.OS, spec.Containers, vols, claimNames, grace, p.Child("initContainers"), spec.RestartPolicy, hostUsers)...)
	errs = append(errs, validateEphemeralContainers(spec.EphemeralContainers, spec.Containers, spec.InitContainers, vols, claimNames, p.Child("ephemeralContainers"), spec.RestartPolicy, hostUsers)...)
	errs = append(errs, validatePodResources(spec, claimNames, p)...)
	errs = append(errs, validatePodHostNetworkDeps(spec, p, opts)...)
	errs = append(errs, validateRestartPolicy(spec.RestartPolicy, p.Child("restartPolicy"))...)
	errs = append(errs, validateDNSPolicy(spec.DNSPolicy, p.Child("dnsPolicy"))...)
	errs = append(errs, metav1validation.ValidateLabels(spec.NodeSelector, p.Child("nodeSelector"))...)
	errs = append(errs, validatePodSecurityContext(spec.SecurityContext, p.Child("securityContext"))...)
	if spec.ShareProcessNamespace != nil && spec.HostPID && *spec.ShareProcessNamespace {
		errs = append(errs, field.Invalid(p.Child("shareProcessNamespace"), *spec.ShareProcessNamespace, "ShareProcessNamespace and HostPID cannot both be enabled"))
	}
	errs = append(errs, validateAffinity(spec.Affinity, p.Child("affinity"))...)
	errs = append(errs, validatePodDNSConfig(spec.DNSConfig, spec.DNSPolicy, p.Child("dnsConfig"))...)
	for i, g := range spec.ReadinessGates {
		errs = append(errs, qualifiedName(string(g.ConditionType), p.Child("readinessGates").Index(i).Child("conditionType"))...)
	}
	errs = append(errs, validateSchedulingGates(spec.SchedulingGates, p.Child("schedulingGates"))...)
	errs = append(errs, validateTopologySpreadConstraints(spec.TopologySpreadConstraints, p.Child("topologySpreadConstraints"))...)
	errs = append(errs, validateHostUsers(spec, p)...)
	errs = append(errs, validatePodHostnameOverride(spec, p)...)
	if spec.ServiceAccountName != "" {
		errs = append(errs, nameErrs(apimachineryvalidation.ValidateServiceAccountName, spec.ServiceAccountName, p.Child("serviceAccountName"))...)
	}
	// Defaulting keeps this alias equal to serviceAccountName.
	if spec.DeprecatedServiceAccount != spec.ServiceAccountName {
		errs = append(errs, field.Invalid(p.Child("deprecatedServiceAccount"), spec.DeprecatedServiceAccount, fmt.Sprintf("must be the same as serviceAccountName: %q", spec.ServiceAccountName)))
	}
	if spec.NodeName != "" {
		errs = append(errs, nameErrs(apimachineryvalidation.NameIsDNSSubdomain, spec.NodeName, p.Child("nodeName"))...)
	}
	if spec.ActiveDeadlineSeconds != nil {
		if v := *spec.ActiveDeadlineSeconds; v < 1 || v > math.MaxInt32 {
			errs = append(errs, field.Invalid(p.Child("activeDeadlineSeconds"), v, validation.InclusiveRangeError(1, math.MaxInt32)))
		}
	}
	if spec.Hostname != "" {
		errs = append(errs, dns1123Label(spec.Hostname, p.Child("hostname"))...)
	}
	if spec.Subdomain != "" {
		errs = append(errs, dns1123Label(spec.Subdomain, p.Child("subdomain"))...)
	}
	if len(spec.Tolerations) > 0 {
		errs = append(errs, validateTolerations(spec.Tolerations, p.Child("tolerations"))...)
	}
	for i, ha := range spec.HostAliases {
		hp := p.Child("hostAliases").Index(i)
		errs = append(errs, legacyIP(hp.Child("ip"), ha.IP, nil)...)
		for j, h := range ha.Hostnames {
			errs = append(errs, dns1123Subdomain(h, hp.Child("hostnames").Index(j))...)
		}
	}
	if spec.PriorityClassName != "" {
		errs = append(errs, nameErrs(apimachineryvalidation.NameIsDNSSubdomain, spec.PriorityClassName, p.Child("priorityClassName"))...)
	}
	if spec.RuntimeClassName != nil {
		errs = append(errs, nameErrs(apimachineryvalidation.NameIsDNSSubdomain, *spec.RuntimeClassName, p.Child("runtimeClassName"))...)
	}
	if spec.PreemptionPolicy != nil {
		errs = append(errs, validatePreemptionPolicy(spec.PreemptionPolicy, p.Child("preemptionPolicy"))...)
	}
	if spec.Overhead != nil {
		errs = append(errs, validateResourceRequirements(&corev1.ResourceRequirements{Limits: spec.Overhead}, containerResourceName, nil, p.Child("overhead"))...)
	}
	if spec.OS != nil {
		if spec.OS.Name == "" {
			errs = append(errs, field.Required(p.Child("os", "name"), ""))
		} else if spec.OS.Name != corev1.Linux && spec.OS.Name != corev1.Windows {
			errs = append(errs, field.NotSupported(p.Child("os"), spec.OS.Name, []corev1.OSName{corev1.Linux, corev1.Windows}))
		}
	}
	errs = append(errs, validateFileKeyRefVolumes(spec, p)...)
	return errs
}

func validateRestartPolicy(rp corev1.RestartPolicy, p *field.Path) field.ErrorList {
	switch rp {
	case corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever:
		return nil
	case "":
		return field.ErrorList{field.Required(p, "")}
	default:
		return field.ErrorList{field.NotSupported(p, rp, []corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever})}
	}
}

func validateDNSPolicy(dp corev1.DNSPolicy, p *field.Path) field.ErrorList {
	switch dp {
	case corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone:
		return nil
	case "":
		return field.ErrorList{field.Required(p, "")}
	default:
		return field.ErrorList{field.NotSupported(p, dp, []corev1.DNSPolicy{corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone})}
	}
}

func validatePreemptionPolicy(pp *corev1.PreemptionPolicy, p *field.Path) field.ErrorList {
	switch *pp {
	case corev1.PreemptLowerPriority, corev1.PreemptNever:
		return nil
	case "":
		return field.ErrorList{field.Required(p, "")}
	default:
		return field.ErrorList{field.NotSupported(p, pp, []corev1.PreemptionPolicy{corev1.PreemptLowerPriority, corev1.PreemptNever})}
	}
}

// --- volumes ---

func validateVolumes(vols []corev1.Volume, podMeta *metav1.ObjectMeta, p *field.Path) (map[string]corev1.VolumeSource, field.ErrorList) {
	var errs field.ErrorList
	names := sets.New[string]()
	createdPVCs := sets.New[string]()
	if podMeta != nil && podMeta.Name != "" {
		for _, v := range vols {
			if v.Ephemeral != nil {
				createdPVCs.Insert(podMeta.Name + "-" + v.Name)
			}
		}
	}
	byName := make(map[string]corev1.VolumeSource)
	for i, v := range vols {
		ip := p.Index(i)
		namePath := ip.Child("name")
		el := validateVolumeSource(&v.VolumeSource, ip, v.Name, podMeta)
		if v.Name == "" {
			el = append(el, field.Required(namePath, ""))
		} else {
			el = append(el, dns1123Label(v.Name, namePath)...)
		}
		if names.Has(v.Name) {
			el = append(el, field.Duplicate(namePath, v.Name))
		}
		if len(el) == 0 {
			names.Insert(v.Name)
			byName[v.Name] = v.VolumeSource
		} else {
			errs = append(errs, el...)
		}
		if v.PersistentVolumeClaim != nil && createdPVCs.Has(v.PersistentVolumeClaim.ClaimName) {
			errs = append(errs, field.Invalid(ip.Child("persistentVolumeClaim", "claimName"), v.PersistentVolumeClaim.ClaimName, "must not reference a PVC that gets created for an ephemeral volume"))
		}
	}
	return byName, errs
}

// volumeSourceKind is one member of the VolumeSource union, in kube's order.
type volumeSourceKind struct {
	name     string
	set      bool
	validate func() field.ErrorList
}

func validateVolumeSource(s *corev1.VolumeSource, p *field.Path, volName string, podMeta *metav1.ObjectMeta) field.ErrorList {
	var errs field.ErrorList
	count := 0
	if s.EmptyDir != nil {
		count++
		if s.EmptyDir.SizeLimit != nil && s.EmptyDir.SizeLimit.Sign() < 0 {
			errs = append(errs, field.Forbidden(p.Child("emptyDir", "sizeLimit"), "SizeLimit field must be a valid resource quantity"))
		}
		errs = append(errs, validateFileMode(s.EmptyDir.Mode, 01777, emptyDirModeErrorMsg, p.Child("emptyDir", "mode"))...)
	}
	kinds := []volumeSourceKind{
		{"hostPath", s.HostPath != nil, func() field.ErrorList { return validateHostPath(s.HostPath, p.Child("hostPath")) }},
		{"gitRepo", s.GitRepo != nil, func() field.ErrorList { return validateGitRepo(s.GitRepo, p.Child("gitRepo")) }},
		{"gcePersistentDisk", s.GCEPersistentDisk != nil, nil},
		{"awsElasticBlockStore", s.AWSElasticBlockStore != nil, nil},
		{"secret", s.Secret != nil, func() field.ErrorList { return validateSecretVolume(s.Secret, p.Child("secret")) }},
		{"nfs", s.NFS != nil, func() field.ErrorList { return validateNFS(s.NFS, p.Child("nfs")) }},
		{"iscsi", s.ISCSI != nil, nil},
		{"glusterfs", s.Glusterfs != nil, nil},
		{"flocker", s.Flocker != nil, nil},
		{"persistentVolumeClaim", s.PersistentVolumeClaim != nil, func() field.ErrorList {
			if s.PersistentVolumeClaim.ClaimName == "" {
				return field.ErrorList{field.Required(p.Child("persistentVolumeClaim", "claimName"), "")}
			}
			return nil
		}},
		{"rbd", s.RBD != nil, nil},
		{"cinder", s.Cinder != nil, nil},
		{"cephFS", s.CephFS != nil, nil},
		{"quobyte", s.Quobyte != nil, nil},
		// kube misspells this path.
		{"downwarAPI", s.DownwardAPI != nil, func() field.ErrorList { return validateDownwardAPIVolume(s.DownwardAPI, p.Child("downwardAPI")) }},
		{"fc", s.FC != nil, nil},
		{"flexVolume", s.FlexVolume != nil, nil},
		{"configMap", s.ConfigMap != nil, func() field.ErrorList { return validateConfigMapVolume(s.ConfigMap, p.Child("configMap")) }},
		{"azureFile", s.AzureFile != nil, nil},
		{"vsphereVolume", s.VsphereVolume != nil, nil},
		{"photonPersistentDisk", s.PhotonPersistentDisk != nil, nil},
		{"portworxVolume", s.PortworxVolume != nil, nil},
		{"azureDisk", s.AzureDisk != nil, nil},
		{"storageos", s.StorageOS != nil, nil},
		{"projected", s.Projected != nil, func() field.ErrorList { return validateProjected(s.Projected, p.Child("projected")) }},
		{"scaleIO", s.ScaleIO != nil, nil},
		{"csi", s.CSI != nil, func() field.ErrorList { return validateCSIVolume(s.CSI, p.Child("csi")) }},
		{"ephemeral", s.Ephemeral != nil, func() field.ErrorList { return validateEphemeralVolume(s.Ephemeral, p, volName, podMeta) }},
		{"image", s.Image != nil, func() field.ErrorList {
			var e field.ErrorList
			if s.Image.Reference == "" {
				e = append(e, field.Required(p.Child("image", "reference"), ""))
			}
			return append(e, validatePullPolicy(s.Image.PullPolicy, p.Child("image", "pullPolicy"))...)
		}},
	}
	for _, k := range kinds {
		if !k.set {
			continue
		}
		if count > 0 {
			errs = append(errs, field.Forbidden(p.Child(k.name), "may not specify more than 1 volume type"))
			continue
		}
		count++
		if k.validate != nil {
			errs = append(errs, k.validate()...)
		}
	}
	if count == 0 {
		errs = append(errs, field.Required(p, "must specify a volume type"))
	}
	return errs
}

var supportedHostPathTypes = sets.New(corev1.HostPathUnset, corev1.HostPathDirectoryOrCreate, corev1.HostPathDirectory,
	corev1.HostPathFileOrCreate, corev1.HostPathFile, corev1.HostPathSocket, corev1.HostPathCharDev, corev1.HostPathBlockDev)

func validateHostPath(hp *corev1.HostPathVolumeSource, p *field.Path) field.ErrorList {
	if hp.Path == "" {
		return field.ErrorList{field.Required(p.Child("path"), "")}
	}
	errs := validatePathNoBacksteps(hp.Path, p.Child("path"))
	if hp.Type != nil && !supportedHostPathTypes.Has(*hp.Type) {
		errs = append(errs, field.NotSupported(p.Child("type"), hp.Type, sets.List(supportedHostPathTypes)))
	}
	return errs
}

func validateGitRepo(g *corev1.GitRepoVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if g.Repository == "" {
		errs = append(errs, field.Required(p.Child("repository"), ""))
	}
	return append(errs, validateLocalDescendingPath(g.Directory, p.Child("directory"))...)
}

func validateNFS(n *corev1.NFSVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if n.Server == "" {
		errs = append(errs, field.Required(p.Child("server"), ""))
	}
	if n.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	}
	if !path.IsAbs(n.Path) {
		errs = append(errs, field.Invalid(p.Child("path"), n.Path, "must be an absolute path"))
	}
	return errs
}

func validateFileMode(mode *int32, max int32, msg string, p *field.Path) field.ErrorList {
	if mode != nil && (*mode > max || *mode < 0) {
		return field.ErrorList{field.Invalid(p, *mode, msg)}
	}
	return nil
}

func validateUserID(user *int64, p *field.Path) field.ErrorList {
	if user == nil {
		return nil
	}
	var errs field.ErrorList
	for _, msg := range validation.IsValidUserID(*user) {
		errs = append(errs, field.Invalid(p, *user, msg))
	}
	return errs
}

func validateSecretVolume(s *corev1.SecretVolumeSource, p *field.Path) field.ErrorList {
	return validateKeyVolume(s.SecretName, p.Child("secretName"), s.DefaultMode, s.DefaultUser, s.Items, p)
}

func validateConfigMapVolume(s *corev1.ConfigMapVolumeSource, p *field.Path) field.ErrorList {
	return validateKeyVolume(s.Name, p.Child("name"), s.DefaultMode, s.DefaultUser, s.Items, p)
}

// validateKeyVolume checks what secret and configMap volumes share: a
// source name, the default mode and user, and the key-to-path items.
func validateKeyVolume(name string, namePath *field.Path, mode *int32, user *int64, items []corev1.KeyToPath, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(namePath, ""))
	}
	errs = append(errs, validateFileMode(mode, 0777, fileModeErrorMsg, p.Child("defaultMode"))...)
	errs = append(errs, validateUserID(user, p.Child("defaultUser"))...)
	for i := range items {
		errs = append(errs, validateKeyToPath(&items[i], p.Child("items").Index(i))...)
	}
	return errs
}

func validateKeyToPath(kp *corev1.KeyToPath, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if kp.Key == "" {
		errs = append(errs, field.Required(p.Child("key"), ""))
	}
	if kp.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	}
	errs = append(errs, validateLocalNonReservedPath(kp.Path, p.Child("path"))...)
	errs = append(errs, validateFileMode(kp.Mode, 0777, fileModeErrorMsg, p.Child("mode"))...)
	return append(errs, validateUserID(kp.User, p.Child("user"))...)
}

var volumeDownwardAPIFieldPaths = sets.New("metadata.name", "metadata.namespace", "metadata.labels", "metadata.annotations", "metadata.uid")

func validateDownwardAPIVolume(d *corev1.DownwardAPIVolumeSource, p *field.Path) field.ErrorList {
	errs := validateFileMode(d.DefaultMode, 0777, fileModeErrorMsg, p.Child("defaultMode"))
	errs = append(errs, validateUserID(d.DefaultUser, p.Child("defaultUser"))...)
	for i := range d.Items {
		errs = append(errs, validateDownwardAPIFile(&d.Items[i], p)...)
	}
	return errs
}

func validateDownwardAPIFile(f *corev1.DownwardAPIVolumeFile, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if f.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	}
	errs = append(errs, validateLocalNonReservedPath(f.Path, p.Child("path"))...)
	switch {
	case f.FieldRef != nil:
		errs = append(errs, validateObjectFieldSelector(f.FieldRef, volumeDownwardAPIFieldPaths, p.Child("fieldRef"))...)
		if f.ResourceFieldRef != nil {
			errs = append(errs, field.Invalid(p, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
		}
	case f.ResourceFieldRef != nil:
		errs = append(errs, validateResourceFieldSelector(f.ResourceFieldRef, p.Child("resourceFieldRef"), true)...)
	default:
		errs = append(errs, field.Required(p, "one of fieldRef and resourceFieldRef is required"))
	}
	errs = append(errs, validateFileMode(f.Mode, 0777, fileModeErrorMsg, p.Child("mode"))...)
	return append(errs, validateUserID(f.User, p.Child("user"))...)
}

func validateProjected(pr *corev1.ProjectedVolumeSource, p *field.Path) field.ErrorList {
	errs := validateFileMode(pr.DefaultMode, 0777, fileModeErrorMsg, p.Child("defaultMode"))
	errs = append(errs, validateUserID(pr.DefaultUser, p.Child("defaultUser"))...)
	paths := sets.New[string]()
	addPath := func(key, shown string) {
		if paths.Has(key) {
			errs = append(errs, field.Invalid(p, shown, "conflicting duplicate paths"))
			return
		}
		paths.Insert(key)
	}
	for i, src := range pr.Sources {
		n := 0
		sp := p.Child("sources").Index(i)
		if src.Secret != nil {
			n++
			if src.Secret.Name == "" {
				errs = append(errs, field.Required(sp.Child("secret", "name"), ""))
			}
			for j := range src.Secret.Items {
				kp := &src.Secret.Items[j]
				errs = append(errs, validateKeyToPath(kp, sp.Child("secret", "items").Index(j))...)
				if kp.Path != "" {
					addPath(kp.Path, src.Secret.Name)
				}
			}
		}
		if src.ConfigMap != nil {
			n++
			if src.ConfigMap.Name == "" {
				errs = append(errs, field.Required(sp.Child("configMap", "name"), ""))
			}
			for j := range src.ConfigMap.Items {
				kp := &src.ConfigMap.Items[j]
				errs = append(errs, validateKeyToPath(kp, sp.Child("configMap", "items").Index(j))...)
				if kp.Path != "" {
					addPath(kp.Path, src.ConfigMap.Name)
				}
			}
		}
		if src.DownwardAPI != nil {
			n++
			for j := range src.DownwardAPI.Items {
				f := &src.DownwardAPI.Items[j]
				errs = append(errs, validateDownwardAPIFile(f, sp.Child("downwardAPI"))...)
				if f.Path != "" {
					addPath(f.Path, f.Path)
				}
			}
		}
		if t := src.ServiceAccountToken; t != nil {
			n++
			tp := sp.Child("serviceAccountToken")
			if t.ExpirationSeconds == nil {
				errs = append(errs, field.Required(tp.Child("expirationSeconds"), ""))
			} else {
				if *t.ExpirationSeconds < 10*60 {
					errs = append(errs, field.Invalid(tp.Child("expirationSeconds"), *t.ExpirationSeconds, "may not specify a duration less than 10 minutes"))
				}
				if *t.ExpirationSeconds > 1<<32 {
					errs = append(errs, field.Invalid(tp.Child("expirationSeconds"), *t.ExpirationSeconds, "may not specify a duration larger than 2^32 seconds"))
				}
			}
			if t.Path == "" {
				errs = append(errs, field.Required(p.Child("path"), ""))
			} else {
				errs = append(errs, validateLocalNonReservedPath(t.Path, p.Child("path"))...)
			}
			errs = append(errs, validateUserID(t.User, tp.Child("user"))...)
		}
		if src.ClusterTrustBundle != nil {
			n++
		}
		if src.PodCertificate != nil {
			n++
		}
		if n > 1 {
			errs = append(errs, field.Forbidden(sp, "may not specify more than 1 volume type per source"))
		}
	}
	return errs
}

func validateCSIVolume(c *corev1.CSIVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	dp := p.Child("driver")
	if c.Driver == "" {
		errs = append(errs, field.Required(dp, ""))
	} else {
		if len(c.Driver) > 63 {
			errs = append(errs, field.TooLong(dp, "", 63))
		}
		for _, msg := range validation.IsDNS1123Subdomain(strings.ToLower(c.Driver)) {
			errs = append(errs, field.Invalid(dp, c.Driver, msg))
		}
	}
	if c.NodePublishSecretRef != nil {
		if c.NodePublishSecretRef.Name == "" {
			errs = append(errs, field.Required(p.Child("nodePublishSecretRef", "name"), ""))
		} else {
			// kube reports this one on csi.name.
			errs = append(errs, nameErrs(apimachineryvalidation.NameIsDNSSubdomain, c.NodePublishSecretRef.Name, p.Child("name"))...)
		}
	}
	return errs
}

func validateEphemeralVolume(e *corev1.EphemeralVolumeSource, p *field.Path, volName string, podMeta *metav1.ObjectMeta) field.ErrorList {
	var errs field.ErrorList
	ep := p.Child("ephemeral")
	if e.VolumeClaimTemplate == nil {
		errs = append(errs, field.Required(ep.Child("volumeClaimTemplate"), ""))
	} else {
		tp := ep.Child("volumeClaimTemplate")
		errs = append(errs, validateTemplateObjectMeta(&e.VolumeClaimTemplate.ObjectMeta, tp.Child("metadata"))...)
		errs = append(errs, validatePVCSpec(&e.VolumeClaimTemplate.Spec, tp.Child("spec"))...)
	}
	if podMeta != nil && podMeta.Name != "" && volName != "" {
		pvc := podMeta.Name + "-" + volName
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(pvc, false) {
			errs = append(errs, field.Invalid(p.Child("name"), volName, fmt.Sprintf("PVC name %q: %v", pvc, msg)))
		}
	}
	return errs
}

// validateTemplateObjectMeta allows only labels and annotations.
func validateTemplateObjectMeta(m *metav1.ObjectMeta, p *field.Path) field.ErrorList {
	errs := apimachineryvalidation.ValidateAnnotations(m.Annotations, p.Child("annotations"))
	errs = append(errs, metav1validation.ValidateLabels(m.Labels, p.Child("labels"))...)
	// Every other field set is reported under its lower-cased Go name.
	v := reflect.ValueOf(*m)
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		if f.Name == "Labels" || f.Name == "Annotations" || v.Field(i).IsZero() {
			continue
		}
		errs = append(errs, field.Forbidden(p.Child(strings.ToLower(f.Name[:1])+f.Name[1:]), "cannot be set"))
	}
	return errs
}

func validateLocalDescendingPath(target string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if path.IsAbs(target) {
		errs = append(errs, field.Invalid(p, target, "must be a relative path"))
	}
	return append(errs, validatePathNoBacksteps(target, p)...)
}

func validatePathNoBacksteps(target string, p *field.Path) field.ErrorList {
	for _, part := range strings.Split(filepath.ToSlash(target), "/") {
		if part == ".." {
			return field.ErrorList{field.Invalid(p, target, "must not contain '..'")}
		}
	}
	return nil
}

func validateLocalNonReservedPath(target string, p *field.Path) field.ErrorList {
	errs := validateLocalDescendingPath(target, p)
	if strings.HasPrefix(target, "..") && !strings.HasPrefix(target, "../") {
		errs = append(errs, field.Invalid(p, target, "must not start with '..'"))
	}
	return errs
}

func validatePodResourceClaims(podMeta *metav1.ObjectMeta, claims []corev1.PodResourceClaim, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, c := range claims {
		if podMeta != nil {
			if _, ok := podMeta.Annotations[mirrorPodAnnotation]; ok {
				errs = append(errs, field.Forbidden(field.NewPath(""), "static pods do not support resource claims"))
				continue
			}
		}
		cp := p.Index(i)
		switch {
		case c.Name == "":
			errs = append(errs, field.Required(cp.Child("name"), ""))
		case names.Has(c.Name):
			errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
		default:
			errs = append(errs, dns1123Label(c.Name, cp.Child("name"))...)
			names.Insert(c.Name)
		}
		if c.ResourceClaimName != nil && c.ResourceClaimTemplateName != nil {
			errs = append(errs, field.Invalid(cp, internal{c}, "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"))
		}
		if c.ResourceClaimName == nil && c.ResourceClaimTemplateName == nil {
			errs = append(errs, field.Invalid(cp, internal{c}, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"))
		}
		if c.ResourceClaimName != nil {
			errs = append(errs, nameErrs(apimachineryvalidation.NameIsDNSSubdomain, *c.ResourceClaimName, cp.Child("resourceClaimName"))...)
		}
		if c.ResourceClaimTemplateName != nil {
			errs = append(errs, nameErrs(apimachineryvalidation.NameIsDNSSubdomain, *c.ResourceClaimTemplateName, cp.Child("resourceClaimTemplateName"))...)
		}
	}
	return errs
}

// --- containers ---

var supportedPortProtocols = sets.New(corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP)

func validateContainers(ctrs []corev1.Container, os *corev1.PodOS, vols map[string]corev1.VolumeSource, claims sets.Set[string], grace *int64, p *field.Path, rp corev1.RestartPolicy, hostUsers bool) field.ErrorList {
	if len(ctrs) == 0 {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	names := sets.New[string]()
	for i := range ctrs {
		c := &ctrs[i]
		cp := p.Index(i)
		errs = append(errs, validateContainerCommon(c, vols, claims, cp, rp, hostUsers)...)
		if names.Has(c.Name) {
			errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
		} else {
			names.Insert(c.Name)
		}
		if c.Lifecycle != nil {
			errs = append(errs, validateLifecycle(c.Lifecycle, grace, cp.Child("lifecycle"), os)...)
		}
		errs = append(errs, validateLivenessProbe(c.LivenessProbe, grace, cp.Child("livenessProbe"))...)
		errs = append(errs, validateReadinessProbe(c.ReadinessProbe, grace, cp.Child("readinessProbe"))...)
		errs = append(errs, validateStartupProbe(c.StartupProbe, grace, cp.Child("startupProbe"))...)
		errs = append(errs, validateContainerRestartPolicy(c.RestartPolicy, c.RestartPolicyRules, cp)...)
	}
	return append(errs, accumulateHostPorts(ctrs, sets.New[string](), p)...)
}

func validateInitContainers(ctrs []corev1.Container, os *corev1.PodOS, regular []corev1.Container, vols map[string]corev1.VolumeSource, claims sets.Set[string], grace *int64, p *field.Path, rp corev1.RestartPolicy, hostUsers bool) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for _, c := range regular {
		names.Insert(c.Name)
	}
	for i := range ctrs {
		c := &ctrs[i]
		cp := p.Index(i)
		errs = append(errs, validateContainerCommon(c, vols, claims, cp, rp, hostUsers)...)
		restartAlways := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		if c.RestartPolicy == nil {
			if len(c.RestartPolicyRules) > 0 {
				errs = append(errs, field.Required(cp.Child("restartPolicy"), "must specify restartPolicy when restart rules are used"))
			}
		} else {
			errs = append(errs, validateContainerRestartPolicy(c.RestartPolicy, c.RestartPolicyRules, cp)...)
		}
		if names.Has(c.Name) {
			errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
		} else if c.Name != "" {
			names.Insert(c.Name)
		}
		// Init containers run one by one, so their host ports only clash
		// within one container.
		errs = append(errs, accumulateHostPorts(ctrs[i:i+1], sets.New[string](), p)...)
		if restartAlways {
			if c.Lifecycle != nil {
				errs = append(errs, validateLifecycle(c.Lifecycle, grace, cp.Child("lifecycle"), os)...)
			}
			errs = append(errs, validateLivenessProbe(c.LivenessProbe, grace, cp.Child("livenessProbe"))...)
			errs = append(errs, validateReadinessProbe(c.ReadinessProbe, grace, cp.Child("readinessProbe"))...)
			errs = append(errs, validateStartupProbe(c.StartupProbe, grace, cp.Child("startupProbe"))...)
		} else {
			const msg = "may not be set for init containers without restartPolicy=Always"
			if c.Lifecycle != nil {
				errs = append(errs, field.Forbidden(cp.Child("lifecycle"), msg))
			}
			if c.LivenessProbe != nil {
				errs = append(errs, field.Forbidden(cp.Child("livenessProbe"), msg))
			}
			if c.ReadinessProbe != nil {
				errs = append(errs, field.Forbidden(cp.Child("readinessProbe"), msg))
			}
			if c.StartupProbe != nil {
				errs = append(errs, field.Forbidden(cp.Child("startupProbe"), msg))
			}
			for j, rpol := range c.ResizePolicy {
				if rpol.RestartPolicy == corev1.RestartContainer {
					errs = append(errs, field.Invalid(cp.Child("resizePolicy").Index(j).Child("restartPolicy"), rpol.RestartPolicy, "must not be set to 'RestartContainer' for non-sidecar initContainers"))
				}
			}
		}
	}
	return errs
}

// validateEphemeralContainers checks names and the common container rules;
// ephemeral containers are only writable through a subresource kpipe does not
// serve, so they cannot be created through the paths validated here.
func validateEphemeralContainers(ecs []corev1.EphemeralContainer, ctrs, inits []corev1.Container, vols map[string]corev1.VolumeSource, claims sets.Set[string], p *field.Path, rp corev1.RestartPolicy, hostUsers bool) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for _, c := range ctrs {
		names.Insert(c.Name)
	}
	for _, c := range inits {
		names.Insert(c.Name)
	}
	for i := range ecs {
		ep := p.Index(i)
		c := corev1.Container(ecs[i].EphemeralContainerCommon)
		errs = append(errs, validateContainerCommon(&c, vols, claims, ep, rp, hostUsers)...)
		if names.Has(c.Name) {
			errs = append(errs, field.Duplicate(ep.Child("name"), c.Name))
		} else {
			names.Insert(c.Name)
		}
	}
	return errs
}

func validateContainerCommon(c *corev1.Container, vols map[string]corev1.VolumeSource, claims sets.Set[string], p *field.Path, rp corev1.RestartPolicy, hostUsers bool) field.ErrorList {
	var errs field.ErrorList
	if c.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		errs = append(errs, dns1123Label(c.Name, p.Child("name"))...)
	}
	if c.Image == "" {
		errs = append(errs, field.Required(p.Child("image"), ""))
	}
	switch c.TerminationMessagePolicy {
	case corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError:
	case "":
		errs = append(errs, field.Required(p.Child("terminationMessagePolicy"), ""))
	default:
		errs = append(errs, field.NotSupported(p.Child("terminationMessagePolicy"), c.TerminationMessagePolicy,
			[]corev1.TerminationMessagePolicy{corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError}))
	}
	mounts := make(map[string]string, len(c.VolumeMounts))
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	devices := make(map[string]string, len(c.VolumeDevices))
	for _, d := range c.VolumeDevices {
		devices[d.Name] = d.DevicePath
	}
	errs = append(errs, validateContainerPorts(c.Ports, p.Child("ports"))...)
	errs = append(errs, validateEnv(c.Env, p.Child("env"))...)
	errs = append(errs, validateEnvFrom(c.EnvFrom, p.Child("envFrom"))...)
	errs = append(errs, validateVolumeMounts(c.VolumeMounts, devices, vols, c, p.Child("volumeMounts"))...)
	errs = append(errs, validateVolumeDevices(c.VolumeDevices, mounts, vols, p.Child("volumeDevices"))...)
	errs = append(errs, validatePullPolicy(c.ImagePullPolicy, p.Child("imagePullPolicy"))...)
	errs = append(errs, validateResourceRequirements(&c.Resources, containerResourceName, claims, p.Child("resources"))...)
	errs = append(errs, validateResizePolicy(c.ResizePolicy, p.Child("resizePolicy"), rp)...)
	return append(errs, validateSecurityContext(c.SecurityContext, p.Child("securityContext"), hostUsers)...)
}

func validateContainerPorts(ports []corev1.ContainerPort, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, port := range ports {
		ip := p.Index(i)
		if port.Name != "" {
			if msgs := validation.IsValidPortName(port.Name); len(msgs) != 0 {
				for _, msg := range msgs {
					errs = append(errs, field.Invalid(ip.Child("name"), port.Name, msg))
				}
			} else if names.Has(port.Name) {
				errs = append(errs, field.Duplicate(ip.Child("name"), port.Name))
			} else {
				names.Insert(port.Name)
			}
		}
		if port.ContainerPort == 0 {
			errs = append(errs, field.Required(ip.Child("containerPort"), ""))
		} else {
			for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
				errs = append(errs, field.Invalid(ip.Child("containerPort"), port.ContainerPort, msg))
			}
		}
		if port.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(port.HostPort)) {
				errs = append(errs, field.Invalid(ip.Child("hostPort"), port.HostPort, msg))
			}
		}
		if port.Protocol == "" {
			errs = append(errs, field.Required(ip.Child("protocol"), ""))
		} else if !supportedPortProtocols.Has(port.Protocol) {
			errs = append(errs, field.NotSupported(ip.Child("protocol"), port.Protocol, sets.List(supportedPortProtocols)))
		}
	}
	return errs
}

// accumulateHostPorts rejects two containers claiming one host port and protocol.
func accumulateHostPorts(ctrs []corev1.Container, seen sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for ci, c := range ctrs {
		for pi, port := range c.Ports {
			if port.HostPort == 0 {
				continue
			}
			key := fmt.Sprintf("%s/%s/%d", port.Protocol, port.HostIP, port.HostPort)
			if seen.Has(key) {
				errs = append(errs, field.Duplicate(p.Index(ci).Child("ports").Index(pi).Child("hostPort"), key))
			} else {
				seen.Insert(key)
			}
		}
	}
	return errs
}

var envDownwardAPIFieldPaths = sets.New("metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
	"spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs")

func validateEnv(vars []corev1.EnvVar, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ev := range vars {
		ip := p.Index(i)
		if ev.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		} else {
			for _, msg := range validation.IsRelaxedEnvVarName(ev.Name) {
				errs = append(errs, field.Invalid(ip.Child("name"), ev.Name, msg))
			}
		}
		errs = append(errs, validateEnvVarValueFrom(ev, ip.Child("valueFrom"))...)
	}
	return errs
}

func validateEnvVarValueFrom(ev corev1.EnvVar, p *field.Path) field.ErrorList {
	if ev.ValueFrom == nil {
		return nil
	}
	var errs field.ErrorList
	n := 0
	vf := ev.ValueFrom
	if vf.FieldRef != nil {
		n++
		errs = append(errs, validateObjectFieldSelector(vf.FieldRef, envDownwardAPIFieldPaths, p.Child("fieldRef"))...)
	}
	if vf.ResourceFieldRef != nil {
		n++
		errs = append(errs, validateResourceFieldSelector(vf.ResourceFieldRef, p.Child("resourceFieldRef"), false)...)
	}
	if vf.ConfigMapKeyRef != nil {
		n++
		errs = append(errs, validateKeySelector(vf.ConfigMapKeyRef.Name, vf.ConfigMapKeyRef.Key, p.Child("configMapKeyRef"))...)
	}
	if vf.SecretKeyRef != nil {
		n++
		errs = append(errs, validateKeySelector(vf.SecretKeyRef.Name, vf.SecretKeyRef.Key, p.Child("secretKeyRef"))...)
	}
	if vf.FileKeyRef != nil {
		n++
		errs = append(errs, validateFileKeySelector(vf.FileKeyRef, p.Child("fileKeyRef"))...)
	}
	switch {
	case n == 0:
		errs = append(errs, field.Invalid(p, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`"))
	case ev.Value != "":
		errs = append(errs, field.Invalid(p, "", "may not be specified when `value` is not empty"))
	case n > 1:
		errs = append(errs, field.Invalid(p, "", "may not have more than one field specified at a time"))
	}
	return errs
}

func validateObjectFieldSelector(fs *corev1.ObjectFieldSelector, allowed sets.Set[string], p *field.Path) field.ErrorList {
	if fs.APIVersion == "" {
		return field.ErrorList{field.Required(p.Child("apiVersion"), "")}
	}
	if fs.FieldPath == "" {
		return field.ErrorList{field.Required(p.Child("fieldPath"), "")}
	}
	internalPath, err := convertDownwardAPIFieldLabel(fs.APIVersion, fs.FieldPath)
	if err != nil {
		return field.ErrorList{field.Invalid(p.Child("fieldPath"), fs.FieldPath, fmt.Sprintf("error converting fieldPath: %v", err))}
	}
	if pth, sub, ok := splitSubscriptedPath(internalPath); ok {
		switch pth {
		case "metadata.annotations":
			return qualifiedName(strings.ToLower(sub), p)
		case "metadata.labels":
			return qualifiedName(sub, p)
		default:
			return field.ErrorList{field.Invalid(p, pth, "does not support subscript")}
		}
	}
	if !allowed.Has(internalPath) {
		return field.ErrorList{field.NotSupported(p.Child("fieldPath"), internalPath, sets.List(allowed))}
	}
	return nil
}

func splitSubscriptedPath(fp string) (string, string, bool) {
	if !strings.HasSuffix(fp, "']") {
		return fp, "", false
	}
	parts := strings.SplitN(strings.TrimSuffix(fp, "']"), "['", 2)
	if len(parts) < 2 || parts[0] == "" {
		return fp, "", false
	}
	return parts[0], parts[1], true
}

func convertDownwardAPIFieldLabel(version, label string) (string, error) {
	if version != "v1" {
		return "", fmt.Errorf("unsupported pod version: %s", version)
	}
	if pth, _, ok := splitSubscriptedPath(label); ok {
		if pth == "metadata.annotations" || pth == "metadata.labels" {
			return label, nil
		}
		return "", fmt.Errorf("field label does not support subscript: %s", label)
	}
	switch label {
	case "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid",
		"spec.nodeName", "spec.restartPolicy", "spec.serviceAccountName", "spec.schedulerName",
		"status.phase", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs":
		return label, nil
	case "spec.host":
		return "spec.nodeName", nil
	}
	return "", fmt.Errorf("field label not supported: %s", label)
}

var containerResourceFieldPaths = sets.New("limits.cpu", "limits.memory", "limits.ephemeral-storage",
	"requests.cpu", "requests.memory", "requests.ephemeral-storage")

var (
	cpuDivisors    = sets.New("1m", "1")
	memoryDivisors = sets.New("1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei")
)

func validateResourceFieldSelector(fs *corev1.ResourceFieldSelector, p *field.Path, volume bool) field.ErrorList {
	var errs field.ErrorList
	switch {
	case volume && fs.ContainerName == "":
		errs = append(errs, field.Required(p.Child("containerName"), ""))
	case fs.Resource == "":
		errs = append(errs, field.Required(p.Child("resource"), ""))
	case !containerResourceFieldPaths.Has(fs.Resource) &&
		!strings.HasPrefix(fs.Resource, "limits.hugepages-") && !strings.HasPrefix(fs.Resource, "requests.hugepages-"):
		errs = append(errs, field.NotSupported(p.Child("resource"), fs.Resource, sets.List(containerResourceFieldPaths)))
	}
	if fs.Divisor.IsZero() {
		return errs
	}
	d := fs.Divisor.String()
	switch fs.Resource {
	case "limits.cpu", "requests.cpu":
		if !cpuDivisors.Has(d) {
			errs = append(errs, field.Invalid(p.Child("divisor"), fs.Resource, "only divisor's values 1m and 1 are supported with the cpu resource"))
		}
	case "limits.memory", "requests.memory":
		if !memoryDivisors.Has(d) {
			errs = append(errs, field.Invalid(p.Child("divisor"), fs.Resource, "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the memory resource"))
		}
	case "limits.ephemeral-storage", "requests.ephemeral-storage":
		if !memoryDivisors.Has(d) {
			errs = append(errs, field.Invalid(p.Child("divisor"), fs.Resource, "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the local ephemeral storage resource"))
		}
	}
	if (strings.HasPrefix(fs.Resource, "requests.hugepages-") || strings.HasPrefix(fs.Resource, "limits.hugepages-")) && !memoryDivisors.Has(d) {
		errs = append(errs, field.Invalid(p.Child("divisor"), fs.Resource, "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the hugepages resource"))
	}
	return errs
}

func validateKeySelector(name, key string, p *field.Path) field.ErrorList {
	errs := nameErrs(apimachineryvalidation.NameIsDNSSubdomain, name, p.Child("name"))
	if key == "" {
		return append(errs, field.Required(p.Child("key"), ""))
	}
	for _, msg := range validation.IsConfigMapKey(key) {
		errs = append(errs, field.Invalid(p.Child("key"), key, msg))
	}
	return errs
}

func validateFileKeySelector(s *corev1.FileKeySelector, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Key == "" {
		errs = append(errs, field.Required(p.Child("key"), ""))
	} else {
		for _, msg := range validation.IsRelaxedEnvVarName(s.Key) {
			errs = append(errs, field.Invalid(p.Child("key"), s.Key, msg))
		}
	}
	if s.VolumeName == "" {
		errs = append(errs, field.Required(p.Child("volumeName"), ""))
	} else {
		errs = append(errs, dns1123Label(s.VolumeName, p.Child("volumeName"))...)
	}
	if s.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	} else {
		errs = append(errs, validatePathNoBacksteps(s.Path, p.Child("path"))...)
	}
	return errs
}

func validateEnvFrom(vars []corev1.EnvFromSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ev := range vars {
		ip := p.Index(i)
		if ev.Prefix != "" {
			for _, msg := range validation.IsRelaxedEnvVarName(ev.Prefix) {
				errs = append(errs, field.Invalid(ip.Child("prefix"), ev.Prefix, msg))
			}
		}
		n := 0
		if ev.ConfigMapRef != nil {
			n++
			errs = append(errs, validateEnvSourceName(ev.ConfigMapRef.Name, ip.Child("configMapRef"))...)
		}
		if ev.SecretRef != nil {
			n++
			errs = append(errs, validateEnvSourceName(ev.SecretRef.Name, ip.Child("secretRef"))...)
		}
		switch {
		case n == 0:
			errs = append(errs, field.Invalid(p, "", "must specify one of: `configMapRef` or `secretRef`"))
		case n > 1:
			errs = append(errs, field.Invalid(p, "", "may not have more than one field specified at a time"))
		}
	}
	return errs
}

func validateEnvSourceName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p.Child("name"), "")}
	}
	var errs field.ErrorList
	for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(name, true) {
		errs = append(errs, field.Invalid(p.Child("name"), name, msg))
	}
	return errs
}

var supportedMountPropagations = sets.New(corev1.MountPropagationBidirectional, corev1.MountPropagationHostToContainer, corev1.MountPropagationNone)

func validateVolumeMounts(mounts []corev1.VolumeMount, devices map[string]string, vols map[string]corev1.VolumeSource, c *corev1.Container, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	points := sets.New[string]()
	for i, m := range mounts {
		ip := p.Index(i)
		if m.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		}
		if _, ok := vols[m.Name]; !ok {
			errs = append(errs, field.NotFound(ip.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			errs = append(errs, field.Required(ip.Child("mountPath"), ""))
		}
		if points.Has(m.MountPath) {
			errs = append(errs, field.Invalid(ip.Child("mountPath"), m.MountPath, "must be unique"))
		}
		points.Insert(m.MountPath)
		if _, ok := devices[m.Name]; ok {
			errs = append(errs, field.Invalid(ip.Child("name"), m.Name, "must not already exist in volumeDevices"))
		}
		for _, dp := range devices {
			if dp == m.MountPath {
				errs = append(errs, field.Invalid(ip.Child("mountPath"), m.MountPath, "must not already exist as a path in volumeDevices"))
				break
			}
		}
		// kube reports the sub-path errors on the list, not the item.
		if m.SubPath != "" {
			errs = append(errs, validateLocalDescendingPath(m.SubPath, p.Child("subPath"))...)
		}
		if m.SubPathExpr != "" {
			if m.SubPath != "" {
				errs = append(errs, field.Invalid(ip.Child("subPathExpr"), m.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
			}
			errs = append(errs, validateLocalDescendingPath(m.SubPathExpr, p.Child("subPathExpr"))...)
		}
		if m.MountPropagation != nil {
			mp := p.Child("mountPropagation")
			if !supportedMountPropagations.Has(*m.MountPropagation) {
				errs = append(errs, field.NotSupported(mp, *m.MountPropagation, sets.List(supportedMountPropagations)))
			}
			privileged := c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged
			if *m.MountPropagation == corev1.MountPropagationBidirectional && !privileged {
				errs = append(errs, field.Forbidden(mp, "Bidirectional mount propagation is available only to privileged containers"))
			}
		}
		errs = append(errs, validateRecursiveReadOnly(m, p.Child("recursiveReadOnly"))...)
	}
	return errs
}

func validateRecursiveReadOnly(m corev1.VolumeMount, p *field.Path) field.ErrorList {
	if m.RecursiveReadOnly == nil {
		return nil
	}
	var errs field.ErrorList
	switch *m.RecursiveReadOnly {
	case corev1.RecursiveReadOnlyDisabled:
	case corev1.RecursiveReadOnlyEnabled, corev1.RecursiveReadOnlyIfPossible:
		if !m.ReadOnly {
			errs = append(errs, field.Forbidden(p, "may only be specified when readOnly is true"))
		}
		if m.MountPropagation != nil && *m.MountPropagation != corev1.MountPropagationNone {
			errs = append(errs, field.Forbidden(p, "may only be specified when mountPropagation is None or not specified"))
		}
	default:
		errs = append(errs, field.NotSupported(p, *m.RecursiveReadOnly, []corev1.RecursiveReadOnlyMode{corev1.RecursiveReadOnlyDisabled, corev1.RecursiveReadOnlyEnabled, corev1.RecursiveReadOnlyIfPossible}))
	}
	return errs
}

func validateVolumeDevices(devices []corev1.VolumeDevice, mounts map[string]string, vols map[string]corev1.VolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	paths := sets.New[string]()
	names := sets.New[string]()
	for i, d := range devices {
		ip := p.Index(i)
		src, found := vols[d.Name]
		isPVC := found && (src.PersistentVolumeClaim != nil || src.Ephemeral != nil)
		if d.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		}
		if names.Has(d.Name) {
			errs = append(errs, field.Invalid(ip.Child("name"), d.Name, "must be unique"))
		}
		if found && !isPVC {
			errs = append(errs, field.Invalid(ip.Child("name"), d.Name, "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"))
		}
		if !found {
			errs = append(errs, field.NotFound(ip.Child("name"), d.Name))
		}
		if d.DevicePath == "" {
			errs = append(errs, field.Required(ip.Child("devicePath"), ""))
		}
		if paths.Has(d.DevicePath) {
			errs = append(errs, field.Invalid(ip.Child("devicePath"), d.DevicePath, "must be unique"))
		}
		if d.DevicePath != "" && len(validatePathNoBacksteps(d.DevicePath, ip)) > 0 {
			errs = append(errs, field.Invalid(ip.Child("devicePath"), d.DevicePath, "can not contain backsteps ('..')"))
		} else {
			paths.Insert(d.DevicePath)
		}
		if _, ok := mounts[d.Name]; ok {
			errs = append(errs, field.Invalid(ip.Child("name"), d.Name, "must not already exist in volumeMounts"))
		}
		for _, mp := range mounts {
			if mp == d.DevicePath {
				errs = append(errs, field.Invalid(ip.Child("devicePath"), d.DevicePath, "must not already exist as a path in volumeMounts"))
				break
			}
		}
		if d.Name != "" {
			names.Insert(d.Name)
		}
	}
	return errs
}

var supportedPullPolicies = sets.New(corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever)

func validatePullPolicy(pp corev1.PullPolicy, p *field.Path) field.ErrorList {
	switch pp {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
		return nil
	case "":
		return field.ErrorList{field.Required(p, "")}
	default:
		return field.ErrorList{field.NotSupported(p, pp, sets.List(supportedPullPolicies))}
	}
}

func validateResizePolicy(policies []corev1.ContainerResizePolicy, p *field.Path, rp corev1.RestartPolicy) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[corev1.ResourceName]()
	for i, pol := range policies {
		if seen.Has(pol.ResourceName) {
			errs = append(errs, field.Duplicate(p.Index(i), pol.ResourceName))
		}
		seen.Insert(pol.ResourceName)
		switch pol.ResourceName {
		case corev1.ResourceCPU, corev1.ResourceMemory:
		case "":
			errs = append(errs, field.Required(p, ""))
		default:
			errs = append(errs, field.NotSupported(p, pol.ResourceName, []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}))
		}
		switch pol.RestartPolicy {
		case corev1.NotRequired, corev1.RestartContainer:
		case "":
			errs = append(errs, field.Required(p, ""))
		default:
			errs = append(errs, field.NotSupported(p, pol.RestartPolicy, []corev1.ResourceResizeRestartPolicy{corev1.NotRequired, corev1.RestartContainer}))
		}
		if rp == corev1.RestartPolicyNever && pol.RestartPolicy != corev1.NotRequired {
			errs = append(errs, field.Invalid(p, pol.RestartPolicy, "must be 'NotRequired' when pod `restartPolicy` is 'Never'"))
		}
	}
	return errs
}

var (
	supportedContainerRestartPolicies = sets.New(corev1.ContainerRestartPolicyAlways, corev1.ContainerRestartPolicyNever, corev1.ContainerRestartPolicyOnFailure)
	supportedRestartRuleOperators     = sets.New(corev1.ContainerRestartRuleOnExitCodesOpIn, corev1.ContainerRestartRuleOnExitCodesOpNotIn)
	supportedRestartRuleActions       = sets.New(corev1.ContainerRestartRuleActionRestart, corev1.ContainerRestartRuleActionRestartAllContainers)
)

// validateContainerRestartPolicy follows the ContainerRestartRules and
// RestartAllContainersOnContainerExits gates, both on in v1.37.
func validateContainerRestartPolicy(policy *corev1.ContainerRestartPolicy, rules []corev1.ContainerRestartRule, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	rpPath := p.Child("restartPolicy")
	if policy == nil {
		if len(rules) == 0 {
			return nil
		}
		errs = append(errs, field.Required(rpPath, "must specify restartPolicy when restart rules are used"))
	} else if !supportedContainerRestartPolicies.Has(*policy) {
		errs = append(errs, field.NotSupported(rpPath, *policy, sets.List(supportedContainerRestartPolicies)))
	}
	if len(rules) > 20 {
		errs = append(errs, field.TooMany(p.Child("restartPolicyRules"), len(rules), 20))
	}
	for i, r := range rules {
		rp := p.Child("restartPolicyRules").Index(i)
		if !supportedRestartRuleActions.Has(r.Action) {
			errs = append(errs, field.NotSupported(rp.Child("action"), r.Action, sets.List(supportedRestartRuleActions)))
		}
		if r.ExitCodes == nil {
			errs = append(errs, field.Required(rp.Child("exitCodes"), "must be specified"))
			continue
		}
		if !supportedRestartRuleOperators.Has(r.ExitCodes.Operator) {
			errs = append(errs, field.NotSupported(rp.Child("exitCodes", "operator"), r.ExitCodes.Operator, sets.List(supportedRestartRuleOperators)))
		}
		if len(r.ExitCodes.Values) > 255 {
			errs = append(errs, field.TooMany(rp.Child("exitCodes", "values"), len(r.ExitCodes.Values), 255))
		}
	}
	return errs
}

// --- probes and handlers ---

func validateLivenessProbe(pr *corev1.Probe, grace *int64, p *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	errs := validateProbe(pr, grace, p)
	if pr.SuccessThreshold != 1 {
		errs = append(errs, field.Invalid(p.Child("successThreshold"), pr.SuccessThreshold, "must be 1"))
	}
	return errs
}

func validateReadinessProbe(pr *corev1.Probe, grace *int64, p *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	errs := validateProbe(pr, grace, p)
	if pr.TerminationGracePeriodSeconds != nil {
		errs = append(errs, field.Invalid(p.Child("terminationGracePeriodSeconds"), pr.TerminationGracePeriodSeconds, "must not be set for readinessProbes"))
	}
	return errs
}

func validateStartupProbe(pr *corev1.Probe, grace *int64, p *field.Path) field.ErrorList {
	return validateLivenessProbe(pr, grace, p)
}

func validateProbe(pr *corev1.Probe, grace *int64, p *field.Path) field.ErrorList {
	h := pr.ProbeHandler
	errs := validateHandler(h.Exec, h.HTTPGet, h.TCPSocket, h.GRPC, nil, grace, p)
	errs = append(errs, nonNegative(int64(pr.InitialDelaySeconds), p.Child("initialDelaySeconds"))...)
	errs = append(errs, nonNegative(int64(pr.TimeoutSeconds), p.Child("timeoutSeconds"))...)
	errs = append(errs, nonNegative(int64(pr.PeriodSeconds), p.Child("periodSeconds"))...)
	errs = append(errs, nonNegative(int64(pr.SuccessThreshold), p.Child("successThreshold"))...)
	errs = append(errs, nonNegative(int64(pr.FailureThreshold), p.Child("failureThreshold"))...)
	if pr.TerminationGracePeriodSeconds != nil && *pr.TerminationGracePeriodSeconds <= 0 {
		errs = append(errs, field.Invalid(p.Child("terminationGracePeriodSeconds"), *pr.TerminationGracePeriodSeconds, "must be greater than 0"))
	}
	return errs
}

var (
	supportedHTTPSchemes  = sets.New(corev1.URISchemeHTTP, corev1.URISchemeHTTPS)
	supportedGRPCModes    = sets.New(corev1.GRPCProbeModePlaintext, corev1.GRPCProbeModeTLS)
	supportedHTTPProtocol = sets.New(corev1.HTTPProtocolHTTP1, corev1.HTTPProtocolHTTP2)
)

// validateHandler checks the one-of of probe and lifecycle handlers in
// kube's order: exec, httpGet, tcpSocket, grpc, sleep.
func validateHandler(exec *corev1.ExecAction, httpGet *corev1.HTTPGetAction, tcp *corev1.TCPSocketAction, grpc *corev1.GRPCAction, sleep *corev1.SleepAction, grace *int64, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	one := func(name string, set bool, check func() field.ErrorList) {
		if !set {
			return
		}
		if n > 0 {
			errs = append(errs, field.Forbidden(p.Child(name), "may not specify more than 1 handler type"))
			return
		}
		n++
		errs = append(errs, check()...)
	}
	one("exec", exec != nil, func() field.ErrorList {
		if len(exec.Command) == 0 {
			return field.ErrorList{field.Required(p.Child("exec", "command"), "")}
		}
		return nil
	})
	one("httpGet", httpGet != nil, func() field.ErrorList { return validateHTTPGet(httpGet, p.Child("httpGet")) })
	one("tcpSocket", tcp != nil, func() field.ErrorList { return validatePortNumOrName(tcp.Port, p.Child("tcpSocket", "port")) })
	one("grpc", grpc != nil, func() field.ErrorList {
		e := validatePortNumOrName(intstr.FromInt32(grpc.Port), p.Child("grpc", "port"))
		if grpc.Mode != nil && !supportedGRPCModes.Has(*grpc.Mode) {
			e = append(e, field.NotSupported(p.Child("grpc", "mode"), *grpc.Mode, sets.List(supportedGRPCModes)))
		}
		return e
	})
	one("sleep", sleep != nil, func() field.ErrorList {
		if grace != nil && (sleep.Seconds < 0 || sleep.Seconds > *grace) {
			return field.ErrorList{field.Invalid(p.Child("sleep"), sleep.Seconds, fmt.Sprintf("must be non-negative and less than terminationGracePeriodSeconds (%d)", *grace))}
		}
		return nil
	})
	if n == 0 {
		errs = append(errs, field.Required(p, "must specify a handler type"))
	}
	return errs
}

func validateHTTPGet(h *corev1.HTTPGetAction, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if h.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	}
	errs = append(errs, validatePortNumOrName(h.Port, p.Child("port"))...)
	if !supportedHTTPSchemes.Has(h.Scheme) {
		errs = append(errs, field.NotSupported(p.Child("scheme"), h.Scheme, sets.List(supportedHTTPSchemes)))
	}
	for _, hd := range h.HTTPHeaders {
		for _, msg := range validation.IsHTTPHeaderName(hd.Name) {
			errs = append(errs, field.Invalid(p.Child("httpHeaders"), hd.Name, msg))
		}
	}
	if h.Protocol != nil {
		switch {
		case !supportedHTTPProtocol.Has(*h.Protocol):
			errs = append(errs, field.NotSupported(p.Child("protocol"), *h.Protocol, sets.List(supportedHTTPProtocol)))
		case *h.Protocol == corev1.HTTPProtocolHTTP2 && h.Scheme != corev1.URISchemeHTTP:
			errs = append(errs, field.Invalid(p.Child("protocol"), *h.Protocol, "is only supported with HTTP (H2C)"))
		case *h.Protocol == corev1.HTTPProtocolHTTP2 && h.Host != "":
			errs = append(errs, field.Invalid(p.Child("host"), h.Host, "must be empty when `protocol` is \"HTTP2\""))
		}
	}
	return errs
}

func validatePortNumOrName(port intstr.IntOrString, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch port.Type {
	case intstr.Int:
		for _, msg := range validation.IsValidPortNum(port.IntValue()) {
			errs = append(errs, field.Invalid(p, port.IntValue(), msg))
		}
	case intstr.String:
		for _, msg := range validation.IsValidPortName(port.StrVal) {
			errs = append(errs, field.Invalid(p, port.StrVal, msg))
		}
	default:
		errs = append(errs, field.InternalError(p, fmt.Errorf("unknown type: %v", port.Type)))
	}
	return errs
}

func validateLifecycle(l *corev1.Lifecycle, grace *int64, p *field.Path, os *corev1.PodOS) field.ErrorList {
	var errs field.ErrorList
	if h := l.PostStart; h != nil {
		errs = append(errs, validateHandler(h.Exec, h.HTTPGet, h.TCPSocket, nil, h.Sleep, grace, p.Child("postStart"))...)
	}
	if h := l.PreStop; h != nil {
		errs = append(errs, validateHandler(h.Exec, h.HTTPGet, h.TCPSocket, nil, h.Sleep, grace, p.Child("preStop"))...)
	}
	if l.StopSignal != nil {
		sp := p.Child("stopSignal")
		switch {
		case os == nil:
			errs = append(errs, field.Forbidden(sp, "may not be set for containers with empty `spec.os.name`"))
		case os.Name == corev1.Windows && *l.StopSignal != corev1.SIGKILL && *l.StopSignal != corev1.SIGTERM:
			errs = append(errs, field.NotSupported(sp, l.StopSignal, []corev1.Signal{corev1.SIGKILL, corev1.SIGTERM}))
		}
	}
	return errs
}

// --- resources ---

var (
	standardContainerResources = sets.New(corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage)
	standardResources          = sets.New(corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
		corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
		corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
		corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
		corev1.ResourceSecrets, corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims, corev1.ResourceStorage,
		corev1.ResourceRequestsStorage, corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers)
	integerResources = sets.New(corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices,
		corev1.ResourceReplicationControllers, corev1.ResourceSecrets, corev1.ResourceConfigMaps,
		corev1.ResourcePersistentVolumeClaims, corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers)
)

func isHugePages(n corev1.ResourceName) bool { return strings.HasPrefix(string(n), hugePagesPrefix) }

func isQuotaHugePages(n corev1.ResourceName) bool {
	return isHugePages(n) || strings.HasPrefix(string(n), "requests.hugepages-")
}

// isNative is true for names in the kubernetes.io domain, prefixed or not.
func isNative(n corev1.ResourceName) bool {
	return !strings.Contains(string(n), "/") || strings.Contains(string(n), "kubernetes.io/")
}

func isExtended(n corev1.ResourceName) bool {
	if isNative(n) || strings.HasPrefix(string(n), "requests.") {
		return false
	}
	return len(validation.IsQualifiedName("requests."+string(n))) == 0
}

func isOvercommitAllowed(n corev1.ResourceName) bool { return isNative(n) && !isHugePages(n) }

func isIntegerResource(n corev1.ResourceName) bool { return integerResources.Has(n) || isExtended(n) }

func validateResourceName(n corev1.ResourceName, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(n)) {
		errs = append(errs, field.Invalid(p, n, msg))
	}
	if len(errs) != 0 {
		return errs
	}
	if !strings.Contains(string(n), "/") && !standardResources.Has(n) && !isQuotaHugePages(n) {
		return field.ErrorList{field.Invalid(p, n, "must be a standard resource type or fully qualified")}
	}
	return nil
}

func containerResourceName(n corev1.ResourceName, p *field.Path) field.ErrorList {
	errs := validateResourceName(n, p)
	if !strings.Contains(string(n), "/") {
		if !standardContainerResources.Has(n) && !isHugePages(n) {
			return append(errs, field.Invalid(p, n, "must be a standard resource for containers"))
		}
	} else if !isNative(n) && !isExtended(n) {
		return append(errs, field.Invalid(p, n, "doesn't follow extended resource name standard"))
	}
	return errs
}

var podLevelResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

func podResourceName(n corev1.ResourceName, p *field.Path) field.ErrorList {
	if errs := validateResourceName(n, p); len(errs) != 0 {
		return errs
	}
	if n != corev1.ResourceCPU && n != corev1.ResourceMemory && !isHugePages(n) {
		return field.ErrorList{field.NotSupported(p, n, podLevelResources)}
	}
	return nil
}

func validateResourceQuantityValue(n corev1.ResourceName, q resource.Quantity, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q.Sign() < 0 {
		errs = append(errs, field.Invalid(p, q.String(), apimachineryvalidation.IsNegativeErrorMsg))
	}
	if isIntegerResource(n) && q.MilliValue()%1000 != 0 {
		errs = append(errs, field.Invalid(p, q, isNotIntegerErrorMsg))
	}
	return errs
}

func hugePageValueErr(n corev1.ResourceName, q resource.Quantity) error {
	size, err := resource.ParseQuantity(strings.TrimPrefix(string(n), hugePagesPrefix))
	if err != nil || size.Sign() <= 0 || size.MilliValue()%1000 != 0 || q.Value()%size.Value() != 0 {
		return fmt.Errorf("%s is not positive integer multiple of %s", q.String(), n)
	}
	return nil
}

func validateResourceRequirements(r *corev1.ResourceRequirements, nameFn func(corev1.ResourceName, *field.Path) field.ErrorList, claims sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	limPath, reqPath := p.Child("limits"), p.Child("requests")
	limCPUMem, reqCPUMem, limHuge, reqHuge := false, false, false, false
	for _, n := range sortedKeys(r.Limits) {
		q := r.Limits[n]
		fp := limPath.Key(string(n))
		errs = append(errs, nameFn(n, fp)...)
		errs = append(errs, validateResourceQuantityValue(n, q, fp)...)
		if isHugePages(n) {
			limHuge = true
			if err := hugePageValueErr(n, q); err != nil {
				errs = append(errs, field.Invalid(fp, q.String(), err.Error()))
			}
		}
		if n == corev1.ResourceCPU || n == corev1.ResourceMemory {
			limCPUMem = true
		}
	}
	for _, n := range sortedKeys(r.Requests) {
		q := r.Requests[n]
		fp := reqPath.Key(string(n))
		errs = append(errs, nameFn(n, fp)...)
		errs = append(errs, validateResourceQuantityValue(n, q, fp)...)
		if lim, ok := r.Limits[n]; ok {
			if q.Cmp(lim) != 0 && !isOvercommitAllowed(n) {
				errs = append(errs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be equal to %s limit of %s", n, lim.String())))
			} else if q.Cmp(lim) > 0 {
				errs = append(errs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", n, lim.String())))
			}
		} else if !isOvercommitAllowed(n) {
			errs = append(errs, field.Required(limPath, "Limit must be set for non overcommitable resources"))
		}
		if isHugePages(n) {
			reqHuge = true
			if err := hugePageValueErr(n, q); err != nil {
				errs = append(errs, field.Invalid(fp, q.String(), err.Error()))
			}
		}
		if n == corev1.ResourceCPU || n == corev1.ResourceMemory {
			reqCPUMem = true
		}
	}
	if !limCPUMem && !reqCPUMem && (reqHuge || limHuge) {
		errs = append(errs, field.Forbidden(p, "HugePages require cpu or memory"))
	}
	return append(errs, validateResourceClaimNames(r.Claims, claims, p.Child("claims"))...)
}

func validateResourceClaimNames(claims []corev1.ResourceClaim, podClaims sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, c := range claims {
		ip := p.Index(i)
		if c.Name == "" {
			errs = append(errs, field.Required(ip, ""))
			continue
		}
		if names.Has(c.Name) {
			errs = append(errs, field.Duplicate(ip, c.Name))
		} else {
			key := c.Name
			if c.Request != "" {
				errs = append(errs, dns1123Label(c.Request, ip.Child("request"))...)
				key += "/" + c.Request
			}
			if names.Has(key) {
				errs = append(errs, field.Duplicate(ip, key))
			} else if c.Request == "" {
				for k := range names {
					if before, _, ok := strings.Cut(k, "/"); ok && before == c.Name {
						errs = append(errs, field.Duplicate(ip, c.Name))
					}
				}
			}
			names.Insert(key)
		}
		if !podClaims.Has(c.Name) {
			e := field.NotFound(ip, c.Name)
			e.Detail = "must be one of the names in pod.spec.resourceClaims"
			if len(podClaims) == 0 {
				e.Detail += " which is empty"
			} else {
				e.Detail += ": " + strings.Join(sets.List(podClaims), ", ")
			}
			errs = append(errs, e)
		}
	}
	return errs
}

// validatePodResources covers pod-level resources (PodLevelResources, on in
// v1.37), without kube's aggregate checks against the containers.
func validatePodResources(spec *corev1.PodSpec, claims sets.Set[string], p *field.Path) field.ErrorList {
	if spec.Resources == nil {
		return nil
	}
	rp := p.Child("resources")
	if spec.OS != nil && spec.OS.Name == corev1.Windows {
		return field.ErrorList{field.Forbidden(rp, "may not be set for a windows pod")}
	}
	var errs field.ErrorList
	if spec.Resources.Claims != nil {
		errs = append(errs, field.Forbidden(rp.Child("claims"), "claims may not be set for Resources at pod-level"))
	}
	return append(errs, validateResourceRequirements(spec.Resources, podResourceName, claims, rp)...)
}

// --- pod-level settings ---

func validatePodHostNetworkDeps(spec *corev1.PodSpec, p *field.Path, opts podOptions) field.ErrorList {
	if !spec.HostNetwork {
		return nil
	}
	var errs field.ErrorList
	cp := p.Child("containers")
	for i, c := range spec.Containers {
		for j, port := range c.Ports {
			// Templates may leave hostPort unset; pods get it defaulted.
			if (opts.resourceIsPod || port.HostPort != 0) && port.HostPort != port.ContainerPort {
				errs = append(errs, field.Invalid(cp.Index(i).Child("ports").Index(j).Child("hostPort"), port.HostPort, "must match `containerPort` when `hostNetwork` is true"))
			}
		}
	}
	return errs
}

func validatePodSecurityContext(sc *corev1.PodSecurityContext, p *field.Path) field.ErrorList {
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	if sc.FSGroup != nil {
		for _, msg := range validation.IsValidGroupID(*sc.FSGroup) {
			errs = append(errs, field.Invalid(p.Child("fsGroup"), *sc.FSGroup, msg))
		}
	}
	errs = append(errs, validateUserID(sc.RunAsUser, p.Child("runAsUser"))...)
	if sc.RunAsGroup != nil {
		for _, msg := range validation.IsValidGroupID(*sc.RunAsGroup) {
			errs = append(errs, field.Invalid(p.Child("runAsGroup"), *sc.RunAsGroup, msg))
		}
	}
	for i, g := range sc.SupplementalGroups {
		for _, msg := range validation.IsValidGroupID(g) {
			errs = append(errs, field.Invalid(p.Child("supplementalGroups").Index(i), g, msg))
		}
	}
	if sc.FSGroupChangePolicy != nil && *sc.FSGroupChangePolicy != corev1.FSGroupChangeOnRootMismatch && *sc.FSGroupChangePolicy != corev1.FSGroupChangeAlways {
		errs = append(errs, field.NotSupported(p.Child("fsGroupChangePolicy"), sc.FSGroupChangePolicy, []corev1.PodFSGroupChangePolicy{corev1.FSGroupChangeAlways, corev1.FSGroupChangeOnRootMismatch}))
	}
	errs = append(errs, validateSeccompProfile(sc.SeccompProfile, p.Child("seccompProfile"))...)
	errs = append(errs, validateAppArmorProfile(sc.AppArmorProfile, p.Child("appArmorProfile"))...)
	if sc.SupplementalGroupsPolicy != nil && *sc.SupplementalGroupsPolicy != corev1.SupplementalGroupsPolicyMerge && *sc.SupplementalGroupsPolicy != corev1.SupplementalGroupsPolicyStrict {
		errs = append(errs, field.NotSupported(p.Child("supplementalGroupsPolicy"), sc.SupplementalGroupsPolicy, []corev1.SupplementalGroupsPolicy{corev1.SupplementalGroupsPolicyMerge, corev1.SupplementalGroupsPolicyStrict}))
	}
	if sc.SELinuxChangePolicy != nil && *sc.SELinuxChangePolicy != corev1.SELinuxChangePolicyRecursive && *sc.SELinuxChangePolicy != corev1.SELinuxChangePolicyMountOption {
		errs = append(errs, field.NotSupported(p.Child("seLinuxChangePolicy"), sc.SELinuxChangePolicy, []corev1.PodSELinuxChangePolicy{corev1.SELinuxChangePolicyMountOption, corev1.SELinuxChangePolicyRecursive}))
	}
	return errs
}

func validateSeccompProfile(sp *corev1.SeccompProfile, p *field.Path) field.ErrorList {
	if sp == nil {
		return nil
	}
	var errs field.ErrorList
	switch sp.Type {
	case corev1.SeccompProfileTypeLocalhost, corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined:
	case "":
		errs = append(errs, field.Required(p.Child("type"), "type is required when seccompProfile is set"))
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), sp.Type, []corev1.SeccompProfileType{corev1.SeccompProfileTypeLocalhost, corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined}))
	}
	if sp.Type == corev1.SeccompProfileTypeLocalhost {
		if sp.LocalhostProfile == nil {
			errs = append(errs, field.Required(p.Child("localhostProfile"), "must be set when seccomp type is Localhost"))
		} else {
			errs = append(errs, validateLocalDescendingPath(*sp.LocalhostProfile, p.Child("localhostProfile"))...)
		}
	} else if sp.LocalhostProfile != nil {
		errs = append(errs, field.Invalid(p.Child("localhostProfile"), internal{sp}, "can only be set when seccomp type is Localhost"))
	}
	return errs
}

// validateSecurityContext is kube's container rule, with privileged
// containers allowed as kube-apiserver does with --allow-privileged=true.
func validateSecurityContext(sc *corev1.SecurityContext, p *field.Path, hostUsers bool) field.ErrorList {
	if sc == nil {
		return nil
	}
	errs := validateUserID(sc.RunAsUser, p.Child("runAsUser"))
	if sc.RunAsGroup != nil {
		for _, msg := range validation.IsValidGroupID(*sc.RunAsGroup) {
			errs = append(errs, field.Invalid(p.Child("runAsGroup"), *sc.RunAsGroup, msg))
		}
	}
	if sc.ProcMount != nil {
		if *sc.ProcMount != corev1.DefaultProcMount && *sc.ProcMount != corev1.UnmaskedProcMount {
			errs = append(errs, field.NotSupported(p.Child("procMount"), *sc.ProcMount, []corev1.ProcMountType{corev1.DefaultProcMount, corev1.UnmaskedProcMount}))
		}
		if hostUsers && *sc.ProcMount == corev1.UnmaskedProcMount {
			errs = append(errs, field.Invalid(p.Child("procMount"), sc.ProcMount, "`hostUsers` must be false to use `Unmasked`"))
		}
	}
	errs = append(errs, validateSeccompProfile(sc.SeccompProfile, p.Child("seccompProfile"))...)
	if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
		if sc.Privileged != nil && *sc.Privileged {
			errs = append(errs, field.Invalid(p, internal{sc}, "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"))
		}
		if sc.Capabilities != nil {
			for _, c := range sc.Capabilities.Add {
				if c == "CAP_SYS_ADMIN" {
					errs = append(errs, field.Invalid(p, internal{sc}, "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"))
				}
			}
		}
	}
	return append(errs, validateAppArmorProfile(sc.AppArmorProfile, p.Child("appArmorProfile"))...)
}

func validateAffinity(a *corev1.Affinity, p *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	var errs field.ErrorList
	if na := a.NodeAffinity; na != nil {
		np := p.Child("nodeAffinity")
		if na.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			errs = append(errs, validateNodeSelector(na.RequiredDuringSchedulingIgnoredDuringExecution, false, np.Child("requiredDuringSchedulingIgnoredDuringExecution"))...)
		}
		for i, t := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			tp := np.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			if t.Weight <= 0 || t.Weight > 100 {
				errs = append(errs, field.Invalid(tp.Child("weight"), t.Weight, "must be in the range 1-100"))
			}
			// Preferred terms may name label values no node has yet.
			errs = append(errs, validateNodeSelectorTerm(t.Preference, true, tp.Child("preference"))...)
		}
	}
	if pa := a.PodAffinity; pa != nil {
		errs = append(errs, validatePodAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, p.Child("podAffinity"))...)
	}
	if pa := a.PodAntiAffinity; pa != nil {
		errs = append(errs, validatePodAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, p.Child("podAntiAffinity"))...)
	}
	return errs
}

func validateNodeSelector(ns *corev1.NodeSelector, allowInvalidValue bool, p *field.Path) field.ErrorList {
	tp := p.Child("nodeSelectorTerms")
	if len(ns.NodeSelectorTerms) == 0 {
		return field.ErrorList{field.Required(tp, "must have at least one node selector term")}
	}
	var errs field.ErrorList
	for i, t := range ns.NodeSelectorTerms {
		errs = append(errs, validateNodeSelectorTerm(t, allowInvalidValue, tp.Index(i))...)
	}
	return errs
}

func validateNodeSelectorTerm(t corev1.NodeSelectorTerm, allowInvalidValue bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for j, r := range t.MatchExpressions {
		rp := p.Child("matchExpressions").Index(j)
		switch r.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			if len(r.Values) == 0 {
				errs = append(errs, field.Required(rp.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
			}
		case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
			if len(r.Values) > 0 {
				errs = append(errs, field.Forbidden(rp.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
			}
		case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
			if len(r.Values) != 1 {
				errs = append(errs, field.Required(rp.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
			}
		default:
			errs = append(errs, field.Invalid(rp.Child("operator"), r.Operator, "not a valid selector operator"))
		}
		errs = append(errs, metav1validation.ValidateLabelName(r.Key, rp.Child("key"))...)
		if !allowInvalidValue {
			for k, v := range r.Values {
				for _, msg := range validation.IsValidLabelValue(v) {
					errs = append(errs, field.Invalid(rp.Child("values").Index(k), v, msg))
				}
			}
		}
	}
	for j, r := range t.MatchFields {
		rp := p.Child("matchFields").Index(j)
		if r.Operator != corev1.NodeSelectorOpIn && r.Operator != corev1.NodeSelectorOpNotIn {
			errs = append(errs, field.Invalid(rp.Child("operator"), r.Operator, "not a valid selector operator"))
		} else if len(r.Values) != 1 {
			errs = append(errs, field.Required(rp.Child("values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
		}
		if r.Key != metav1.ObjectNameField {
			errs = append(errs, field.Invalid(rp.Child("key"), r.Key, "not a valid field selector key"))
		} else {
			for k, v := range r.Values {
				errs = append(errs, nameErrs(apimachineryvalidation.NameIsDNSSubdomain, v, rp.Child("values").Index(k))...)
			}
		}
	}
	return errs
}

func validatePodAffinityTerms(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range required {
		errs = append(errs, validatePodAffinityTerm(t, p.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i))...)
	}
	for i, t := range preferred {
		tp := p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
		if t.Weight <= 0 || t.Weight > 100 {
			errs = append(errs, field.Invalid(tp.Child("weight"), t.Weight, "must be in the range 1-100"))
		}
		errs = append(errs, validatePodAffinityTerm(t.PodAffinityTerm, tp.Child("podAffinityTerm"))...)
	}
	return errs
}

func validatePodAffinityTerm(t corev1.PodAffinityTerm, p *field.Path) field.ErrorList {
	opts := metav1validation.LabelSelectorValidationOptions{}
	errs := metav1validation.ValidateLabelSelector(t.LabelSelector, opts, p.Child("labelSelector"))
	errs = append(errs, metav1validation.ValidateLabelSelector(t.NamespaceSelector, opts, p.Child("namespaceSelector"))...)
	for _, ns := range t.Namespaces {
		errs = append(errs, nameErrs(apimachineryvalidation.ValidateNamespaceName, ns, p.Child("namespace"))...)
	}
	for i, k := range t.MatchLabelKeys {
		errs = append(errs, metav1validation.ValidateLabelName(k, p.Child("matchLabelKeys").Index(i))...)
	}
	for i, k := range t.MismatchLabelKeys {
		errs = append(errs, metav1validation.ValidateLabelName(k, p.Child("mismatchLabelKeys").Index(i))...)
	}
	if t.TopologyKey == "" {
		errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
	}
	return append(errs, metav1validation.ValidateLabelName(t.TopologyKey, p.Child("topologyKey"))...)
}

func validatePodDNSConfig(c *corev1.PodDNSConfig, policy corev1.DNSPolicy, p *field.Path) field.ErrorList {
	if policy == corev1.DNSNone {
		if c == nil {
			return field.ErrorList{field.Required(p, fmt.Sprintf("must provide `dnsConfig` when `dnsPolicy` is %s", corev1.DNSNone))}
		}
		if len(c.Nameservers) == 0 {
			return field.ErrorList{field.Required(p.Child("nameservers"), fmt.Sprintf("must provide at least one DNS nameserver when `dnsPolicy` is %s", corev1.DNSNone))}
		}
	}
	if c == nil {
		return nil
	}
	var errs field.ErrorList
	if len(c.Nameservers) > maxDNSNameservers {
		errs = append(errs, field.Invalid(p.Child("nameservers"), c.Nameservers, fmt.Sprintf("must not have more than %v nameservers", maxDNSNameservers)))
	}
	for i, ns := range c.Nameservers {
		errs = append(errs, legacyIP(p.Child("nameservers").Index(i), ns, nil)...)
	}
	if len(c.Searches) > maxDNSSearchPaths {
		errs = append(errs, field.Invalid(p.Child("searches"), c.Searches, fmt.Sprintf("must not have more than %v search paths", maxDNSSearchPaths)))
	}
	if len(strings.Join(c.Searches, " ")) > maxDNSSearchListChars {
		errs = append(errs, field.Invalid(p.Child("searches"), c.Searches, fmt.Sprintf("must not have more than %v characters (including spaces) in the search list", maxDNSSearchListChars)))
	}
	for i, s := range c.Searches {
		if s == "." {
			continue
		}
		s = strings.TrimSuffix(s, ".")
		for _, msg := range validation.IsDNS1123SubdomainWithUnderscore(s) {
			errs = append(errs, field.Invalid(p.Child("searches").Index(i), s, msg))
		}
	}
	for i, o := range c.Options {
		if o.Name == "" {
			errs = append(errs, field.Required(p.Child("options").Index(i), "must not be empty"))
		}
	}
	return errs
}

func validateSchedulingGates(gates []corev1.PodSchedulingGate, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, g := range gates {
		errs = append(errs, qualifiedName(g.Name, p.Index(i))...)
		if seen.Has(g.Name) {
			errs = append(errs, field.Duplicate(p.Index(i), g.Name))
		}
		seen.Insert(g.Name)
	}
	return errs
}

var (
	supportedScheduleActions = sets.New(corev1.DoNotSchedule, corev1.ScheduleAnyway)
	supportedNodeInclusion   = sets.New(corev1.NodeInclusionPolicyIgnore, corev1.NodeInclusionPolicyHonor)
)

func validateTopologySpreadConstraints(cs []corev1.TopologySpreadConstraint, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, c := range cs {
		cp := p.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(cp.Child("maxSkew"), int64(c.MaxSkew), isNotPositiveErrorMsg))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(cp.Child("topologyKey"), "can not be empty"))
		}
		if !supportedScheduleActions.Has(c.WhenUnsatisfiable) {
			errs = append(errs, field.NotSupported(cp.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, sets.List(supportedScheduleActions)))
		}
		for _, rest := range cs[i+1:] {
			if c.TopologyKey == rest.TopologyKey && c.WhenUnsatisfiable == rest.WhenUnsatisfiable {
				errs = append(errs, field.Duplicate(cp.Child("{topologyKey, whenUnsatisfiable}"), fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
				break
			}
		}
		if c.MinDomains != nil {
			if *c.MinDomains <= 0 {
				errs = append(errs, field.Invalid(cp.Child("minDomains"), int64(*c.MinDomains), isNotPositiveErrorMsg))
			}
			if c.WhenUnsatisfiable != corev1.DoNotSchedule {
				errs = append(errs, field.Invalid(cp.Child("minDomains"), c.MinDomains, fmt.Sprintf("can only use minDomains if whenUnsatisfiable=%s, not %s", corev1.DoNotSchedule, c.WhenUnsatisfiable)))
			}
		}
		if c.NodeAffinityPolicy != nil && !supportedNodeInclusion.Has(*c.NodeAffinityPolicy) {
			errs = append(errs, field.NotSupported(cp.Child("nodeAffinityPolicy"), c.NodeAffinityPolicy, sets.List(supportedNodeInclusion)))
		}
		if c.NodeTaintsPolicy != nil && !supportedNodeInclusion.Has(*c.NodeTaintsPolicy) {
			errs = append(errs, field.NotSupported(cp.Child("nodeTaintsPolicy"), c.NodeTaintsPolicy, sets.List(supportedNodeInclusion)))
		}
		for j, k := range c.MatchLabelKeys {
			errs = append(errs, metav1validation.ValidateLabelName(k, cp.Child("matchLabelKeys").Index(j))...)
		}
		errs = append(errs, metav1validation.ValidateLabelSelector(c.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, cp.Child("labelSelector"))...)
	}
	return errs
}

func validateHostUsers(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	if spec.HostUsers == nil || *spec.HostUsers {
		return nil
	}
	var errs field.ErrorList
	if spec.HostNetwork {
		errs = append(errs, field.Forbidden(p.Child("hostNetwork"), "when `hostUsers` is false"))
	}
	if spec.HostPID {
		errs = append(errs, field.Forbidden(p.Child("HostPID"), "when `hostUsers` is false"))
	}
	if spec.HostIPC {
		errs = append(errs, field.Forbidden(p.Child("HostIPC"), "when `hostUsers` is false"))
	}
	visitContainers(spec, p, func(c *corev1.Container, cp *field.Path) {
		if len(c.VolumeDevices) > 0 {
			errs = append(errs, field.Forbidden(cp.Child("volumeDevices"), "when `hostUsers` is false"))
		}
	})
	return errs
}

// visitContainers walks init, regular and ephemeral containers, in kube's order.
func visitContainers(spec *corev1.PodSpec, p *field.Path, fn func(*corev1.Container, *field.Path)) {
	for i := range spec.InitContainers {
		fn(&spec.InitContainers[i], p.Child("initContainers").Index(i))
	}
	for i := range spec.Containers {
		fn(&spec.Containers[i], p.Child("containers").Index(i))
	}
	for i := range spec.EphemeralContainers {
		c := corev1.Container(spec.EphemeralContainers[i].EphemeralContainerCommon)
		fn(&c, p.Child("ephemeralContainers").Index(i))
	}
}

func validatePodHostnameOverride(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	if spec.HostnameOverride == nil {
		return nil
	}
	var errs field.ErrorList
	hp := p.Child("hostnameOverride")
	if spec.SetHostnameAsFQDN != nil && *spec.SetHostnameAsFQDN {
		errs = append(errs, field.Forbidden(hp, "may not be specified when setHostnameAsFQDN is true"))
	}
	if spec.HostNetwork {
		errs = append(errs, field.Forbidden(hp, "may not be specified when hostNetwork is true"))
	}
	if len(*spec.HostnameOverride) > 64 {
		errs = append(errs, field.TooLong(hp, "", 64))
	}
	return append(errs, dns1123Subdomain(*spec.HostnameOverride, hp)...)
}

func validateFileKeyRefVolumes(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	srcs := make(map[string]*corev1.VolumeSource, len(spec.Volumes))
	for i := range spec.Volumes {
		srcs[spec.Volumes[i].Name] = &spec.Volumes[i].VolumeSource
	}
	var errs field.ErrorList
	visitContainers(spec, p, func(c *corev1.Container, cp *field.Path) {
		for j, ev := range c.Env {
			if ev.ValueFrom == nil || ev.ValueFrom.FileKeyRef == nil {
				continue
			}
			name := ev.ValueFrom.FileKeyRef.VolumeName
			vp := cp.Child("env").Index(j).Child("valueFrom", "fileKeyRef", "volumeName")
			src, ok := srcs[name]
			if !ok {
				errs = append(errs, field.NotFound(vp, name))
			} else if src.EmptyDir == nil {
				errs = append(errs, field.Invalid(vp, name, "referenced volume must be of type emptyDir"))
			}
		}
	})
	return errs
}

func validateTolerations(tols []corev1.Toleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tols {
		ip := p.Index(i)
		if t.Key != "" {
			errs = append(errs, metav1validation.ValidateLabelName(t.Key, ip.Child("key"))...)
		}
		if t.Key == "" && t.Operator != corev1.TolerationOpExists {
			errs = append(errs, field.Invalid(ip.Child("operator"), t.Operator, "operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(ip.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			if msgs := validation.IsValidLabelValue(t.Value); len(msgs) != 0 {
				errs = append(errs, field.Invalid(ip.Child("operator"), t.Value, strings.Join(msgs, ";")))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(ip.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		case corev1.TolerationOpLt, corev1.TolerationOpGt:
			// TaintTolerationComparisonOperators is off by default in v1.37.
			errs = append(errs, field.NotSupported(ip.Child("operator"), t.Operator, []corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists, corev1.TolerationOpLt, corev1.TolerationOpGt}))
		default:
			errs = append(errs, field.NotSupported(ip.Child("operator"), t.Operator, []corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}))
		}
		if t.Effect != "" {
			errs = append(errs, validateTaintEffect(t.Effect, true, ip.Child("effect"))...)
		}
	}
	return errs
}

func validateTaintEffect(e corev1.TaintEffect, allowEmpty bool, p *field.Path) field.ErrorList {
	if !allowEmpty && e == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	switch e {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		return nil
	}
	return field.ErrorList{field.NotSupported(p, e, []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute})}
}

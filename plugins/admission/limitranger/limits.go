package limitranger

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// Annotation records the defaults the plugin set, as kube's does.
const Annotation = "kubernetes.io/limit-ranger"

// containerDefaults are the Container items' default and defaultRequest.
func containerDefaults(lr *corev1.LimitRange) corev1.ResourceRequirements {
	req := corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	for _, item := range lr.Spec.Limits {
		if item.Type != corev1.LimitTypeContainer {
			continue
		}
		for k, v := range item.DefaultRequest {
			req.Requests[k] = v.DeepCopy()
		}
		for k, v := range item.Default {
			req.Limits[k] = v.DeepCopy()
		}
	}
	return req
}

// mergePodDefaults fills what containers leave unset and notes it in the
// kubernetes.io/limit-ranger annotation.
func mergePodDefaults(pod *corev1.Pod, defaults corev1.ResourceRequirements) {
	var notes []string
	for i := range pod.Spec.Containers {
		notes = mergeContainer(&pod.Spec.Containers[i], defaults, "container", notes)
	}
	for i := range pod.Spec.InitContainers {
		notes = mergeContainer(&pod.Spec.InitContainers[i], defaults, "init container", notes)
	}
	if len(notes) > 0 {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[Annotation] = "LimitRanger plugin set: " + strings.Join(notes, "; ")
	}
}

func mergeContainer(c *corev1.Container, defaults corev1.ResourceRequirements, what string, notes []string) []string {
	if c.Resources.Limits == nil {
		c.Resources.Limits = corev1.ResourceList{}
	}
	if c.Resources.Requests == nil {
		c.Resources.Requests = corev1.ResourceList{}
	}
	var setReq, setLim []string
	for k, v := range defaults.Limits {
		if _, ok := c.Resources.Limits[k]; !ok {
			c.Resources.Limits[k] = v.DeepCopy()
			setLim = append(setLim, string(k))
		}
	}
	for k, v := range defaults.Requests {
		if _, ok := c.Resources.Requests[k]; !ok {
			c.Resources.Requests[k] = v.DeepCopy()
			setReq = append(setReq, string(k))
		}
	}
	if len(setReq) > 0 {
		sort.Strings(setReq)
		notes = append(notes, strings.Join(setReq, ", ")+fmt.Sprintf(" request for %s %s", what, c.Name))
	}
	if len(setLim) > 0 {
		sort.Strings(setLim)
		notes = append(notes, strings.Join(setLim, ", ")+fmt.Sprintf(" limit for %s %s", what, c.Name))
	}
	return notes
}

// values compares in milli-units when all three fit, as kube does.
func values(req, lim, enforced resource.Quantity) (int64, int64, int64) {
	r, l, e := req.Value(), lim.Value(), enforced.Value()
	if r <= resource.MaxMilliValue && l <= resource.MaxMilliValue && e <= resource.MaxMilliValue {
		return req.MilliValue(), lim.MilliValue(), enforced.MilliValue()
	}
	return r, l, e
}

func minConstraint(typ, name string, enforced resource.Quantity, request, limit corev1.ResourceList) error {
	req, hasReq := request[corev1.ResourceName(name)]
	lim, hasLim := limit[corev1.ResourceName(name)]
	r, l, e := values(req, lim, enforced)
	if !hasReq {
		return fmt.Errorf("minimum %s usage per %s is %s.  No request is specified", name, typ, enforced.String())
	}
	if r < e {
		return fmt.Errorf("minimum %s usage per %s is %s, but request is %s", name, typ, enforced.String(), req.String())
	}
	if hasLim && l < e {
		return fmt.Errorf("minimum %s usage per %s is %s, but limit is %s", name, typ, enforced.String(), lim.String())
	}
	return nil
}

func maxRequestConstraint(typ, name string, enforced resource.Quantity, request corev1.ResourceList) error {
	req, hasReq := request[corev1.ResourceName(name)]
	r, _, e := values(req, resource.Quantity{}, enforced)
	if !hasReq {
		return fmt.Errorf("maximum %s usage per %s is %s.  No request is specified", name, typ, enforced.String())
	}
	if r > e {
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, typ, enforced.String(), req.String())
	}
	return nil
}

func maxConstraint(typ, name string, enforced resource.Quantity, request, limit corev1.ResourceList) error {
	req, hasReq := request[corev1.ResourceName(name)]
	lim, hasLim := limit[corev1.ResourceName(name)]
	r, l, e := values(req, lim, enforced)
	if !hasLim {
		return fmt.Errorf("maximum %s usage per %s is %s.  No limit is specified", name, typ, enforced.String())
	}
	if l > e {
		return fmt.Errorf("maximum %s usage per %s is %s, but limit is %s", name, typ, enforced.String(), lim.String())
	}
	if hasReq && r > e {
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, typ, enforced.String(), req.String())
	}
	return nil
}

func ratioConstraint(typ, name string, enforced resource.Quantity, request, limit corev1.ResourceList) error {
	req, hasReq := request[corev1.ResourceName(name)]
	lim, hasLim := limit[corev1.ResourceName(name)]
	r, l, _ := values(req, lim, enforced)
	if !hasReq || r == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no request is specified or request is 0", name, typ, enforced.String())
	}
	if !hasLim || l == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no limit is specified or limit is 0", name, typ, enforced.String())
	}
	observed := float64(l) / float64(r)
	shown := observed
	maxRatio := float64(enforced.Value())
	if enforced.Value() <= resource.MaxMilliValue {
		observed *= 1000
		maxRatio = float64(enforced.MilliValue())
	}
	if observed > maxRatio {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but provided ratio is %f", name, typ, enforced.String(), shown)
	}
	return nil
}

// check runs an item's min, max and ratio against one set of requests
// and limits.
func check(item *corev1.LimitRangeItem, request, limit corev1.ResourceList, errs []error) []error {
	typ := string(item.Type)
	for _, k := range sortedNames(item.Min) {
		if err := minConstraint(typ, string(k), item.Min[k], request, limit); err != nil {
			errs = append(errs, err)
		}
	}
	for _, k := range sortedNames(item.Max) {
		if err := maxConstraint(typ, string(k), item.Max[k], request, limit); err != nil {
			errs = append(errs, err)
		}
	}
	for _, k := range sortedNames(item.MaxLimitRequestRatio) {
		if err := ratioConstraint(typ, string(k), item.MaxLimitRequestRatio[k], request, limit); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// sortedNames keeps the messages in a stable order.
func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(l))
	for k := range l {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func validatePod(lr *corev1.LimitRange, pod *corev1.Pod) error {
	var errs []error
	for i := range lr.Spec.Limits {
		item := &lr.Spec.Limits[i]
		switch item.Type {
		case corev1.LimitTypeContainer:
			for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
				for j := range cs {
					errs = check(item, cs[j].Resources.Requests, cs[j].Resources.Limits, errs)
				}
			}
		case corev1.LimitTypePod:
			req, lim := podResources(pod)
			errs = check(item, req, lim, errs)
		}
	}
	return utilerrors.NewAggregate(errs)
}

func validateClaim(lr *corev1.LimitRange, pvc *corev1.PersistentVolumeClaim) error {
	var errs []error
	for _, item := range lr.Spec.Limits {
		if item.Type != corev1.LimitTypePersistentVolumeClaim {
			continue
		}
		for _, k := range sortedNames(item.Min) {
			if err := minConstraint(string(item.Type), string(k), item.Min[k], pvc.Spec.Resources.Requests, corev1.ResourceList{}); err != nil {
				errs = append(errs, err)
			}
		}
		for _, k := range sortedNames(item.Max) {
			if err := maxRequestConstraint(string(item.Type), string(k), item.Max[k], pvc.Spec.Resources.Requests); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return utilerrors.NewAggregate(errs)
}

// podResources are the pod's effective requests and limits: containers
// and sidecars summed, against the largest init container; pod-level
// cpu and memory win.
func podResources(pod *corev1.Pod) (req, lim corev1.ResourceList) {
	return sumPod(pod, func(r corev1.ResourceRequirements) corev1.ResourceList { return r.Requests }),
		sumPod(pod, func(r corev1.ResourceRequirements) corev1.ResourceList { return r.Limits })
}

func sumPod(pod *corev1.Pod, of func(corev1.ResourceRequirements) corev1.ResourceList) corev1.ResourceList {
	total := corev1.ResourceList{}
	for _, c := range pod.Spec.Containers {
		add(total, of(c.Resources))
	}
	sidecars, inits := corev1.ResourceList{}, corev1.ResourceList{}
	for _, c := range pod.Spec.InitContainers {
		this := of(c.Resources)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			add(total, this)
			add(sidecars, this)
			this = sidecars
		} else {
			tmp := corev1.ResourceList{}
			add(tmp, this)
			add(tmp, sidecars)
			this = tmp
		}
		maxOf(inits, this)
	}
	maxOf(total, inits)
	if pod.Spec.Resources != nil {
		for k, v := range of(*pod.Spec.Resources) {
			if k == corev1.ResourceCPU || k == corev1.ResourceMemory {
				total[k] = v
			}
		}
	}
	return total
}

func add(dst, src corev1.ResourceList) {
	for k, v := range src {
		if q, ok := dst[k]; ok {
			q.Add(v)
			dst[k] = q
		} else {
			dst[k] = v.DeepCopy()
		}
	}
}

func maxOf(dst, src corev1.ResourceList) {
	for k, v := range src {
		if q, ok := dst[k]; !ok || v.Cmp(q) > 0 {
			dst[k] = v.DeepCopy()
		}
	}
}

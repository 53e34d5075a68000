// Package quota measures what objects use against ResourceQuotas, as
// kube's quota evaluators do: object counts (count/<resource>[.<group>]
// and the legacy names pods, services, configmaps, secrets,
// persistentvolumeclaims...), and the compute requests and limits of pods.
// The ResourceQuota admission plugin charges with it and the quota
// controller recalculates with it.
package quota

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kpipe/kpipe/internal/api"
)

// CountName is the object count resource of a resource: count/pods,
// count/deployments.apps.
func CountName(res *api.Resource) corev1.ResourceName {
	if g := res.GroupVersion.Group; g != "" {
		return corev1.ResourceName("count/" + res.Name + "." + g)
	}
	return corev1.ResourceName("count/" + res.Name)
}

// legacy are the core object counts kube names without count/.
var legacy = map[string]corev1.ResourceName{
	"pods":                   corev1.ResourcePods,
	"services":               corev1.ResourceServices,
	"configmaps":             corev1.ResourceConfigMaps,
	"secrets":                corev1.ResourceSecrets,
	"persistentvolumeclaims": corev1.ResourcePersistentVolumeClaims,
	"resourcequotas":         corev1.ResourceQuotas,
	"replicationcontrollers": corev1.ResourceReplicationControllers,
}

// podCompute are the compute resources a pod's usage names.
var podCompute = []corev1.ResourceName{
	corev1.ResourceCPU, corev1.ResourceMemory,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory,
}

// Names are every resource name an object of res may use.
func Names(res *api.Resource) []corev1.ResourceName {
	out := []corev1.ResourceName{CountName(res)}
	if res.GroupVersion.Group == "" {
		if n, ok := legacy[res.Name]; ok {
			out = append(out, n)
		}
		switch res.Name {
		case "pods":
			out = append(out, podCompute...)
		case "services":
			out = append(out, corev1.ResourceServicesLoadBalancers, corev1.ResourceServicesNodePorts)
		case "persistentvolumeclaims":
			out = append(out, corev1.ResourceRequestsStorage)
		}
	}
	return out
}

// Usage is what obj, an object of res, uses.
func Usage(res *api.Resource, obj runtime.Object) corev1.ResourceList {
	one := *resource.NewQuantity(1, resource.DecimalSI)
	out := corev1.ResourceList{CountName(res): one}
	if res.GroupVersion.Group != "" {
		return out
	}
	if n, ok := legacy[res.Name]; ok {
		out[n] = one
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		if terminal(o) {
			// Finished pods no longer count, as in kube.
			delete(out, corev1.ResourcePods)
			return out
		}
		req, lim := podResources(o)
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := req[r]; ok {
				out[r] = q
				out[corev1.ResourceName("requests."+string(r))] = q
			}
			if q, ok := lim[r]; ok {
				out[corev1.ResourceName("limits."+string(r))] = q
			}
		}
	case *corev1.Service:
		switch o.Spec.Type {
		case corev1.ServiceTypeLoadBalancer:
			out[corev1.ResourceServicesLoadBalancers] = one
			out[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(int64(len(o.Spec.Ports)), resource.DecimalSI)
		case corev1.ServiceTypeNodePort:
			out[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(int64(len(o.Spec.Ports)), resource.DecimalSI)
		}
	case *corev1.PersistentVolumeClaim:
		if q, ok := o.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
			out[corev1.ResourceRequestsStorage] = q
		}
	}
	return out
}

func terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// podResources are a pod's effective requests and limits: its containers
// and restartable (sidecar) init containers summed, or the largest init
// container with the sidecars started before it if that is more, plus
// the overhead.
func podResources(p *corev1.Pod) (req, lim corev1.ResourceList) {
	req, lim = corev1.ResourceList{}, corev1.ResourceList{}
	for _, c := range p.Spec.Containers {
		addTo(req, c.Resources.Requests)
		addTo(lim, c.Resources.Limits)
	}
	sideReq, sideLim := corev1.ResourceList{}, corev1.ResourceList{}
	initReq, initLim := corev1.ResourceList{}, corev1.ResourceList{}
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addTo(sideReq, c.Resources.Requests)
			addTo(sideLim, c.Resources.Limits)
			addTo(req, c.Resources.Requests)
			addTo(lim, c.Resources.Limits)
			continue
		}
		r, l := corev1.ResourceList{}, corev1.ResourceList{}
		addTo(r, sideReq)
		addTo(r, c.Resources.Requests)
		addTo(l, sideLim)
		addTo(l, c.Resources.Limits)
		maxInto(initReq, r)
		maxInto(initLim, l)
	}
	maxInto(req, initReq)
	maxInto(lim, initLim)
	addTo(req, p.Spec.Overhead)
	if len(lim) > 0 {
		addTo(lim, p.Spec.Overhead)
	}
	return req, lim
}

func addTo(dst, src corev1.ResourceList) {
	for k, v := range src {
		q := dst[k]
		q.Add(v)
		dst[k] = q
	}
}

func maxInto(dst, src corev1.ResourceList) {
	for k, v := range src {
		if q, ok := dst[k]; !ok || v.Cmp(q) > 0 {
			dst[k] = v.DeepCopy()
		}
	}
}

// Add sums two lists.
func Add(a, b corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	addTo(out, a)
	addTo(out, b)
	return out
}

// Mask keeps the names of list that are in names.
func Mask(list corev1.ResourceList, names []corev1.ResourceName) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, n := range names {
		if q, ok := list[n]; ok {
			out[n] = q
		}
	}
	return out
}

// NamesOf lists the names of list.
func NamesOf(list corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(list))
	for n := range list {
		out = append(out, n)
	}
	return out
}

// Exceeded lists the names of used above their hard limit.
func Exceeded(used, hard corev1.ResourceList) []corev1.ResourceName {
	var out []corev1.ResourceName
	for n, q := range used {
		if h, ok := hard[n]; ok && q.Cmp(h) > 0 {
			out = append(out, n)
		}
	}
	return out
}

// RemoveZeros drops zero quantities.
func RemoveZeros(list corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for n, q := range list {
		if !q.IsZero() {
			out[n] = q
		}
	}
	return out
}

// Equal reports lists with the same names and quantities.
func Equal(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for n, q := range a {
		if o, ok := b[n]; !ok || q.Cmp(o) != 0 {
			return false
		}
	}
	return true
}

// String prints a list as kube's quota messages do: a=1,b=2, sorted.
func String(list corev1.ResourceList) string {
	keys := make([]string, 0, len(list))
	for k := range list {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		q := list[corev1.ResourceName(k)]
		parts[i] = k + "=" + q.String()
	}
	return strings.Join(parts, ",")
}

// NamesString prints names sorted and comma-separated.
func NamesString(names []corev1.ResourceName) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}

// requiredPerContainer are the compute resources every container must
// set when a quota limits them (kube's backward-compatible rule).
var requiredPerContainer = map[corev1.ResourceName]func(c *corev1.Container) bool{
	corev1.ResourceCPU:            func(c *corev1.Container) bool { _, ok := c.Resources.Requests[corev1.ResourceCPU]; return ok },
	corev1.ResourceRequestsCPU:    func(c *corev1.Container) bool { _, ok := c.Resources.Requests[corev1.ResourceCPU]; return ok },
	corev1.ResourceMemory:         func(c *corev1.Container) bool { _, ok := c.Resources.Requests[corev1.ResourceMemory]; return ok },
	corev1.ResourceRequestsMemory: func(c *corev1.Container) bool { _, ok := c.Resources.Requests[corev1.ResourceMemory]; return ok },
	corev1.ResourceLimitsCPU:      func(c *corev1.Container) bool { _, ok := c.Resources.Limits[corev1.ResourceCPU]; return ok },
	corev1.ResourceLimitsMemory:   func(c *corev1.Container) bool { _, ok := c.Resources.Limits[corev1.ResourceMemory]; return ok },
}

// Constraints checks that every container of a pod sets each quota'd
// compute resource, with kube's message.
func Constraints(required []corev1.ResourceName, obj runtime.Object) error {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.Resources != nil {
		return nil // pod-level resources lift the per-container rule
	}
	missing := map[corev1.ResourceName][]string{}
	for _, r := range required {
		has := requiredPerContainer[r]
		if has == nil {
			continue
		}
		for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
			for i := range cs {
				if !has(&cs[i]) {
					missing[r] = append(missing[r], cs[i].Name)
				}
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var names []string
	for r := range missing {
		names = append(names, string(r))
	}
	sort.Strings(names)
	msgs := make([]string, len(names))
	for i, n := range names {
		cs := dedupe(missing[corev1.ResourceName(n)])
		msgs[i] = fmt.Sprintf("%s for: %s", n, strings.Join(cs, ","))
	}
	return fmt.Errorf("must specify %s", strings.Join(msgs, "; "))
}

func dedupe(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

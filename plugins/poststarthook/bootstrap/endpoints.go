package bootstrap

import (
	"context"
	"net/netip"
	"time"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/storage/store"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// The kubernetes Service, as kube-apiserver publishes itself.
const (
	serviceName = "kubernetes"
	servicePort = 443
	portName    = "https"
)

// endpoints writes the kubernetes Service, Endpoints and EndpointSlice.
type endpoints struct {
	cs   kubernetes.Interface
	port int32 // the secure port, the endpoints' target

	prefix          string
	epRes, sliceRes *api.Resource
}

// ensureService creates the kubernetes Service, or puts its type and port
// back when someone changed them.
func (e *endpoints) ensureService(ctx context.Context, clusterIP string) error {
	ports := []corev1.ServicePort{{Name: portName, Protocol: corev1.ProtocolTCP, Port: servicePort, TargetPort: intstr.FromInt32(e.port)}}
	svcs := e.cs.CoreV1().Services(metav1.NamespaceDefault)
	svc, err := svcs.Get(ctx, serviceName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		svc = &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: serviceName, Namespace: metav1.NamespaceDefault,
				Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: ports, SessionAffinity: corev1.ServiceAffinityNone},
		}
		if clusterIP != "" {
			svc.Spec.ClusterIP, svc.Spec.ClusterIPs = clusterIP, []string{clusterIP}
		}
		_, err = svcs.Create(ctx, svc, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil // another replica was first
		}
		return err
	}
	if err != nil {
		return err
	}
	if svc.Spec.Type == corev1.ServiceTypeClusterIP && len(svc.Spec.Ports) == 1 &&
		equality.Semantic.DeepEqual(svc.Spec.Ports[0], ports[0]) {
		return nil
	}
	svc.Spec.Type, svc.Spec.Ports = corev1.ServiceTypeClusterIP, ports
	_, err = svcs.Update(ctx, svc, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		return nil // the next round looks again
	}
	return err
}

// write makes the Endpoints and EndpointSlice list exactly ips. They are
// written to storage directly, as the server's own objects: kube's
// validation refuses loopback addresses, which a laptop advertises.
func (e *endpoints) write(ctx context.Context, ips []string) error {
	if err := e.put(ctx, e.epRes, func(obj runtime.Object) {
		ep := obj.(*corev1.Endpoints)
		setLabel(&ep.ObjectMeta, discoveryv1.LabelSkipMirror, "true")
		ep.Subsets = nil
		if len(ips) > 0 {
			sub := corev1.EndpointSubset{Ports: []corev1.EndpointPort{{Name: portName, Port: e.port, Protocol: corev1.ProtocolTCP}}}
			for _, ip := range ips {
				sub.Addresses = append(sub.Addresses, corev1.EndpointAddress{IP: ip})
			}
			ep.Subsets = []corev1.EndpointSubset{sub}
		}
	}); err != nil {
		return err
	}
	return e.put(ctx, e.sliceRes, func(obj runtime.Object) {
		s := obj.(*discoveryv1.EndpointSlice)
		setLabel(&s.ObjectMeta, discoveryv1.LabelServiceName, serviceName)
		s.AddressType = discoveryv1.AddressTypeIPv4
		s.Ports = []discoveryv1.EndpointPort{{Name: ptr.To(portName), Port: ptr.To(e.port), Protocol: ptr.To(corev1.ProtocolTCP)}}
		s.Endpoints = nil
		for _, ip := range ips {
			if a, err := netip.ParseAddr(ip); err == nil && a.Is6() && !a.Is4In6() {
				s.AddressType = discoveryv1.AddressTypeIPv6
			}
			s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
		}
	})
}

// put creates or updates default/kubernetes of res with set; the store
// skips the write when nothing changed.
func (e *endpoints) put(ctx context.Context, res *api.Resource, set func(runtime.Object)) error {
	key := res.Key(e.prefix, metav1.NamespaceDefault, serviceName)
	return res.Store.GuaranteedUpdate(ctx, key, res.New(), true, nil, func(cur runtime.Object, _ store.ResponseMeta) (runtime.Object, *time.Duration, error) {
		m, err := meta.Accessor(cur)
		if err != nil {
			return nil, nil, err
		}
		if m.GetUID() == "" {
			m.SetName(serviceName)
			m.SetNamespace(metav1.NamespaceDefault)
			m.SetUID(types.UID(uuid.NewString()))
			m.SetCreationTimestamp(metav1.NewTime(time.Now().Truncate(time.Second)))
		}
		set(cur)
		return cur, nil, nil
	})
}

func setLabel(m *metav1.ObjectMeta, k, v string) {
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	m.Labels[k] = v
}

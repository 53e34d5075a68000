package webhook

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kpipe/kpipe/internal/admission"
)

// EndpointResolver resolves a service to one of its ready endpoints, as
// kube's endpoint service resolver: the Service must be ClusterIP,
// NodePort or LoadBalancer and have the port; the address comes from its
// EndpointSlices (label kubernetes.io/service-name) or, when it has none,
// its Endpoints, from the port with the service port's name.
type EndpointResolver struct {
	Objects *admission.Objects
}

var _ ServiceResolver = (*EndpointResolver)(nil)

// Resolve implements ServiceResolver.
func (r *EndpointResolver) Resolve(ctx context.Context, namespace, name string, port int32) (string, error) {
	services, err := r.Objects.Resource("", "v1", "services")
	if err != nil {
		return "", err
	}
	svc := &corev1.Service{}
	if err := r.Objects.Get(ctx, services, namespace, name, svc); err != nil {
		return "", err
	}
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, "":
	default:
		return "", fmt.Errorf("unsupported service type %q", svc.Spec.Type)
	}
	var svcPort *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == port {
			svcPort = &svc.Spec.Ports[i]
			break
		}
	}
	if svcPort == nil {
		return "", apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", port, svc.Name))
	}
	if addr, ok, err := r.fromSlices(ctx, namespace, name, svcPort.Name); err != nil || ok {
		return addr, err
	}
	if addr, ok, err := r.fromEndpoints(ctx, namespace, name, svcPort.Name); err != nil || ok {
		return addr, err
	}
	return "", apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", name))
}

func (r *EndpointResolver) fromSlices(ctx context.Context, namespace, name, portName string) (string, bool, error) {
	res, err := r.Objects.Resource("discovery.k8s.io", "v1", "endpointslices")
	if err != nil {
		return "", false, nil // not served: Endpoints only
	}
	list := &discoveryv1.EndpointSliceList{}
	if err := r.Objects.List(ctx, res, namespace, list); err != nil {
		return "", false, err
	}
	for _, s := range list.Items {
		if s.Labels[discoveryv1.LabelServiceName] != name {
			continue
		}
		for _, p := range s.Ports {
			if p.Port == nil || (p.Name == nil && portName != "") || (p.Name != nil && *p.Name != portName) || len(s.Endpoints) == 0 {
				continue
			}
			offset := rand.IntN(len(s.Endpoints))
			for i := range s.Endpoints {
				ep := s.Endpoints[(i+offset)%len(s.Endpoints)]
				if (ep.Conditions.Ready != nil && !*ep.Conditions.Ready) || len(ep.Addresses) == 0 {
					continue
				}
				return net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(*p.Port))), true, nil
			}
		}
	}
	return "", false, nil
}

func (r *EndpointResolver) fromEndpoints(ctx context.Context, namespace, name, portName string) (string, bool, error) {
	res, err := r.Objects.Resource("", "v1", "endpoints")
	if err != nil {
		return "", false, nil
	}
	eps := &corev1.Endpoints{}
	if err := r.Objects.Get(ctx, res, namespace, name, eps); err != nil {
		if apierrors.IsNotFound(err) {
			return "", false, nil
		}
		return "", false, err
	}
	for _, ss := range eps.Subsets {
		for _, p := range ss.Ports {
			if p.Name != portName || len(ss.Addresses) == 0 {
				continue
			}
			a := ss.Addresses[rand.IntN(len(ss.Addresses))]
			return net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))), true, nil
		}
	}
	return "", false, nil
}

package servicealloc

import (
	"context"
	"fmt"
	"math/big"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// A dry run (dryRun=All) shows the values kube-apiserver's dry-run
// allocators show, and changes nothing: neither bitmap is written, so the
// repair loop has nothing to find. Those allocators do not pick free
// values, they show placeholders:
//
//   - an unset cluster IP becomes the service range's network address
//     (10.96.0.0 for 10.96.0.0/12), which no real create is given;
//   - a requested cluster IP is checked against the range only: out of it
//     is kube's 422, taken is no error;
//   - an unset node port becomes one above the highest node port this
//     request has taken so far, from 32769 on (32769, 32770, ...), in or
//     out of the configured range;
//   - a requested node port is checked against what is taken only: taken
//     (in the bitmap, or earlier in the same request) is kube's 422, out
//     of the range is no error;
//   - an update releases nothing.

// dryFirstNodePort is one less than the first node port a dry run shows.
const dryFirstNodePort = 32768

// DryRunCreate fills in the cluster IP and node ports a dry-run create of
// the service shows, as kube's dry-run allocators do, without allocating
// anything. An error it gives is the one a real create gives for the
// same value.
func (a *Allocator) DryRunCreate(ctx context.Context, obj runtime.Object) error {
	s := obj.(*corev1.Service)
	if err := a.dryClusterIP(s); err != nil {
		return err
	}
	d := &dryPorts{a: a}
	if s.Spec.Type == corev1.ServiceTypeNodePort || s.Spec.Type == corev1.ServiceTypeLoadBalancer {
		if err := d.create(ctx, s); err != nil {
			return err
		}
	}
	if NeedsHealthCheckNodePort(s) {
		return d.healthCheck(ctx, s)
	}
	return nil
}

// DryRunUpdate fills in what a dry-run update newly needs (a type change
// to NodePort shows node ports, one from ExternalName a cluster IP), as
// kube's dry-run allocators do; it allocates and releases nothing.
func (a *Allocator) DryRunUpdate(ctx context.Context, obj, oldObj runtime.Object) error {
	s, old := obj.(*corev1.Service), oldObj.(*corev1.Service)
	if old.Spec.Type == corev1.ServiceTypeExternalName && s.Spec.Type != corev1.ServiceTypeExternalName {
		if err := a.dryClusterIP(s); err != nil {
			return err
		}
	}
	d := &dryPorts{a: a}
	if s.Spec.Type == corev1.ServiceTypeNodePort || s.Spec.Type == corev1.ServiceTypeLoadBalancer {
		if err := d.update(ctx, s, old); err != nil {
			return err
		}
	}
	if !NeedsHealthCheckNodePort(old) && NeedsHealthCheckNodePort(s) {
		return d.healthCheck(ctx, s)
	}
	return nil
}

func (a *Allocator) dryClusterIP(s *corev1.Service) error {
	if !NeedsClusterIP(s) {
		return nil
	}
	if s.Spec.ClusterIP == "" {
		ip := a.ipr.prefix.Addr().String()
		s.Spec.ClusterIP, s.Spec.ClusterIPs = ip, []string{ip}
		return nil
	}
	invalid := func(msg string) error {
		return apierrors.NewInvalid(serviceKind, s.Name, field.ErrorList{field.Invalid(field.NewPath("spec", "clusterIPs"), s.Spec.ClusterIPs,
			fmt.Sprintf("failed to allocate IP %v: %s", s.Spec.ClusterIP, msg))})
	}
	ip, err := netip.ParseAddr(s.Spec.ClusterIP)
	if err != nil {
		return invalid("not a valid IP address") // validation rejects these first
	}
	if _, ok := a.ipr.offset(ip); !ok {
		return invalid(fmt.Sprintf("the provided IP (%v) is not in the valid range. The range of valid IPs is %s", ip, a.ipr.prefix))
	}
	return nil
}

// dryPorts is one dry-run request's node ports: what it has taken so far,
// and the stored bitmap, read once when a requested port is checked.
type dryPorts struct {
	a     *Allocator
	bits  *big.Int
	taken []int
}

// allocate checks a requested port as kube's dry run does: taken in the
// bitmap or earlier in this request is an error, out of range is not.
func (d *dryPorts) allocate(ctx context.Context, port int) (msg string, err error) {
	for _, p := range d.taken {
		if p == port {
			return msgPortAllocated, nil
		}
	}
	if i, ok := d.a.ports.offset(port); ok {
		if d.bits == nil {
			if d.bits, err = d.a.nps.snapshot(ctx); err != nil {
				return "", apierrors.NewInternalError(err)
			}
		}
		if d.bits.Bit(i) == 1 {
			return msgPortAllocated, nil
		}
	}
	d.taken = append(d.taken, port)
	return "", nil
}

// next is the placeholder kube's dry run shows for an unset node port:
// one above the highest port this request has taken (32768 when none).
// Below 100 it skips ports taken in the bitmap, as kube's loop does.
func (d *dryPorts) next(ctx context.Context) (int32, error) {
	last := dryFirstNodePort
	if len(d.taken) > 0 {
		last = 0
		for _, p := range d.taken {
			last = max(last, p)
		}
	}
	for port := last + 1; port < 100; port++ {
		msg, err := d.allocate(ctx, port)
		if err != nil {
			return 0, err
		}
		if msg == "" {
			return int32(port), nil
		}
	}
	d.taken = append(d.taken, last+1)
	return int32(last + 1), nil
}

// create walks the ports in order as kube's create does: ports with one
// port number share the node port one of them asks for, or one drawn.
func (d *dryPorts) create(ctx context.Context, s *corev1.Service) error {
	byPort := map[int32]int32{}
	for i := range s.Spec.Ports {
		p := &s.Spec.Ports[i]
		if p.NodePort == 0 && !NeedsNodePorts(s) {
			continue // requested ones are still checked
		}
		fld := field.NewPath("spec", "ports").Index(i).Child("nodePort")
		shared := byPort[p.Port]
		switch {
		case shared == 0:
			np := requestedNodePort(p.Port, s.Spec.Ports)
			var err error
			if np == 0 {
				np, err = d.next(ctx)
			} else {
				err = d.take(ctx, s, fld, np)
			}
			if err != nil {
				return err
			}
			p.NodePort, byPort[p.Port] = np, np
		case p.NodePort == 0:
			p.NodePort = shared
		case p.NodePort != shared:
			if err := d.take(ctx, s, fld, p.NodePort); err != nil {
				return err
			}
		}
	}
	return nil
}

// update walks the ports as kube's update does: a port the old service
// held is kept, a new one is checked, an unset one is drawn.
func (d *dryPorts) update(ctx context.Context, s, old *corev1.Service) error {
	held := map[int32]bool{}
	for _, p := range old.Spec.Ports {
		if p.NodePort != 0 {
			held[p.NodePort] = true
		}
	}
	checked := map[int32]bool{}
	for i := range s.Spec.Ports {
		p := &s.Spec.Ports[i]
		switch {
		case p.NodePort == 0 && !NeedsNodePorts(s):
		case p.NodePort == 0:
			np, err := d.next(ctx)
			if err != nil {
				return err
			}
			p.NodePort = np
		case !held[p.NodePort] && !checked[p.NodePort]:
			if err := d.take(ctx, s, field.NewPath("spec", "ports").Index(i).Child("nodePort"), p.NodePort); err != nil {
				return err
			}
			checked[p.NodePort] = true
		}
	}
	return nil
}

func (d *dryPorts) take(ctx context.Context, s *corev1.Service, fld *field.Path, port int32) error {
	msg, err := d.allocate(ctx, int(port))
	if err != nil {
		return err
	}
	if msg != "" {
		return apierrors.NewInvalid(serviceKind, s.Name, field.ErrorList{field.Invalid(fld, port, msg)})
	}
	return nil
}

// healthCheck shows a load balancer's health check node port. kube
// answers a taken one with an internal error, not a 422.
func (d *dryPorts) healthCheck(ctx context.Context, s *corev1.Service) error {
	hc := s.Spec.HealthCheckNodePort
	if hc == 0 {
		np, err := d.next(ctx)
		s.Spec.HealthCheckNodePort = np
		return err
	}
	msg, err := d.allocate(ctx, int(hc))
	if err != nil {
		return err
	}
	if msg != "" {
		return apierrors.NewInternalError(fmt.Errorf("failed to allocate requested HealthCheck NodePort %v: %v", hc, msg))
	}
	return nil
}

// requestedNodePort is the node port some port numbered port asks for.
func requestedNodePort(port int32, ports []corev1.ServicePort) int32 {
	for _, p := range ports {
		if p.Port == port && p.NodePort != 0 {
			return p.NodePort
		}
	}
	return 0
}

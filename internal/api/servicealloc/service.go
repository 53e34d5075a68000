package servicealloc

import (
	"context"
	"fmt"
	"net/netip"
	"path"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Keys of the two bitmaps below the storage prefix, as kube lays them out.
const (
	IPsKey   = "ranges/serviceips"
	PortsKey = "ranges/servicenodeports"
)

// kube's allocator messages, which clients and tests match.
const (
	msgIPAllocated   = "provided IP is already allocated"
	msgPortAllocated = "provided port is already allocated"
)

var serviceKind = schema.GroupKind{Kind: "Service"}

// Allocator hands out the cluster IPs and node ports of Services.
type Allocator struct {
	ipr   *ipRange
	ports portRange
	ips   *bitmap
	nps   *bitmap

	ipLeaks, portLeaks leaks
}

// New returns the allocator for the ranges, keeping its bitmaps under
// prefix (/registry).
func New(c *clientv3.Client, prefix string, cidr netip.Prefix, portLo, portHi int) (*Allocator, error) {
	ipr, err := newIPRange(cidr)
	if err != nil {
		return nil, err
	}
	pr := portRange{lo: portLo, hi: portHi}
	return &Allocator{
		ipr:   ipr,
		ports: pr,
		ips:   newBitmap(c, path.Join(prefix, IPsKey), cidr.String(), ipr.size),
		nps:   newBitmap(c, path.Join(prefix, PortsKey), pr.String(), pr.size()),
	}, nil
}

// FirstIP is the range's first address, kept for the kubernetes Service:
// dynamic allocation never hands it out.
func (a *Allocator) FirstIP() netip.Addr { return a.ipr.addr(0) }

// NeedsClusterIP reports a service that holds a cluster IP.
func NeedsClusterIP(s *corev1.Service) bool {
	return s.Spec.Type != corev1.ServiceTypeExternalName && s.Spec.ClusterIP != corev1.ClusterIPNone
}

// NeedsNodePorts reports a service whose ports get node ports allocated.
func NeedsNodePorts(s *corev1.Service) bool {
	switch s.Spec.Type {
	case corev1.ServiceTypeNodePort:
		return true
	case corev1.ServiceTypeLoadBalancer:
		return s.Spec.AllocateLoadBalancerNodePorts == nil || *s.Spec.AllocateLoadBalancerNodePorts
	}
	return false
}

// NeedsHealthCheckNodePort reports a load balancer that keeps traffic local.
func NeedsHealthCheckNodePort(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

// txn collects what one write allocated, to undo it if the write fails.
type txn struct {
	a     *Allocator
	ip    []int
	ports []int
}

func (t *txn) rollback(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	_ = t.a.ips.release(ctx, t.ip...)
	_ = t.a.nps.release(ctx, t.ports...)
}

// BeginCreate allocates the new service's cluster IP and node ports and
// writes them into it. finish(false) gives them back when the create fails.
func (a *Allocator) BeginCreate(ctx context.Context, obj runtime.Object) (func(ok bool), error) {
	return a.begin(ctx, obj.(*corev1.Service), nil)
}

// BeginUpdate allocates what an update newly needs (a type change to
// NodePort, say); finish(true) releases what the old object held and the
// new one does not.
func (a *Allocator) BeginUpdate(ctx context.Context, obj, old runtime.Object) (func(ok bool), error) {
	return a.begin(ctx, obj.(*corev1.Service), old.(*corev1.Service))
}

func (a *Allocator) begin(ctx context.Context, s, old *corev1.Service) (func(ok bool), error) {
	t := &txn{a: a}
	if err := t.clusterIP(ctx, s, old); err != nil {
		t.rollback(ctx)
		return nil, err
	}
	if err := t.nodePorts(ctx, s, old); err != nil {
		t.rollback(ctx)
		return nil, err
	}
	return func(ok bool) {
		if !ok {
			t.rollback(ctx)
			return
		}
		if old != nil {
			a.releaseDropped(context.WithoutCancel(ctx), s, old)
		}
	}, nil
}

func (t *txn) clusterIP(ctx context.Context, s, old *corev1.Service) error {
	if !NeedsClusterIP(s) {
		return nil
	}
	if old != nil && NeedsClusterIP(old) && s.Spec.ClusterIP == old.Spec.ClusterIP && s.Spec.ClusterIP != "" {
		return nil // held already
	}
	a := t.a
	if s.Spec.ClusterIP == "" {
		i, err := a.ips.allocateNext(ctx, 1)
		if err != nil {
			return allocErr("serviceIP", err)
		}
		t.ip = append(t.ip, i)
		ip := a.ipr.addr(i).String()
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
	i, ok := a.ipr.offset(ip)
	if !ok {
		return invalid(fmt.Sprintf("the provided IP (%v) is not in the valid range. The range of valid IPs is %s", ip, a.ipr.prefix))
	}
	taken, err := a.ips.allocate(ctx, i)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if taken {
		return invalid(msgIPAllocated)
	}
	t.ip = append(t.ip, i)
	return nil
}

// heldPorts are the node ports (and health check port) a service holds.
func heldPorts(s *corev1.Service) map[int32]bool {
	m := map[int32]bool{}
	if s == nil {
		return m
	}
	for _, p := range s.Spec.Ports {
		if p.NodePort != 0 {
			m[p.NodePort] = true
		}
	}
	if s.Spec.HealthCheckNodePort != 0 {
		m[s.Spec.HealthCheckNodePort] = true
	}
	return m
}

func (t *txn) nodePorts(ctx context.Context, s, old *corev1.Service) error {
	if s.Spec.Type != corev1.ServiceTypeNodePort && s.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return nil
	}
	held := heldPorts(old)
	a := t.a
	// take allocates the requested port p; refused answers refusal with
	// the allocator's message.
	take := func(p int32, refused func(msg string) error) error {
		if held[p] {
			return nil
		}
		i, ok := a.ports.offset(int(p))
		if !ok {
			return refused(fmt.Sprintf("provided port is not in the valid range. The range of valid ports is %s", a.ports))
		}
		taken, err := a.nps.allocate(ctx, i)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		if taken {
			return refused(msgPortAllocated)
		}
		t.ports = append(t.ports, i)
		held[p] = true
		return nil
	}
	next := func() (int32, error) {
		i, err := a.nps.allocateNext(ctx, 0)
		if err != nil {
			return 0, allocErr("nodePort", err)
		}
		t.ports = append(t.ports, i)
		return int32(a.ports.lo + i), nil
	}
	ports := field.NewPath("spec", "ports")
	// Asked-for ports first, so a dynamic one never takes them.
	for i, p := range s.Spec.Ports {
		if p.NodePort != 0 {
			fld := ports.Index(i).Child("nodePort")
			if err := take(p.NodePort, func(msg string) error {
				return apierrors.NewInvalid(serviceKind, s.Name, field.ErrorList{field.Invalid(fld, p.NodePort, msg)})
			}); err != nil {
				return err
			}
		}
	}
	if NeedsNodePorts(s) {
		// One port number over several protocols shares its node port.
		byPort := map[int32]int32{}
		for _, p := range s.Spec.Ports {
			if p.NodePort != 0 {
				byPort[p.Port] = p.NodePort
			}
		}
		for i := range s.Spec.Ports {
			p := &s.Spec.Ports[i]
			if p.NodePort != 0 {
				continue
			}
			if np, ok := byPort[p.Port]; ok {
				p.NodePort = np
				continue
			}
			np, err := next()
			if err != nil {
				return err
			}
			p.NodePort, byPort[p.Port] = np, np
		}
	}
	if NeedsHealthCheckNodePort(s) {
		// kube answers a refused health check port with an internal
		// error, not a 422.
		if hc := s.Spec.HealthCheckNodePort; hc != 0 {
			return take(hc, func(msg string) error {
				return apierrors.NewInternalError(fmt.Errorf("failed to allocate requested HealthCheck NodePort %v: %v", hc, msg))
			})
		}
		i, err := a.nps.allocateNext(ctx, 0)
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("failed to allocate a HealthCheck NodePort %v: %v", 0, err))
		}
		t.ports = append(t.ports, i)
		s.Spec.HealthCheckNodePort = int32(a.ports.lo + i)
	}
	return nil
}

func allocErr(what string, err error) error {
	return apierrors.NewInternalError(fmt.Errorf("failed to allocate a %s: %v", what, err))
}

// releaseDropped frees what old held and s no longer does.
func (a *Allocator) releaseDropped(ctx context.Context, s, old *corev1.Service) {
	if ip := heldIP(old); ip != "" && heldIP(s) != ip {
		a.releaseIP(ctx, ip)
	}
	now := heldPorts(s)
	var gone []int
	for p := range heldPorts(old) {
		if !now[p] {
			if i, ok := a.ports.offset(int(p)); ok {
				gone = append(gone, i)
			}
		}
	}
	_ = a.nps.release(ctx, gone...)
}

func heldIP(s *corev1.Service) string {
	if !NeedsClusterIP(s) {
		return ""
	}
	return s.Spec.ClusterIP
}

func (a *Allocator) releaseIP(ctx context.Context, ip string) {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return
	}
	if i, ok := a.ipr.offset(addr); ok {
		_ = a.ips.release(ctx, i)
	}
}

// AfterDelete gives back what a deleted service held.
func (a *Allocator) AfterDelete(ctx context.Context, obj runtime.Object) {
	s, ok := obj.(*corev1.Service)
	if !ok {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if ip := heldIP(s); ip != "" {
		a.releaseIP(ctx, ip)
	}
	var offs []int
	for p := range heldPorts(s) {
		if i, ok := a.ports.offset(int(p)); ok {
			offs = append(offs, i)
		}
	}
	_ = a.nps.release(ctx, offs...)
}

package servicealloc

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
)

// stored is every key under prefix with its value and mod revision, and
// etcd's revision: a dry run must leave all of it as it was.
func stored(t *testing.T, c *clientv3.Client, prefix string) string {
	t.Helper()
	resp, err := c.Get(context.Background(), prefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	out := fmt.Sprintf("revision %d\n", resp.Header.Revision)
	for _, kv := range resp.Kvs {
		out += fmt.Sprintf("%s@%d=%x\n", kv.Key, kv.ModRevision, kv.Value)
	}
	return out
}

func nodePorts(s *corev1.Service) []int32 {
	var out []int32
	for _, p := range s.Spec.Ports {
		out = append(out, p.NodePort)
	}
	return out
}

func withPorts(s *corev1.Service, ports ...corev1.ServicePort) *corev1.Service {
	s.Spec.Ports = ports
	return s
}

func port(n, nodePort int32, proto corev1.Protocol) corev1.ServicePort {
	return corev1.ServicePort{Name: fmt.Sprintf("p%d-%s", n, proto), Port: n, NodePort: nodePort, Protocol: proto}
}

func localLB(s *corev1.Service, hc int32) *corev1.Service {
	s.Spec.Type = corev1.ServiceTypeLoadBalancer
	s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	s.Spec.AllocateLoadBalancerNodePorts = ptr.To(true)
	s.Spec.HealthCheckNodePort = hc
	return s
}

func TestDryRun(t *testing.T) {
	b := etcd(t)
	ctx := context.Background()
	a, err := New(b.Client, "/registry", netip.MustParsePrefix("10.96.0.0/16"), 30000, 30199)
	if err != nil {
		t.Fatal(err)
	}
	// Real allocations the dry runs meet: 10.96.0.5 and node port 30005.
	finish, err := a.BeginCreate(ctx, svc("held", corev1.ServiceTypeNodePort, "10.96.0.5", 30005))
	if err != nil {
		t.Fatal(err)
	}
	finish(true)
	// dry runs fn and checks that it wrote nothing to etcd.
	dry := func(t *testing.T, fn func() error) error {
		t.Helper()
		before := stored(t, b.Client, "/registry")
		err := fn()
		if after := stored(t, b.Client, "/registry"); after != before {
			t.Errorf("a dry run wrote to etcd:\nbefore %s\nafter %s", before, after)
		}
		return err
	}

	t.Run("create", func(t *testing.T) {
		for _, tc := range []struct {
			name      string
			s         *corev1.Service
			wantIP    string
			wantPorts []int32
			wantHC    int32
		}{
			{name: "an unset cluster IP shows the range's network address", s: svc("a", corev1.ServiceTypeClusterIP, ""), wantIP: "10.96.0.0", wantPorts: []int32{0}},
			{name: "a requested free IP is kept", s: svc("a", corev1.ServiceTypeClusterIP, "10.96.7.7"), wantIP: "10.96.7.7", wantPorts: []int32{0}},
			{name: "a requested taken IP is not checked", s: svc("a", corev1.ServiceTypeClusterIP, "10.96.0.5"), wantIP: "10.96.0.5", wantPorts: []int32{0}},
			{name: "headless gets no IP", s: svc("a", corev1.ServiceTypeClusterIP, corev1.ClusterIPNone), wantIP: corev1.ClusterIPNone, wantPorts: []int32{0}},
			{name: "ExternalName gets no IP", s: svc("a", corev1.ServiceTypeExternalName, ""), wantPorts: []int32{0}},
			{name: "unset node ports count up from 32769", s: svc("a", corev1.ServiceTypeNodePort, "", 0, 0, 0), wantIP: "10.96.0.0", wantPorts: []int32{32769, 32770, 32771}},
			{name: "an unset port follows the highest requested one", s: svc("a", corev1.ServiceTypeNodePort, "", 0, 30100, 0), wantIP: "10.96.0.0", wantPorts: []int32{32769, 30100, 32770}},
			{name: "in port order", s: svc("a", corev1.ServiceTypeNodePort, "", 30100, 0), wantIP: "10.96.0.0", wantPorts: []int32{30100, 30101}},
			{name: "a requested port out of the range is not checked", s: svc("a", corev1.ServiceTypeNodePort, "", 40000, 0), wantIP: "10.96.0.0", wantPorts: []int32{40000, 40001}},
			{name: "below 100 the next port is the next one up", s: svc("a", corev1.ServiceTypeNodePort, "", 50, 0), wantIP: "10.96.0.0", wantPorts: []int32{50, 51}},
			{
				name: "one port number over two protocols shares its node port",
				s: withPorts(svc("a", corev1.ServiceTypeNodePort, ""),
					port(53, 0, corev1.ProtocolTCP), port(53, 0, corev1.ProtocolUDP), port(54, 0, corev1.ProtocolTCP)),
				wantIP: "10.96.0.0", wantPorts: []int32{32769, 32769, 32770},
			},
			{
				name: "and the one it asks for, from a later entry",
				s: withPorts(svc("a", corev1.ServiceTypeNodePort, ""),
					port(53, 0, corev1.ProtocolTCP), port(53, 30053, corev1.ProtocolUDP)),
				wantIP: "10.96.0.0", wantPorts: []int32{30053, 30053},
			},
			{name: "a local load balancer's health check port comes last", s: localLB(svc("a", "", "", 0, 0), 0), wantIP: "10.96.0.0", wantPorts: []int32{32769, 32770}, wantHC: 32771},
			{name: "a requested health check port is kept", s: localLB(svc("a", "", "", 0), 30150), wantIP: "10.96.0.0", wantPorts: []int32{32769}, wantHC: 30150},
			{name: "a load balancer without node ports", s: func() *corev1.Service {
				s := localLB(svc("a", "", "", 0), 0)
				s.Spec.AllocateLoadBalancerNodePorts = ptr.To(false)
				return s
			}(), wantIP: "10.96.0.0", wantPorts: []int32{0}, wantHC: 32769},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if err := dry(t, func() error { return a.DryRunCreate(ctx, tc.s) }); err != nil {
					t.Fatal(err)
				}
				if tc.s.Spec.ClusterIP != tc.wantIP {
					t.Errorf("clusterIP %q, want %q", tc.s.Spec.ClusterIP, tc.wantIP)
				}
				if tc.wantIP != "" && !slices.Equal(tc.s.Spec.ClusterIPs, []string{tc.wantIP}) {
					t.Errorf("clusterIPs %q, want [%s]", tc.s.Spec.ClusterIPs, tc.wantIP)
				}
				if got := nodePorts(tc.s); !slices.Equal(got, tc.wantPorts) {
					t.Errorf("node ports %v, want %v", got, tc.wantPorts)
				}
				if tc.s.Spec.HealthCheckNodePort != tc.wantHC {
					t.Errorf("healthCheckNodePort %d, want %d", tc.s.Spec.HealthCheckNodePort, tc.wantHC)
				}
			})
		}
	})

	t.Run("create errors are a real create's", func(t *testing.T) {
		for _, tc := range []struct {
			name, want string
			code       int32
			s          func() *corev1.Service
		}{
			{
				name: "IP out of range", code: 422,
				want: `Service "e" is invalid: spec.clusterIPs: Invalid value: ["10.97.0.1"]: failed to allocate IP 10.97.0.1: the provided IP (10.97.0.1) is not in the valid range. The range of valid IPs is 10.96.0.0/16`,
				s:    func() *corev1.Service { return svc("e", corev1.ServiceTypeClusterIP, "10.97.0.1") },
			},
			{
				name: "the network address", code: 422,
				want: `Service "e" is invalid: spec.clusterIPs: Invalid value: ["10.96.0.0"]: failed to allocate IP 10.96.0.0: the provided IP (10.96.0.0) is not in the valid range. The range of valid IPs is 10.96.0.0/16`,
				s:    func() *corev1.Service { return svc("e", corev1.ServiceTypeClusterIP, "10.96.0.0") },
			},
			{
				name: "the broadcast address", code: 422,
				want: `Service "e" is invalid: spec.clusterIPs: Invalid value: ["10.96.255.255"]: failed to allocate IP 10.96.255.255: the provided IP (10.96.255.255) is not in the valid range. The range of valid IPs is 10.96.0.0/16`,
				s:    func() *corev1.Service { return svc("e", corev1.ServiceTypeClusterIP, "10.96.255.255") },
			},
			{
				name: "taken node port", code: 422,
				want: `Service "e" is invalid: spec.ports[1].nodePort: Invalid value: 30005: provided port is already allocated`,
				s:    func() *corev1.Service { return svc("e", corev1.ServiceTypeNodePort, "", 30006, 30005) },
			},
			{
				name: "taken health check port", code: 500,
				want: "Internal error occurred: failed to allocate requested HealthCheck NodePort 30005: provided port is already allocated",
				s:    func() *corev1.Service { return localLB(svc("e", "", "", 0), 30005) },
			},
		} {
			t.Run(tc.name, func(t *testing.T) {
				err := dry(t, func() error { return a.DryRunCreate(ctx, tc.s()) })
				if code := statusCode(err); code != tc.code || err.Error() != tc.want {
					t.Fatalf("dry run: %d %v\nwant %d %s", code, err, tc.code, tc.want)
				}
				_, real := a.BeginCreate(ctx, tc.s())
				if real == nil || real.Error() != err.Error() || statusCode(real) != tc.code {
					t.Fatalf("a real create gave %v", real)
				}
			})
		}
	})

	t.Run("create errors only a dry run gives", func(t *testing.T) {
		for _, tc := range []struct {
			name, want string
			code       int32
			s          *corev1.Service
		}{
			{
				name: "a port asked for twice", code: 422,
				want: `Service "e" is invalid: spec.ports[1].nodePort: Invalid value: 30100: provided port is already allocated`,
				s:    svc("e", corev1.ServiceTypeNodePort, "", 30100, 30100),
			},
		} {
			t.Run(tc.name, func(t *testing.T) {
				err := dry(t, func() error { return a.DryRunCreate(ctx, tc.s) })
				if code := statusCode(err); code != tc.code || err.Error() != tc.want {
					t.Fatalf("got %d %v\nwant %d %s", code, err, tc.code, tc.want)
				}
			})
		}
	})

	t.Run("update", func(t *testing.T) {
		for _, tc := range []struct {
			name      string
			old, s    *corev1.Service
			wantIP    string
			wantPorts []int32
			wantHC    int32
		}{
			{
				name:   "ClusterIP to NodePort shows node ports",
				old:    svc("u", corev1.ServiceTypeClusterIP, "10.96.0.5"),
				s:      svc("u", corev1.ServiceTypeNodePort, "10.96.0.5", 0, 0),
				wantIP: "10.96.0.5", wantPorts: []int32{32769, 32770},
			},
			{
				name:   "NodePort to ClusterIP releases nothing",
				old:    svc("u", corev1.ServiceTypeNodePort, "10.96.0.5", 30005),
				s:      svc("u", corev1.ServiceTypeClusterIP, "10.96.0.5"),
				wantIP: "10.96.0.5", wantPorts: []int32{0},
			},
			{
				name:   "held node ports are kept and a new one counts from 32769",
				old:    svc("u", corev1.ServiceTypeNodePort, "10.96.0.5", 30005),
				s:      svc("u", corev1.ServiceTypeNodePort, "10.96.0.5", 30005, 0),
				wantIP: "10.96.0.5", wantPorts: []int32{30005, 32769},
			},
			{
				name:   "ExternalName to ClusterIP shows the network address",
				old:    svc("u", corev1.ServiceTypeExternalName, ""),
				s:      svc("u", corev1.ServiceTypeClusterIP, ""),
				wantIP: "10.96.0.0", wantPorts: []int32{0},
			},
			{
				name:   "to a local load balancer shows a health check port",
				old:    svc("u", corev1.ServiceTypeNodePort, "10.96.0.5", 30005),
				s:      localLB(svc("u", "", "10.96.0.5", 30005), 0),
				wantIP: "10.96.0.5", wantPorts: []int32{30005}, wantHC: 32769,
			},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if err := dry(t, func() error { return a.DryRunUpdate(ctx, tc.s, tc.old) }); err != nil {
					t.Fatal(err)
				}
				if tc.s.Spec.ClusterIP != tc.wantIP {
					t.Errorf("clusterIP %q, want %q", tc.s.Spec.ClusterIP, tc.wantIP)
				}
				if got := nodePorts(tc.s); !slices.Equal(got, tc.wantPorts) {
					t.Errorf("node ports %v, want %v", got, tc.wantPorts)
				}
				if tc.s.Spec.HealthCheckNodePort != tc.wantHC {
					t.Errorf("healthCheckNodePort %d, want %d", tc.s.Spec.HealthCheckNodePort, tc.wantHC)
				}
			})
		}
	})

	t.Run("a real create's health check port out of the range is kube's internal error", func(t *testing.T) {
		_, err := a.BeginCreate(ctx, localLB(svc("e", "", "", 0), 80))
		want := "Internal error occurred: failed to allocate requested HealthCheck NodePort 80: provided port is not in the valid range. The range of valid ports is 30000-30199"
		if statusCode(err) != 500 || err.Error() != want {
			t.Fatalf("got %v\nwant %s", err, want)
		}
		// A dry run does not check the range.
		if err := dry(t, func() error { return a.DryRunCreate(ctx, localLB(svc("e", "", "", 0), 80)) }); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("an update asking for a taken port is a real update's 422", func(t *testing.T) {
		old := svc("u", corev1.ServiceTypeClusterIP, "10.96.0.9")
		err := dry(t, func() error {
			return a.DryRunUpdate(ctx, svc("u", corev1.ServiceTypeNodePort, "10.96.0.9", 30005), old)
		})
		want := `Service "u" is invalid: spec.ports[0].nodePort: Invalid value: 30005: provided port is already allocated`
		if statusCode(err) != 422 || err.Error() != want {
			t.Fatalf("got %v\nwant %s", err, want)
		}
		_, real := a.BeginUpdate(ctx, svc("u", corev1.ServiceTypeNodePort, "10.96.0.9", 30005), old)
		if real == nil || real.Error() != want {
			t.Fatalf("a real update gave %v", real)
		}
	})

	t.Run("what a dry run showed is still free or still held", func(t *testing.T) {
		// The values a dry run showed were not taken: a real create of
		// 10.96.7.7 succeeds. The dry run from NodePort to ClusterIP
		// released nothing: 30005 is still held.
		held := svc("x", corev1.ServiceTypeNodePort, "", 30005)
		if _, err := a.BeginCreate(ctx, held); !apierrors.IsInvalid(err) {
			t.Errorf("30005 after a dry-run release: %v, want Invalid", err)
		}
		finish, err := a.BeginCreate(ctx, svc("y", corev1.ServiceTypeClusterIP, "10.96.7.7"))
		if err != nil {
			t.Fatalf("10.96.7.7 after a dry run: %v", err)
		}
		finish(false)
	})
}

func statusCode(err error) int32 {
	if se, ok := err.(apierrors.APIStatus); ok {
		return se.Status().Code
	}
	return 0
}

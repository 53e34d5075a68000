package dryrunservice

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	mbits "math/bits"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

const (
	prefix = "/dryrunservice/registry"
	ns     = "dry"
)

// serviceCIDR is the default services.clusterIPRange.
var serviceCIDR = netip.MustParsePrefix("10.96.0.0/12")

var dryRun = []string{metav1.DryRunAll}

func service(name string, typ corev1.ServiceType, clusterIP string, nodePorts ...int32) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			Type:      typ,
			ClusterIP: clusterIP,
			Selector:  map[string]string{"app": name},
			Ports:     []corev1.ServicePort{{Name: "p80", Port: 80, TargetPort: intstr.FromInt32(80)}},
		},
	}
	for i, np := range nodePorts {
		if i > 0 {
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: fmt.Sprintf("p%d", 80+i), Port: int32(80 + i), TargetPort: intstr.FromInt32(int32(80 + i))})
		}
		s.Spec.Ports[i].NodePort = np
	}
	return s
}

// bitmaps is both allocation bitmaps as stored: key, value and, with
// revs, mod revision.
func bitmaps(t *testing.T, c *clientv3.Client, revs bool) string {
	t.Helper()
	resp, err := c.Get(context.Background(), prefix+"/ranges/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, kv := range resp.Kvs {
		fmt.Fprintf(&b, "%s=%s", kv.Key, kv.Value)
		if revs {
			fmt.Fprintf(&b, " at revision %d", kv.ModRevision)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// untouched runs a dry run and fails the test if it wrote either bitmap,
// even with the same bytes.
func untouched(t *testing.T, c *clientv3.Client, dryRun func()) {
	t.Helper()
	before := bitmaps(t, c, true)
	dryRun()
	if after := bitmaps(t, c, true); after != before {
		t.Errorf("the dry run wrote the allocation bitmaps:\nbefore %s\nafter  %s", before, after)
	}
}

// ipsInUse counts the set bits of the cluster IP bitmap.
func ipsInUse(t *testing.T, c *clientv3.Client) int {
	t.Helper()
	resp, err := c.Get(context.Background(), prefix+"/ranges/serviceips")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("reading the IP bitmap: %v", err)
	}
	var ra corev1.RangeAllocation
	if err := json.Unmarshal(resp.Kvs[0].Value, &ra); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, w := range new(big.Int).SetBytes(ra.Data).Bits() {
		n += mbits.OnesCount(uint(w))
	}
	return n
}

// TestServiceDryRun: dry-run creates and updates of Services show what
// kube-apiserver's dry-run allocators show (the range's network address
// for a cluster IP, node ports from 32769 up), answer kube's 422 where
// kube does, and leave the allocation bitmaps byte for byte as they were.
func TestServiceDryRun(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{Configure: func(c *config.Config) { c.Storage.Prefix = prefix }})
	cs := kubernetes.NewForConfigOrDie(ts.Config)
	svcs := cs.CoreV1().Services(ns)
	etcd := ts.Backend().Client
	ctx := context.Background()
	e2eutil.Namespace(t, cs, ns)
	e2eutil.Eventually(t, 20*time.Second, "the kubernetes Service", func() bool {
		_, err := cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		return err == nil
	})

	// Real services the dry runs meet: a taken IP, a taken node port, and
	// a ClusterIP service to update.
	for _, s := range []*corev1.Service{
		service("held-ip", corev1.ServiceTypeClusterIP, "10.96.0.50"),
		service("held-port", corev1.ServiceTypeNodePort, "", 30050),
		service("cip", corev1.ServiceTypeClusterIP, ""),
	} {
		if _, err := svcs.Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	before := bitmaps(t, etcd, false)
	inUse := ipsInUse(t, etcd)

	t.Run("kubectl dry-run create shows the range's network address", func(t *testing.T) {
		var out string
		var err error
		untouched(t, etcd, func() {
			out, err = e2eutil.Kubectl(t, ts, "-n", ns, "create", "service", "clusterip", "x", "--tcp=80",
				"--dry-run=server", "-o", "jsonpath={.spec.clusterIP}")
		})
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		// kube's dry-run allocator shows the range's own address, which
		// is in the range and never handed out.
		ip, perr := netip.ParseAddr(out)
		if perr != nil || !serviceCIDR.Contains(ip) || out != serviceCIDR.Addr().String() {
			t.Errorf("clusterIP %q, want %s", out, serviceCIDR.Addr())
		}
		if _, err := svcs.Get(ctx, "x", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the dry run stored x: %v", err)
		}
	})

	t.Run("kubectl dry-run NodePort create shows kube's node port", func(t *testing.T) {
		var out string
		var err error
		untouched(t, etcd, func() {
			out, err = e2eutil.Kubectl(t, ts, "-n", ns, "create", "service", "nodeport", "y", "--tcp=80",
				"--dry-run=server", "-o", "jsonpath={.spec.clusterIP} {.spec.ports[0].nodePort}")
		})
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		// kube's dry-run port allocator counts up from 32769, whatever
		// the range (30000-32767 by default).
		if out != "10.96.0.0 32769" {
			t.Errorf("got %q, want %q", out, "10.96.0.0 32769")
		}
	})

	t.Run("kubectl apply --dry-run=server of a new service shows the network address", func(t *testing.T) {
		manifest := filepath.Join(t.TempDir(), "svc.yaml")
		yaml := "apiVersion: v1\nkind: Service\nmetadata:\n  name: applied\n  namespace: " + ns +
			"\nspec:\n  type: NodePort\n  selector: {app: applied}\n  ports:\n  - port: 80\n"
		if err := os.WriteFile(manifest, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		var out string
		var err error
		untouched(t, etcd, func() {
			out, err = e2eutil.Kubectl(t, ts, "apply", "--server-side", "-f", manifest, "--dry-run=server",
				"-o", "jsonpath={.spec.clusterIP} {.spec.ports[0].nodePort}")
		})
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if out != "10.96.0.0 32769" {
			t.Errorf("got %q, want %q", out, "10.96.0.0 32769")
		}
	})

	t.Run("client-go dry-run create of a local load balancer", func(t *testing.T) {
		s := service("lb", corev1.ServiceTypeLoadBalancer, "", 0, 0)
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		var got *corev1.Service
		var err error
		untouched(t, etcd, func() { got, err = svcs.Create(ctx, s, metav1.CreateOptions{DryRun: dryRun}) })
		if err != nil {
			t.Fatal(err)
		}
		ports := []int32{got.Spec.Ports[0].NodePort, got.Spec.Ports[1].NodePort, got.Spec.HealthCheckNodePort}
		if got.Spec.ClusterIP != "10.96.0.0" || fmt.Sprint(got.Spec.ClusterIPs) != "[10.96.0.0]" || fmt.Sprint(ports) != "[32769 32770 32771]" {
			t.Errorf("clusterIPs %v, node ports and health check port %v; want [10.96.0.0], [32769 32770 32771]", got.Spec.ClusterIPs, ports)
		}
	})

	t.Run("a dry run asking for a taken IP is not checked, as in kube", func(t *testing.T) {
		var got *corev1.Service
		var err error
		untouched(t, etcd, func() {
			got, err = svcs.Create(ctx, service("again", corev1.ServiceTypeClusterIP, "10.96.0.50"), metav1.CreateOptions{DryRun: dryRun})
		})
		if err != nil {
			t.Fatalf("kube's dry run does not check a requested IP against the bitmap; got %v", err)
		}
		if got.Spec.ClusterIP != "10.96.0.50" {
			t.Errorf("clusterIP %q", got.Spec.ClusterIP)
		}
		// The real create is refused.
		_, err = svcs.Create(ctx, service("again", corev1.ServiceTypeClusterIP, "10.96.0.50"), metav1.CreateOptions{})
		e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid,
			`Service "again" is invalid: spec.clusterIPs: Invalid value: ["10.96.0.50"]: failed to allocate IP 10.96.0.50: provided IP is already allocated`)
	})

	for _, tc := range []struct {
		name, msg string
		s         *corev1.Service
	}{
		{
			name: "an IP out of the range",
			s:    service("far", corev1.ServiceTypeClusterIP, "10.200.0.1"),
			msg:  `Service "far" is invalid: spec.clusterIPs: Invalid value: ["10.200.0.1"]: failed to allocate IP 10.200.0.1: the provided IP (10.200.0.1) is not in the valid range. The range of valid IPs is 10.96.0.0/12`,
		},
		{
			name: "a taken node port",
			s:    service("tp", corev1.ServiceTypeNodePort, "", 30050),
			msg:  `Service "tp" is invalid: spec.ports[0].nodePort: Invalid value: 30050: provided port is already allocated`,
		},
	} {
		t.Run("a dry run asking for "+tc.name+" gets a real create's 422", func(t *testing.T) {
			var err error
			untouched(t, etcd, func() { _, err = svcs.Create(ctx, tc.s.DeepCopy(), metav1.CreateOptions{DryRun: dryRun}) })
			e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, tc.msg)
			_, err = svcs.Create(ctx, tc.s.DeepCopy(), metav1.CreateOptions{})
			e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, tc.msg)
		})
	}

	t.Run("kubectl shows the 422", func(t *testing.T) {
		var out string
		var err error
		untouched(t, etcd, func() {
			out, err = e2eutil.Kubectl(t, ts, "-n", ns, "create", "service", "clusterip", "far", "--tcp=80",
				"--clusterip=10.200.0.1", "--dry-run=server")
		})
		if err == nil {
			t.Fatalf("kubectl succeeded: %s", out)
		}
		e2eutil.MustContain(t, "kubectl's error", out, "failed to allocate IP 10.200.0.1: the provided IP (10.200.0.1) is not in the valid range. The range of valid IPs is 10.96.0.0/12")
	})

	t.Run("kubectl dry-run patch from ClusterIP to NodePort shows a node port", func(t *testing.T) {
		var out string
		var err error
		untouched(t, etcd, func() {
			out, err = e2eutil.Kubectl(t, ts, "-n", ns, "patch", "service", "cip", "-p", `{"spec":{"type":"NodePort"}}`,
				"--dry-run=server", "-o", "jsonpath={.spec.type} {.spec.ports[0].nodePort}")
		})
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if out != "NodePort 32769" {
			t.Errorf("got %q, want %q", out, "NodePort 32769")
		}
		live, err := svcs.Get(ctx, "cip", metav1.GetOptions{})
		if err != nil || live.Spec.Type != corev1.ServiceTypeClusterIP || live.Spec.Ports[0].NodePort != 0 {
			t.Errorf("the dry run changed cip: %v %v", live.Spec, err)
		}
	})

	t.Run("a dry-run update from NodePort to ClusterIP releases nothing", func(t *testing.T) {
		live, err := svcs.Get(ctx, "held-port", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		live.Spec.Type = corev1.ServiceTypeClusterIP
		var got *corev1.Service
		untouched(t, etcd, func() { got, err = svcs.Update(ctx, live, metav1.UpdateOptions{DryRun: dryRun}) })
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.Type != corev1.ServiceTypeClusterIP || got.Spec.Ports[0].NodePort != 0 {
			t.Errorf("dry-run answer %v", got.Spec)
		}
		_, err = svcs.Create(ctx, service("tp2", corev1.ServiceTypeNodePort, "", 30050), metav1.CreateOptions{})
		e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid,
			`Service "tp2" is invalid: spec.ports[0].nodePort: Invalid value: 30050: provided port is already allocated`)
	})

	t.Run("a dry-run delete releases nothing", func(t *testing.T) {
		untouched(t, etcd, func() {
			if err := svcs.Delete(ctx, "held-ip", metav1.DeleteOptions{DryRun: dryRun}); err != nil {
				t.Fatal(err)
			}
		})
		if _, err := svcs.Get(ctx, "held-ip", metav1.GetOptions{}); err != nil {
			t.Errorf("the dry run deleted held-ip: %v", err)
		}
	})

	// Between them, the refused real creates allocated and gave back.
	if after := bitmaps(t, etcd, false); after != before {
		t.Fatalf("the allocation bitmaps changed:\nbefore %s\nafter  %s", before, after)
	}
	list, err := svcs.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 3 {
		t.Fatalf("after the dry runs %s holds %d services (%v), want 3", ns, len(list.Items), err)
	}

	t.Run("real creates after the dry runs get distinct IPs, and a local load balancer its health check port", func(t *testing.T) {
		seen := map[string]bool{"10.96.0.50": true, serviceCIDR.Addr().String(): true}
		for _, s := range list.Items {
			seen[s.Spec.ClusterIP] = true
		}
		for i := range 10 {
			s := service(fmt.Sprintf("real-%d", i), corev1.ServiceTypeNodePort, "")
			got, err := svcs.Create(ctx, s, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ip := netip.MustParseAddr(got.Spec.ClusterIP)
			if !serviceCIDR.Contains(ip) || seen[ip.String()] {
				t.Errorf("real-%d got %s: out of range, taken, or the network address", i, ip)
			}
			seen[ip.String()] = true
			if np := got.Spec.Ports[0].NodePort; np < 30000 || np > 32767 || np == 30050 {
				t.Errorf("real-%d got node port %d", i, np)
			}
		}
		lb := service("real-lb", corev1.ServiceTypeLoadBalancer, "", 0)
		lb.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		got, err := svcs.Create(ctx, lb, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("a real local load balancer: %v", err)
		}
		if hc := got.Spec.HealthCheckNodePort; hc < 30000 || hc > 32767 || hc == got.Spec.Ports[0].NodePort {
			t.Errorf("real-lb got health check port %d (node port %d)", hc, got.Spec.Ports[0].NodePort)
		}
		if n := ipsInUse(t, etcd); n != inUse+11 {
			t.Errorf("the IP bitmap holds %d addresses, want %d", n, inUse+11)
		}
	})
}

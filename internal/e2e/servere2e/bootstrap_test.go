package servere2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/testserver"
)

// fastHooks shortens the bootstrap-controller's intervals so tests see its
// loops act in well under a second.
func fastHooks(cfg *config.Config) {
	for i, e := range cfg.PostStartHooks {
		if e.Name != "bootstrap-controller" {
			continue
		}
		if e.Config == nil {
			e.Config = map[string]any{}
		}
		e.Config["systemNamespacesInterval"] = "200ms"
		e.Config["endpointInterval"] = "200ms"
		e.Config["repairInterval"] = "1s"
		e.Config["endpointReconcilerTTL"] = "2s"
		cfg.PostStartHooks[i] = e
	}
}

// replica starts a server on its own loopback address; replicas of one
// test share the etcd prefix and the port.
func replica(t *testing.T, addr, prefix string, port int) *testserver.TestServer {
	t.Helper()
	return testserver.Start(t, testserver.Options{Port: port, Configure: func(cfg *config.Config) {
		cfg.Server.BindAddress, cfg.Server.AdvertiseAddress = addr, addr
		cfg.Storage.Prefix = prefix
		fastHooks(cfg)
	}})
}

func portOf(t *testing.T, ts *testserver.TestServer) int {
	t.Helper()
	i := strings.LastIndex(ts.URL(), ":")
	p, err := strconv.Atoi(ts.URL()[i+1:])
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// endpointIPs are the addresses of the kubernetes Endpoints and
// EndpointSlice, sorted.
func endpointIPs(t *testing.T, cs kubernetes.Interface) (ep, slice []string) {
	t.Helper()
	ctx := context.Background()
	e, err := cs.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	if err == nil {
		for _, s := range e.Subsets {
			for _, a := range s.Addresses {
				ep = append(ep, a.IP)
			}
		}
	}
	s, err := cs.DiscoveryV1().EndpointSlices("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	if err == nil {
		for _, e := range s.Endpoints {
			slice = append(slice, e.Addresses...)
		}
	}
	slices.Sort(ep)
	slices.Sort(slice)
	return ep, slice
}

func endpointsAre(t *testing.T, cs kubernetes.Interface, want ...string) func() bool {
	return func() bool {
		ep, slice := endpointIPs(t, cs)
		return slices.Equal(ep, want) && slices.Equal(slice, want)
	}
}

func TestBootstrapFixtures(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{Configure: fastHooks})
	cs := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := context.Background()
	port := portOf(t, ts)

	t.Run("four namespaces", func(t *testing.T) {
		for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
			if _, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
				t.Errorf("namespace %s: %v", ns, err)
			}
		}
	})

	t.Run("kubernetes service with endpoints on the advertise address", func(t *testing.T) {
		var svc *corev1.Service
		e2eutil.Eventually(t, 10*time.Second, "the kubernetes service", func() bool {
			var err error
			svc, err = cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
			return err == nil
		})
		p := svc.Spec.Ports
		if svc.Spec.Type != corev1.ServiceTypeClusterIP || svc.Spec.ClusterIP != "10.96.0.1" || len(p) != 1 ||
			p[0].Name != "https" || p[0].Port != 443 || p[0].Protocol != corev1.ProtocolTCP || p[0].TargetPort.IntValue() != port {
			t.Errorf("kubernetes service: %s %s %+v", svc.Spec.Type, svc.Spec.ClusterIP, p)
		}
		e2eutil.Eventually(t, 10*time.Second, "endpoints on 127.0.0.1", endpointsAre(t, cs, "127.0.0.1"))
		e, _ := cs.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		if ports := e.Subsets[0].Ports; len(ports) != 1 || ports[0].Port != int32(port) || ports[0].Name != "https" {
			t.Errorf("endpoint ports %+v, want https %d", ports, port)
		}
		s, _ := cs.DiscoveryV1().EndpointSlices("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		if s.Labels["kubernetes.io/service-name"] != "kubernetes" || len(s.Ports) != 1 || *s.Ports[0].Port != int32(port) {
			t.Errorf("endpoint slice labels %v ports %+v", s.Labels, s.Ports)
		}
	})

	t.Run("kubectl delete svc kubernetes: it comes back", func(t *testing.T) {
		old, err := cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out, err := e2eutil.Kubectl(t, ts, "delete", "svc", "kubernetes"); err != nil {
			t.Fatalf("kubectl delete: %v\n%s", err, out)
		}
		e2eutil.Eventually(t, 5*time.Second, "a new kubernetes service at 10.96.0.1", func() bool {
			svc, err := cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
			return err == nil && svc.UID != old.UID && svc.Spec.ClusterIP == "10.96.0.1"
		})
	})

	t.Run("kubectl delete ns kube-node-lease: it comes back", func(t *testing.T) {
		old, err := cs.CoreV1().Namespaces().Get(ctx, "kube-node-lease", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out, err := e2eutil.Kubectl(t, ts, "delete", "ns", "kube-node-lease", "--wait=false"); err != nil {
			t.Fatalf("kubectl delete: %v\n%s", err, out)
		}
		e2eutil.Eventually(t, 10*time.Second, "a new kube-node-lease", func() bool {
			ns, err := cs.CoreV1().Namespaces().Get(ctx, "kube-node-lease", metav1.GetOptions{})
			return err == nil && ns.UID != old.UID && ns.Status.Phase == corev1.NamespaceActive
		})
	})

	t.Run("default, kube-system and kube-public cannot be deleted", func(t *testing.T) {
		for _, ns := range []string{"default", "kube-system", "kube-public"} {
			out, err := e2eutil.Kubectl(t, ts, "delete", "ns", ns, "--wait=false")
			if err == nil || !strings.Contains(out, "this namespace may not be deleted") {
				t.Errorf("kubectl delete ns %s: %v\n%s", ns, err, out)
			}
		}
	})
}

func TestBootstrapReplicas(t *testing.T) {
	prefix := "/replicas/registry"
	a := replica(t, "127.0.0.2", prefix, 0)
	port := portOf(t, a)
	b := replica(t, "127.0.0.3", prefix, port)
	csA := kubernetes.NewForConfigOrDie(a.Config)
	csB := kubernetes.NewForConfigOrDie(b.Config)
	ctx := context.Background()

	t.Run("both replicas in the endpoints and the endpoint slice", func(t *testing.T) {
		e2eutil.Eventually(t, 10*time.Second, "endpoints on both replicas", endpointsAre(t, csB, "127.0.0.2", "127.0.0.3"))
	})

	t.Run("200 services through two replicas get 200 distinct addresses", func(t *testing.T) {
		e2eutil.Namespace(t, csA, "many")
		var mu sync.Mutex
		ips := map[string]string{}
		var wg sync.WaitGroup
		sem := make(chan struct{}, 16)
		for i := range 200 {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				cs := csA
				if i%2 == 1 {
					cs = csB
				}
				svc, err := cs.CoreV1().Services("many").Create(ctx, &corev1.Service{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s%d", i)},
					Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
				}, metav1.CreateOptions{})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if other, dup := ips[svc.Spec.ClusterIP]; dup {
					t.Errorf("%s given to %s and %s", svc.Spec.ClusterIP, other, svc.Name)
				}
				ips[svc.Spec.ClusterIP] = svc.Name
			})
		}
		wg.Wait()
		cidr := netip.MustParsePrefix("10.96.0.0/12")
		for ip, name := range ips {
			a, err := netip.ParseAddr(ip)
			if err != nil || !cidr.Contains(a) || ip == "10.96.0.1" || ip == "10.96.0.0" || ip == "10.111.255.255" {
				t.Errorf("%s got %q", name, ip)
			}
		}
		if len(ips) != 200 {
			t.Errorf("%d distinct addresses, want 200", len(ips))
		}
	})

	t.Run("a requested address that is taken is refused", func(t *testing.T) {
		taken, err := csA.CoreV1().Services("many").Get(ctx, "s7", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ip := taken.Spec.ClusterIP
		_, err = csB.CoreV1().Services("many").Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "wants-taken"},
			Spec:       corev1.ServiceSpec{ClusterIP: ip, Ports: []corev1.ServicePort{{Port: 80}}},
		}, metav1.CreateOptions{})
		want := fmt.Sprintf(`Service "wants-taken" is invalid: spec.clusterIPs: Invalid value: ["%s"]: failed to allocate IP %s: provided IP is already allocated`, ip, ip)
		if !apierrors.IsInvalid(err) || err.Error() != want {
			t.Fatalf("got %v\nwant %s", err, want)
		}
	})

	t.Run("a deleted service's address is free again", func(t *testing.T) {
		taken, _ := csA.CoreV1().Services("many").Get(ctx, "s8", metav1.GetOptions{})
		if err := csA.CoreV1().Services("many").Delete(ctx, "s8", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := csB.CoreV1().Services("many").Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "reuses"},
			Spec:       corev1.ServiceSpec{ClusterIP: taken.Spec.ClusterIP, Ports: []corev1.ServicePort{{Port: 80}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a leaked bit written straight to etcd is repaired", func(t *testing.T) {
		key := prefix + "/ranges/serviceips"
		leak := netip.MustParseAddr("10.100.1.2")
		off := int64(addrNum(leak) - addrNum(netip.MustParseAddr("10.96.0.1")))
		setBit := func() {
			resp, err := a.Backend().Client.Get(ctx, key)
			if err != nil || len(resp.Kvs) != 1 {
				t.Fatalf("reading %s: %v", key, err)
			}
			var ra corev1.RangeAllocation
			if err := json.Unmarshal(resp.Kvs[0].Value, &ra); err != nil {
				t.Fatal(err)
			}
			bits := new(big.Int).SetBytes(ra.Data)
			bits.SetBit(bits, int(off), 1)
			ra.Data = bits.Bytes()
			raw, _ := json.Marshal(&ra)
			tx, err := a.Backend().Client.Txn(ctx).
				If(clientv3.Compare(clientv3.ModRevision(key), "=", resp.Kvs[0].ModRevision)).
				Then(clientv3.OpPut(key, string(raw))).Commit()
			if err != nil || !tx.Succeeded {
				t.Fatalf("writing the leak: %v", err)
			}
		}
		setBit()
		_, err := csA.CoreV1().Services("many").Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "leak-check"},
			Spec:       corev1.ServiceSpec{ClusterIP: leak.String(), Ports: []corev1.ServicePort{{Port: 80}}},
		}, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) {
			t.Fatalf("with the leaked bit set, a create of %s gave %v, want Invalid", leak, err)
		}
		// A leak is freed after three repair runs in a row saw it (1s apart
		// here); the bit is read straight from etcd to see it go.
		deadline := time.Now().Add(30 * time.Second)
		for {
			resp, err := a.Backend().Client.Get(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			var ra corev1.RangeAllocation
			if err := json.Unmarshal(resp.Kvs[0].Value, &ra); err != nil {
				t.Fatal(err)
			}
			if new(big.Int).SetBytes(ra.Data).Bit(int(off)) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the repair loop did not free the leaked address within 30s")
			}
			time.Sleep(200 * time.Millisecond)
		}
		if _, err := csB.CoreV1().Services("many").Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "leak-check"},
			Spec:       corev1.ServiceSpec{ClusterIP: leak.String(), Ports: []corev1.ServicePort{{Port: 80}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("the freed address: %v", err)
		}
	})

	t.Run("graceful shutdown removes the address at once", func(t *testing.T) {
		a.Stop(t)
		ep, slice := endpointIPs(t, csB)
		if !slices.Equal(ep, []string{"127.0.0.3"}) || !slices.Equal(slice, []string{"127.0.0.3"}) {
			t.Errorf("right after shutdown: endpoints %v, slice %v; want only 127.0.0.3", ep, slice)
		}
	})

	t.Run("a hard stop drops out within the lease TTL", func(t *testing.T) {
		c := replica(t, "127.0.0.2", prefix, port)
		e2eutil.Eventually(t, 10*time.Second, "the restarted replica in the endpoints", endpointsAre(t, csB, "127.0.0.2", "127.0.0.3"))
		c.Kill(t)
		// No pre-shutdown hook ran: the key goes when its lease (TTL 2s)
		// expires and B's next round (every 200ms) rewrites the endpoints.
		e2eutil.Eventually(t, 10*time.Second, "the killed replica to drop out", endpointsAre(t, csB, "127.0.0.3"))
	})
}

func addrNum(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func TestBootstrapReadyz(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	c := e2eutil.MustLoopbackClient(t, ts)
	code, body := e2eutil.Get(t, c, ts.URL()+"/readyz?verbose")
	if code != http.StatusOK {
		t.Fatalf("/readyz: %d\n%s", code, body)
	}
	e2eutil.MustContain(t, "/readyz?verbose", body,
		"[+]poststarthook/bootstrap-controller ok",
		"[+]poststarthook/namespace-controller ok",
		"[+]poststarthook/rbac/bootstrap-roles ok")
}

func TestBootstrapHooksGateReadyz(t *testing.T) {
	hook := &gateHook{gate: make(chan struct{})}
	ts := testserver.Start(t, testserver.Options{
		NoWait: true,
		Register: func(r *pipeline.Registry) {
			r.MustRegister(pipeline.Plugin{Name: "test-gate", Kind: pipeline.KindPostStartHook,
				New: func(any) (any, error) { return hook, nil }})
		},
		Configure: func(c *config.Config) {
			fastHooks(c)
			c.PostStartHooks = append(c.PostStartHooks, config.Entry{Name: "test-gate"})
		},
	})
	c := e2eutil.MustLoopbackClient(t, ts)
	cs := kubernetes.NewForConfigOrDie(ts.Config)
	want := []string{"bootstrap-controller", "namespace-controller", "apiserver-identity-lease", "rbac/bootstrap-roles"}
	e2eutil.Eventually(t, 10*time.Second, "every default hook done while test-gate holds", func() bool {
		_, body := e2eutil.Get(t, c, ts.URL()+"/readyz?verbose")
		for _, h := range want {
			if !strings.Contains(body, "[+]poststarthook/"+h+" ok") {
				return false
			}
		}
		return true
	})
	code, body := e2eutil.Get(t, c, ts.URL()+"/readyz?verbose")
	if code == http.StatusOK || !strings.Contains(body, "[-]poststarthook/test-gate failed") {
		t.Fatalf("/readyz %d with a hook still running:\n%s", code, body)
	}
	// The kubernetes Service waits for this server's own /readyz.
	if _, err := cs.CoreV1().Services("default").Get(context.Background(), "kubernetes", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("kubernetes service before /readyz passed: %v", err)
	}
	close(hook.gate)
	e2eutil.Eventually(t, 10*time.Second, "/readyz to pass", func() bool {
		code, _ := e2eutil.Get(t, c, ts.URL()+"/readyz")
		return code == http.StatusOK
	})
	e2eutil.Eventually(t, 10*time.Second, "the kubernetes service once ready", func() bool {
		_, err := cs.CoreV1().Services("default").Get(context.Background(), "kubernetes", metav1.GetOptions{})
		return err == nil
	})
}

func TestIdentityLease(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{Configure: func(c *config.Config) {
		for i, e := range c.PostStartHooks {
			if e.Name == "apiserver-identity-lease" {
				c.PostStartHooks[i].Config = map[string]any{"leaseDuration": "1h", "renewInterval": "200ms", "gcInterval": "200ms"}
			}
		}
	}})
	cs := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := context.Background()
	leases := cs.CoordinationV1().Leases("kube-system")
	sel := metav1.ListOptions{LabelSelector: "apiserver.kubernetes.io/identity=kube-apiserver"}

	list, err := leases.List(ctx, sel)
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("identity leases: %v %v", list, err)
	}
	own := list.Items[0]
	if !strings.HasPrefix(own.Name, "apiserver-") || own.Spec.HolderIdentity == nil || *own.Spec.HolderIdentity != own.Name ||
		own.Spec.LeaseDurationSeconds == nil || *own.Spec.LeaseDurationSeconds != 3600 {
		t.Errorf("own lease %+v", own)
	}
	e2eutil.Eventually(t, 10*time.Second, "the lease renewed", func() bool {
		l, err := leases.Get(ctx, own.Name, metav1.GetOptions{})
		return err == nil && l.Spec.RenewTime.After(own.Spec.RenewTime.Time)
	})

	foreign := func(name string, renewed time.Time) {
		_, err := leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"apiserver.kubernetes.io/identity": "kube-apiserver"}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To(int32(60)),
				RenewTime: &metav1.MicroTime{Time: renewed}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	foreign("apiserver-gone", time.Now().Add(-2*time.Minute))
	foreign("apiserver-alive", time.Now())
	e2eutil.Eventually(t, 10*time.Second, "the expired lease collected", func() bool {
		_, err := leases.Get(ctx, "apiserver-gone", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if _, err := leases.Get(ctx, "apiserver-alive", metav1.GetOptions{}); err != nil {
		t.Errorf("a live lease of another server was collected: %v", err)
	}
}

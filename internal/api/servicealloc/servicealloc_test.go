package servicealloc

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpipe/kpipe/internal/storage/backend"
)

func etcd(t *testing.T) *backend.Backend {
	t.Helper()
	b, err := backend.Open(context.Background(), backend.Config{DataDir: t.TempDir()}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func svc(name string, typ corev1.ServiceType, ip string, nodePorts ...int32) *corev1.Service {
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Spec: corev1.ServiceSpec{Type: typ, ClusterIP: ip}}
	if ip != "" {
		s.Spec.ClusterIPs = []string{ip}
	}
	s.Spec.Ports = []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}
	for i, np := range nodePorts {
		if i > 0 {
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Port: int32(80 + i), Protocol: corev1.ProtocolTCP})
		}
		s.Spec.Ports[i].NodePort = np
	}
	return s
}

func TestAllocator(t *testing.T) {
	b := etcd(t)
	ctx := context.Background()
	// Two allocators on one etcd stand for two replicas.
	newAt := func(prefix string) *Allocator {
		a, err := New(b.Client, prefix, netip.MustParsePrefix("10.96.0.0/16"), 30000, 30199)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	newA := func() *Allocator { return newAt("/registry") }
	a1, a2 := newA(), newA()

	t.Run("concurrent creates on two replicas get distinct addresses", func(t *testing.T) {
		var mu sync.Mutex
		seen := map[string]bool{}
		var wg sync.WaitGroup
		for i := range 100 {
			wg.Go(func() {
				a := a1
				if i%2 == 1 {
					a = a2
				}
				s := svc("s", corev1.ServiceTypeNodePort, "")
				finish, err := a.BeginCreate(ctx, s)
				if err != nil {
					t.Error(err)
					return
				}
				finish(true)
				mu.Lock()
				defer mu.Unlock()
				if seen[s.Spec.ClusterIP] || seen[fmt.Sprint(s.Spec.Ports[0].NodePort)] {
					t.Errorf("handed out twice: %s / %d", s.Spec.ClusterIP, s.Spec.Ports[0].NodePort)
				}
				if s.Spec.ClusterIP == "10.96.0.1" {
					t.Errorf("the first IP, kept for kubernetes, was handed out")
				}
				seen[s.Spec.ClusterIP] = true
				seen[fmt.Sprint(s.Spec.Ports[0].NodePort)] = true
			})
		}
		wg.Wait()
		// Drawing from a window sized by what is in use keeps the stored
		// bitmap short: 100 addresses fit in a few dozen bytes.
		bits, err := a1.ips.snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(bits.Bytes()); n > 64 {
			t.Errorf("bitmap of 100 addresses is %d bytes", n)
		}
	})

	t.Run("requested values", func(t *testing.T) {
		s := svc("first", corev1.ServiceTypeClusterIP, "10.96.0.1")
		finish, err := a1.BeginCreate(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		finish(true)
		for _, tc := range []struct {
			name, want string
			s          *corev1.Service
		}{
			{"taken IP", `spec.clusterIPs: Invalid value: ["10.96.0.1"]: failed to allocate IP 10.96.0.1: provided IP is already allocated`, svc("again", corev1.ServiceTypeClusterIP, "10.96.0.1")},
			{"IP out of range", "the provided IP (10.97.0.1) is not in the valid range. The range of valid IPs is 10.96.0.0/16", svc("far", corev1.ServiceTypeClusterIP, "10.97.0.1")},
			{"port out of range", "spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-30199", svc("low", corev1.ServiceTypeNodePort, "", 80)},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := a2.BeginCreate(ctx, tc.s)
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("got %v, want %q", err, tc.want)
				}
			})
		}
	})

	t.Run("a failed create gives its values back", func(t *testing.T) {
		a1, a2 := newAt("/quiet"), newAt("/quiet")
		s := svc("x", corev1.ServiceTypeNodePort, "10.96.255.200", 30199)
		finish, err := a1.BeginCreate(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		finish(false)
		finish, err = a2.BeginCreate(ctx, svc("y", corev1.ServiceTypeNodePort, "10.96.255.200", 30199))
		if err != nil {
			t.Fatalf("values not given back: %v", err)
		}
		finish(true)
	})

	t.Run("type change to ClusterIP releases node ports", func(t *testing.T) {
		a1, a2 := newAt("/quiet"), newAt("/quiet")
		old := svc("z", corev1.ServiceTypeNodePort, "10.96.255.201", 30198)
		finish, err := a1.BeginCreate(ctx, old)
		if err != nil {
			t.Fatal(err)
		}
		finish(true)
		upd := svc("z", corev1.ServiceTypeClusterIP, "10.96.255.201")
		finish, err = a1.BeginUpdate(ctx, upd, old)
		if err != nil {
			t.Fatal(err)
		}
		finish(true)
		finish, err = a2.BeginCreate(ctx, svc("w", corev1.ServiceTypeNodePort, "", 30198))
		if err != nil {
			t.Fatalf("node port not released: %v", err)
		}
		finish(true)
	})

	t.Run("repair frees a leak after three runs and restores a missing bit", func(t *testing.T) {
		a := newA()
		kept := *svc("kept", corev1.ServiceTypeClusterIP, "10.96.255.250")
		for run := 1; run <= 3; run++ {
			ips, _, err := a.Repair(ctx, listOf(kept))
			if err != nil {
				t.Fatal(err)
			}
			if run == 1 && ips.Restored != 1 {
				t.Errorf("run 1 restored %d, want 1", ips.Restored)
			}
			if run < 3 && ips.Freed != 0 {
				t.Errorf("run %d freed %d too early", run, ips.Freed)
			}
			if run == 3 && ips.Freed == 0 {
				t.Errorf("run 3 freed nothing")
			}
		}
		bits, err := a.ips.snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := setBits(bits); len(got) != 1 || a.ipr.addr(got[0]).String() != "10.96.255.250" {
			t.Errorf("after repair the bitmap holds %v", got)
		}
	})

	t.Run("repair reports duplicates", func(t *testing.T) {
		ips, _, err := a1.Repair(ctx, listOf(*svc("a", corev1.ServiceTypeClusterIP, "10.96.255.9"), *svc("b", corev1.ServiceTypeClusterIP, "10.96.255.9")))
		if err != nil {
			t.Fatal(err)
		}
		if len(ips.Duplicates) != 1 || ips.Duplicates[0] != "10.96.255.9: default/a, default/b" {
			t.Errorf("duplicates %v", ips.Duplicates)
		}
	})
}

func listOf(s ...corev1.Service) func() ([]corev1.Service, error) {
	return func() ([]corev1.Service, error) { return s, nil }
}

func TestRepairDoesNotUndoARacingRelease(t *testing.T) {
	b := etcd(t)
	ctx := context.Background()
	a, err := New(b.Client, "/registry", netip.MustParsePrefix("10.96.0.0/16"), 30000, 30199)
	if err != nil {
		t.Fatal(err)
	}
	s := svc("racer", corev1.ServiceTypeClusterIP, "10.96.3.3")
	finish, err := a.BeginCreate(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	finish(true)
	// The list still shows the service, but it is deleted (and its address
	// released) between the repair's snapshot and its write.
	_, _, err = a.Repair(ctx, func() ([]corev1.Service, error) {
		a.AfterDelete(ctx, s)
		return []corev1.Service{*s}, nil
	})
	if err == nil {
		t.Fatal("repair wrote over a bitmap that changed after its snapshot")
	}
	finish, err = a.BeginCreate(ctx, svc("next", corev1.ServiceTypeClusterIP, "10.96.3.3"))
	if err != nil {
		t.Fatalf("the released address was put back: %v", err)
	}
	finish(true)
}

package watche2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

// testKubectlGetWatchAndRolloutStatus covers the kubectl commands that
// read through a watch: plain `get -w` (Table rows) and `rollout status`,
// which follows a Deployment's status until the rollout is done.
func testKubectlGetWatchAndRolloutStatus(t *testing.T, ts *testserver.TestServer, cs kubernetes.Interface) {
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "kw")

	t.Run("get -w prints rows", func(t *testing.T) {
		cms := cs.CoreV1().ConfigMaps("kw")
		x, err := cms.Create(ctx, e2eutil.ConfigMap("x", nil), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		kctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		lines, wait := startKubectl(kctx, t, ts, "get", "configmaps", "-n", "kw", "-w")
		defer func() { cancel(); wait() }()
		row := func(name, data string) func(string) bool {
			return func(l string) bool {
				f := strings.Fields(l)
				return len(f) == 3 && f[0] == name && f[1] == data
			}
		}
		out := waitLine(kctx, t, lines, "the first row", row("x", "1"))
		e2eutil.MustContain(t, "get -w", out, "NAME", "DATA", "AGE")
		x.Data["k2"] = "v"
		if _, err := cms.Update(ctx, x, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitLine(kctx, t, lines, "the row after the update", row("x", "2"))
		if _, err := cms.Create(ctx, e2eutil.ConfigMap("y", nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitLine(kctx, t, lines, "a row for a new object", row("y", "1"))
	})

	t.Run("rollout status follows the status", func(t *testing.T) {
		deps := cs.AppsV1().Deployments("kw")
		d := e2eutil.WebDeployment()
		d.Spec.Replicas = ptrInt32(2)
		d, err := deps.Create(ctx, d, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		kctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		lines, wait := startKubectl(kctx, t, ts, "rollout", "status", "deployment/web", "-n", "kw")
		waitLine(kctx, t, lines, "the wait for the controller", func(l string) bool {
			return strings.Contains(l, "Waiting for deployment spec update to be observed...")
		})
		// Play the deployment controller: one replica updated, then all.
		setStatus := func(s appsv1.DeploymentStatus) {
			t.Helper()
			cur, err := deps.Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cur.Status = s
			if _, err := deps.UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		setStatus(appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1})
		waitLine(kctx, t, lines, "the progress line", func(l string) bool {
			return strings.Contains(l, `Waiting for deployment "web" rollout to finish: 1 out of 2 new replicas have been updated...`)
		})
		setStatus(appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2})
		out := waitLine(kctx, t, lines, "the end of the rollout", func(l string) bool {
			return strings.Contains(l, `deployment "web" successfully rolled out`)
		})
		for l := range lines {
			out += l + "\n"
		}
		if err := wait(); err != nil {
			t.Fatalf("kubectl rollout status: %v\n%s", err, out)
		}
	})
}

// testKubectlDeleteWaits covers kubectl's deletes that wait for the
// object to go: an unscheduled pod (gone at once, kube's grace rules), a
// scheduled pod forced with --grace-period=0 --force, and a namespace with
// 50 objects, emptied by the namespace controller.
func testKubectlDeleteWaits(t *testing.T, ts *testserver.TestServer, cs kubernetes.Interface) {
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "kdel")
	run := func(args ...string) string {
		t.Helper()
		out, err := e2eutil.Kubectl(t, ts, args...)
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	pods := cs.CoreV1().Pods("kdel")
	if _, err := pods.Create(ctx, gracePod("loose", "", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Create(ctx, gracePod("bound", "node-1", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e2eutil.MustContain(t, "delete an unscheduled pod", run("-n", "kdel", "delete", "pod", "loose"), `pod "loose" deleted`)
	out := run("-n", "kdel", "delete", "pod", "bound", "--grace-period=0", "--force")
	e2eutil.MustContain(t, "force delete", out, "Immediate deletion does not wait for confirmation", `pod "bound" force deleted`)

	for i := 0; i < 50; i++ {
		c := e2eutil.ConfigMap(fmt.Sprintf("cm-%d", i), nil)
		if _, err := cs.CoreV1().ConfigMaps("kdel").Create(ctx, c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e2eutil.MustContain(t, "delete namespace", run("delete", "namespace", "kdel"), `namespace "kdel" deleted`)
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "kdel", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace after kubectl delete returned: %v", err)
	}
}

func ptrInt32(v int32) *int32 { return &v }

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKubectlGetWatchAndRolloutStatus covers the kubectl commands that
// read through a watch: plain `get -w` (Table rows) and `rollout status`,
// which follows a Deployment's status until the rollout is done.
func TestKubectlGetWatchAndRolloutStatus(t *testing.T) {
	ts, cs := apiServer(t)
	ctx := context.Background()
	namespace(t, cs, "kw")

	t.Run("get -w prints rows", func(t *testing.T) {
		cms := cs.CoreV1().ConfigMaps("kw")
		x, err := cms.Create(ctx, cm("x", nil), metav1.CreateOptions{})
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
		mustContain(t, "get -w", out, "NAME", "DATA", "AGE")
		x.Data["k2"] = "v"
		if _, err := cms.Update(ctx, x, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitLine(kctx, t, lines, "the row after the update", row("x", "2"))
		if _, err := cms.Create(ctx, cm("y", nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitLine(kctx, t, lines, "a row for a new object", row("y", "1"))
	})

	t.Run("rollout status follows the status", func(t *testing.T) {
		deps := cs.AppsV1().Deployments("kw")
		d := webDeployment()
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

func ptrInt32(v int32) *int32 { return &v }

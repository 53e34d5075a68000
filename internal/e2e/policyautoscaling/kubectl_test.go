package policyautoscaling

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

// A Helm chart's PDB and HPA, as charts render them.
const chartYAML = `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
  namespace: pa-demo
  labels:
    app.kubernetes.io/name: web
spec:
  maxUnavailable: 1
  selector:
    matchLabels:
      app.kubernetes.io/name: web
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  namespace: pa-demo
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: web
  minReplicas: 2
  maxReplicas: 10
  metrics:
  - type: Resource
    resource:
      name: cpu
      target:
        type: Utilization
        averageUtilization: 60
  - type: Resource
    resource:
      name: memory
      target:
        type: AverageValue
        averageValue: 500Mi
`

// An HPA with nothing but its target and maximum: kube's defaults fill
// the rest.
const bareHPAYAML = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: bare
  namespace: pa-demo
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: web
  maxReplicas: 3
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 120
`

const badHPAYAML = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: bad
  namespace: pa-demo
spec:
  scaleTargetRef:
    kind: Deployment
    name: web
  minReplicas: 5
  maxReplicas: 2
`

// The kubectl workflow of PDBs and HPAs: apply, get with kube's columns
// (and in "all" for HPAs), create pdb, describe, explain, kube's 422s,
// delete.
func TestKubectlPDBAndHPA(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	dir := t.TempDir()
	write := func(name, body string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	chart, bare, bad := write("chart.yaml", chartYAML), write("bare.yaml", bareHPAYAML), write("bad.yaml", badHPAYAML)

	ns := []string{"-n", "pa-demo"}
	steps := []struct {
		args    []string
		want    []string
		wantErr bool
	}{
		{args: []string{"create", "namespace", "pa-demo"}, want: []string{"namespace/pa-demo created"}},
		{args: []string{"apply", "-f", chart}, want: []string{"poddisruptionbudget.policy/web created", "horizontalpodautoscaler.autoscaling/web created"}},
		// A PDB's selector has patch strategy "replace": kubectl always
		// sends it, and says "configured", against kube as here.
		{args: []string{"apply", "-f", chart}, want: []string{"poddisruptionbudget.policy/web configured", "horizontalpodautoscaler.autoscaling/web unchanged"}},
		{args: []string{"apply", "-f", bare}, want: []string{"horizontalpodautoscaler.autoscaling/bare created"}},
		{args: append(ns, "create", "pdb", "db", "--selector=app=db", "--min-available=50%"), want: []string{"poddisruptionbudget.policy/db created"}},
		{args: append(ns, "get", "pdb,hpa"), want: []string{
			"NAME", "MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE",
			"poddisruptionbudget.policy/db", "50%", "N/A",
			"poddisruptionbudget.policy/web", "N/A",
			"REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS",
			"horizontalpodautoscaler.autoscaling/bare", "Deployment/web", "cpu: <unknown>/80%",
			"horizontalpodautoscaler.autoscaling/web", "cpu: <unknown>/60%, memory: <unknown>/500Mi", "10",
		}},
		{args: append(ns, "get", "all"), want: []string{"horizontalpodautoscaler.autoscaling/bare", "horizontalpodautoscaler.autoscaling/web"}},
		{args: append(ns, "get", "hpa", "bare", "-o", "jsonpath={.metadata.generation} {.spec.minReplicas} {.spec.metrics[0].resource.target.averageUtilization} "+
			"{.spec.behavior.scaleUp.stabilizationWindowSeconds} {.spec.behavior.scaleUp.selectPolicy} {.spec.behavior.scaleUp.policies[0].type}/{.spec.behavior.scaleUp.policies[0].value}/{.spec.behavior.scaleUp.policies[0].periodSeconds} "+
			"{.spec.behavior.scaleDown.stabilizationWindowSeconds} {.spec.behavior.scaleDown.policies[0].type}/{.spec.behavior.scaleDown.policies[0].value}"),
			want: []string{"1 1 80 0 Max Pods/4/15 120 Percent/100"}},
		{args: append(ns, "get", "pdb", "web", "-o", "jsonpath={.metadata.generation} {.spec.maxUnavailable} [{.spec.unhealthyPodEvictionPolicy}]"), want: []string{"1 1 []"}},
		{args: append(ns, "describe", "hpa", "web"), want: []string{"Name:", "web", "Reference:", "Deployment/web", "Min replicas:", "2", "Max replicas:", "10", "resource cpu on pods", "60%"}},
		{args: append(ns, "describe", "pdb", "db"), want: []string{"Name:", "db", "Min available:", "50%", "Selector:", "app=db", "Allowed disruptions:", "0"}},
		{args: []string{"api-resources", "--api-group=policy"}, want: []string{"poddisruptionbudgets", "pdb", "policy/v1", "true", "PodDisruptionBudget"}},
		{args: []string{"api-resources", "--api-group=autoscaling"}, want: []string{"horizontalpodautoscalers", "hpa", "autoscaling/v2", "HorizontalPodAutoscaler"}},
		{args: []string{"explain", "pdb.spec"}, want: []string{"KIND:", "PodDisruptionBudget", "VERSION:", "v1", "maxUnavailable", "unhealthyPodEvictionPolicy"}},
		{args: []string{"explain", "hpa.spec.behavior"}, want: []string{"KIND:", "HorizontalPodAutoscaler", "VERSION:", "v2", "scaleDown", "scaleUp"}},
		{args: []string{"apply", "-f", bad}, wantErr: true, want: []string{
			`The HorizontalPodAutoscaler "bad" is invalid: `,
			"spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`",
			`spec.scaleTargetRef.apiVersion: Invalid value: "": apiVersion must specify API group`}},
		{args: append(ns, "create", "pdb", "both", "--selector=app=x", "--min-available=1", "--max-unavailable=1"), wantErr: true,
			want: []string{"error: min-available and max-unavailable cannot be both specified"}},
		{args: append(ns, "create", "pdb", "over", "--selector=app=x", "--min-available=150%"), wantErr: true,
			want: []string{`PodDisruptionBudget.policy "over" is invalid: spec.minAvailable: Invalid value: "150%": must not be greater than 100%`}},
		{args: append(ns, "delete", "-f", chart), want: []string{`poddisruptionbudget.policy "web" deleted`, `horizontalpodautoscaler.autoscaling "web" deleted`}},
		{args: append(ns, "delete", "pdb", "db"), want: []string{`poddisruptionbudget.policy "db" deleted`}},
		{args: append(ns, "get", "pdb,hpa", "-o", "name"), want: []string{"horizontalpodautoscaler.autoscaling/bare"}},
	}
	for _, s := range steps {
		out, err := e2eutil.Kubectl(t, ts, s.args...)
		if (err != nil) != s.wantErr {
			t.Fatalf("kubectl %s: err=%v (want error: %v)\n%s", strings.Join(s.args, " "), err, s.wantErr, out)
		}
		e2eutil.MustContain(t, "kubectl "+strings.Join(s.args, " "), out, s.want...)
	}
	out, _ := e2eutil.Kubectl(t, ts, append(ns, "get", "pdb,hpa", "-o", "name")...)
	if strings.Contains(out, "/web\n") || strings.Contains(out, "/db\n") {
		t.Errorf("deleted objects are still listed:\n%s", out)
	}
}

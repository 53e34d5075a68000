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
	steps := []e2eutil.KubectlStep{
		{Args: []string{"create", "namespace", "pa-demo"}, Want: []string{"namespace/pa-demo created"}},
		{Args: []string{"apply", "-f", chart}, Want: []string{"poddisruptionbudget.policy/web created", "horizontalpodautoscaler.autoscaling/web created"}},
		// A PDB's selector has patch strategy "replace": kubectl always
		// sends it, and says "configured", against kube as here.
		{Args: []string{"apply", "-f", chart}, Want: []string{"poddisruptionbudget.policy/web configured", "horizontalpodautoscaler.autoscaling/web unchanged"}},
		{Args: []string{"apply", "-f", bare}, Want: []string{"horizontalpodautoscaler.autoscaling/bare created"}},
		{Args: append(ns, "create", "pdb", "db", "--selector=app=db", "--min-available=50%"), Want: []string{"poddisruptionbudget.policy/db created"}},
		{Args: append(ns, "get", "pdb,hpa"), Want: []string{
			"NAME", "MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE",
			"poddisruptionbudget.policy/db", "50%", "N/A",
			"poddisruptionbudget.policy/web", "N/A",
			"REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS",
			"horizontalpodautoscaler.autoscaling/bare", "Deployment/web", "cpu: <unknown>/80%",
			"horizontalpodautoscaler.autoscaling/web", "cpu: <unknown>/60%, memory: <unknown>/500Mi", "10",
		}},
		{Args: append(ns, "get", "all"), Want: []string{"horizontalpodautoscaler.autoscaling/bare", "horizontalpodautoscaler.autoscaling/web"}},
		{Args: append(ns, "get", "hpa", "bare", "-o", "jsonpath={.metadata.generation} {.spec.minReplicas} {.spec.metrics[0].resource.target.averageUtilization} "+
			"{.spec.behavior.scaleUp.stabilizationWindowSeconds} {.spec.behavior.scaleUp.selectPolicy} {.spec.behavior.scaleUp.policies[0].type}/{.spec.behavior.scaleUp.policies[0].value}/{.spec.behavior.scaleUp.policies[0].periodSeconds} "+
			"{.spec.behavior.scaleDown.stabilizationWindowSeconds} {.spec.behavior.scaleDown.policies[0].type}/{.spec.behavior.scaleDown.policies[0].value}"),
			Want: []string{"1 1 80 0 Max Pods/4/15 120 Percent/100"}},
		{Args: append(ns, "get", "pdb", "web", "-o", "jsonpath={.metadata.generation} {.spec.maxUnavailable} [{.spec.unhealthyPodEvictionPolicy}]"), Want: []string{"1 1 []"}},
		{Args: append(ns, "describe", "hpa", "web"), Want: []string{"Name:", "web", "Reference:", "Deployment/web", "Min replicas:", "2", "Max replicas:", "10", "resource cpu on pods", "60%"}},
		{Args: append(ns, "describe", "pdb", "db"), Want: []string{"Name:", "db", "Min available:", "50%", "Selector:", "app=db", "Allowed disruptions:", "0"}},
		{Args: []string{"api-resources", "--api-group=policy"}, Want: []string{"poddisruptionbudgets", "pdb", "policy/v1", "true", "PodDisruptionBudget"}},
		{Args: []string{"api-resources", "--api-group=autoscaling"}, Want: []string{"horizontalpodautoscalers", "hpa", "autoscaling/v2", "HorizontalPodAutoscaler"}},
		{Args: []string{"explain", "pdb.spec"}, Want: []string{"KIND:", "PodDisruptionBudget", "VERSION:", "v1", "maxUnavailable", "unhealthyPodEvictionPolicy"}},
		{Args: []string{"explain", "hpa.spec.behavior"}, Want: []string{"KIND:", "HorizontalPodAutoscaler", "VERSION:", "v2", "scaleDown", "scaleUp"}},
		{Args: []string{"apply", "-f", bad}, WantErr: true, Want: []string{
			`The HorizontalPodAutoscaler "bad" is invalid: `,
			"spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`",
			`spec.scaleTargetRef.apiVersion: Invalid value: "": apiVersion must specify API group`}},
		{Args: append(ns, "create", "pdb", "both", "--selector=app=x", "--min-available=1", "--max-unavailable=1"), WantErr: true,
			Want: []string{"error: min-available and max-unavailable cannot be both specified"}},
		{Args: append(ns, "create", "pdb", "over", "--selector=app=x", "--min-available=150%"), WantErr: true,
			Want: []string{`PodDisruptionBudget.policy "over" is invalid: spec.minAvailable: Invalid value: "150%": must not be greater than 100%`}},
		{Args: append(ns, "delete", "-f", chart), Want: []string{`poddisruptionbudget.policy "web" deleted`, `horizontalpodautoscaler.autoscaling "web" deleted`}},
		{Args: append(ns, "delete", "pdb", "db"), Want: []string{`poddisruptionbudget.policy "db" deleted`}},
		{Args: append(ns, "get", "pdb,hpa", "-o", "name"), Want: []string{"horizontalpodautoscaler.autoscaling/bare"}},
	}
	e2eutil.KubectlSteps(t, ts, steps)
	out, _ := e2eutil.Kubectl(t, ts, append(ns, "get", "pdb,hpa", "-o", "name")...)
	if strings.Contains(out, "/web\n") || strings.Contains(out, "/db\n") {
		t.Errorf("deleted objects are still listed:\n%s", out)
	}
}

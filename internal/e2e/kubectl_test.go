package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

const deploymentYAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports:
        - containerPort: 80
`

const serviceYAML = `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: demo
spec:
  selector: {app: web}
  ports:
  - port: 80
`

// The kubectl workflow of the resource API issue, with default flags:
// client-side validation on, tables, yaml, apply twice, delete.
func TestKubectlWorkflow(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	dir := t.TempDir()
	dep := filepath.Join(dir, "deployment.yaml")
	svc := filepath.Join(dir, "service.yaml")
	os.WriteFile(dep, []byte(deploymentYAML), 0o600)
	os.WriteFile(svc, []byte(serviceYAML), 0o600)

	steps := []struct {
		args []string
		want []string
	}{
		{[]string{"create", "namespace", "demo"}, []string{"namespace/demo created"}},
		{[]string{"apply", "-f", dep}, []string{"deployment.apps/web created"}},
		{[]string{"apply", "-f", dep}, []string{"deployment.apps/web unchanged"}},
		{[]string{"create", "-f", svc}, []string{"service/web created"}},
		{[]string{"-n", "demo", "create", "configmap", "settings", "--from-literal=mode=fast"}, []string{"configmap/settings created"}},
		{[]string{"-n", "demo", "create", "secret", "generic", "creds", "--from-literal=password=hunter2"}, []string{"secret/creds created"}},
		{[]string{"-n", "demo", "get", "deployments"}, []string{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "web", "0/2"}},
		{[]string{"-n", "demo", "get", "services"}, []string{"NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "web", "ClusterIP", "80/TCP"}},
		{[]string{"-n", "demo", "get", "cm,secrets"}, []string{"configmap/settings", "secret/creds", "Opaque"}},
		{[]string{"-n", "demo", "get", "deployment", "web", "-o", "yaml"}, []string{"kind: Deployment", "generation: 1", "revisionHistoryLimit: 10", "progressDeadlineSeconds: 600", "maxSurge: 25%", "imagePullPolicy: IfNotPresent", "kubectl.kubernetes.io/last-applied-configuration"}},
		{[]string{"get", "namespaces"}, []string{"NAME", "STATUS", "demo", "Active"}},
		{[]string{"-n", "demo", "get", "all"}, []string{"deployment.apps/web", "service/web"}},
		{[]string{"api-resources"}, []string{"deployments", "deploy", "apps/v1", "configmaps", "cm"}},
		{[]string{"explain", "deployment.spec.replicas"}, []string{"KIND:", "Deployment", "FIELD: replicas <integer>", "DESCRIPTION:"}},
		{[]string{"-n", "demo", "run", "box", "--image=busybox", "--restart=Never"}, []string{"pod/box created"}},
		{[]string{"-n", "demo", "get", "pods"}, []string{"NAME", "READY", "STATUS", "RESTARTS", "AGE", "box", "0/1", "Pending"}},
		{[]string{"-n", "demo", "get", "pods", "-o", "wide"}, []string{"IP", "NODE", "NOMINATED NODE", "READINESS GATES"}},
		{[]string{"-n", "demo", "delete", "configmap", "settings"}, []string{`configmap "settings" deleted`}},
		{[]string{"-n", "demo", "delete", "-f", dep}, []string{`deployment.apps "web" deleted`}},
	}
	for _, s := range steps {
		out, err := e2eutil.Kubectl(t, ts, s.args...)
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(s.args, " "), err, out)
		}
		e2eutil.MustContain(t, "kubectl "+strings.Join(s.args, " "), out, s.want...)
	}
	out, err := e2eutil.Kubectl(t, ts, "-n", "demo", "get", "configmap", "settings")
	if err == nil || !strings.Contains(out, `Error from server (NotFound): configmaps "settings" not found`) {
		t.Errorf("get after delete: %v\n%s", err, out)
	}
}

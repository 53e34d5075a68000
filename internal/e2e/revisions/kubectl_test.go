package revisions

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

// A revision as the StatefulSet controller writes one, and a pod template.
const manifestYAML = `apiVersion: apps/v1
kind: ControllerRevision
metadata:
  name: web-6b9c8d7f5
  namespace: rev-demo
  labels:
    app: web
  ownerReferences:
  - apiVersion: apps/v1
    kind: StatefulSet
    name: web
    uid: 0d9e3c54-7c1f-4a9e-9a52-0f6c2f2b1a11
    controller: true
data:
  spec:
    template:
      metadata:
        labels:
          app: web
      spec:
        containers:
        - name: nginx
          image: nginx:1.27
revision: 1
---
apiVersion: v1
kind: PodTemplate
metadata:
  name: web
  namespace: rev-demo
template:
  metadata:
    labels:
      app: web
  spec:
    containers:
    - name: nginx
      image: nginx:1.27
    - name: exporter
      image: nginx/exporter:1.4
`

// The same revision with other data: kube's immutable-data 422.
const changedYAML = `apiVersion: apps/v1
kind: ControllerRevision
metadata:
  name: web-6b9c8d7f5
  namespace: rev-demo
data:
  spec:
    replicas: 3
revision: 1
`

// A second revision, applied server-side.
const ssaYAML = `apiVersion: apps/v1
kind: ControllerRevision
metadata:
  name: web-2
  namespace: rev-demo
data:
  spec:
    template:
      spec:
        containers:
        - name: nginx
          image: nginx:1.28
revision: 2
`

// The kubectl workflow: apply, get with kube's columns, describe (kubectl
// has its own describer for neither kind, so prints the object),
// explain, api-resources, a 422, delete.
func TestKubectlRevisionsAndPodTemplates(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	dir := t.TempDir()
	write := func(name, body string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	manifest, changed, ssa := write("manifest.yaml", manifestYAML), write("changed.yaml", changedYAML), write("ssa.yaml", ssaYAML)

	ns := []string{"-n", "rev-demo"}
	steps := []e2eutil.KubectlStep{
		{Args: []string{"create", "namespace", "rev-demo"}, Want: []string{"namespace/rev-demo created"}},
		{Args: []string{"apply", "-f", manifest}, Want: []string{"controllerrevision.apps/web-6b9c8d7f5 created", "podtemplate/web created"}},
		{Args: []string{"apply", "-f", manifest}, Want: []string{"controllerrevision.apps/web-6b9c8d7f5 unchanged", "podtemplate/web unchanged"}},
		{Args: append(ns, "get", "controllerrevisions"), Want: []string{"NAME", "CONTROLLER", "REVISION", "AGE", "web-6b9c8d7f5", "statefulset.apps/web", "1"}},
		{Args: append(ns, "get", "podtemplates"), Want: []string{"NAME", "CONTAINERS", "IMAGES", "POD LABELS", "web", "nginx,exporter", "nginx:1.27,nginx/exporter:1.4", "app=web"}},
		{Args: append(ns, "get", "podtemplate", "web", "-o", "jsonpath={.metadata.generation} {.template.spec.restartPolicy} {.template.spec.containers[0].imagePullPolicy}"),
			Want: []string{"1 Always IfNotPresent"}},
		{Args: append(ns, "get", "controllerrevision", "web-6b9c8d7f5", "-o", "jsonpath={.data.spec.template.spec.containers[0].image}"), Want: []string{"nginx:1.27"}},
		{Args: append(ns, "get", "controllerrevision", "web-6b9c8d7f5", "-o", "yaml"), Want: []string{"kind: ControllerRevision", "revision: 1", "image: nginx:1.27"}},
		{Args: append(ns, "describe", "controllerrevision", "web-6b9c8d7f5"), Want: []string{"Name:", "web-6b9c8d7f5", "Namespace:", "rev-demo", "Revision:", "1"}},
		{Args: append(ns, "describe", "podtemplate", "web"), Want: []string{"Name:", "web", "Kind:", "PodTemplate", "Template:", "Image:", "nginx:1.27"}},
		{Args: []string{"api-resources", "--api-group=apps"}, Want: []string{"controllerrevisions", "apps/v1", "ControllerRevision"}},
		{Args: []string{"api-resources", "--api-group="}, Want: []string{"podtemplates", "PodTemplate"}},
		{Args: []string{"explain", "controllerrevision.data"}, Want: []string{"GROUP:", "apps", "KIND:", "ControllerRevision", "VERSION:", "v1", "FIELD: data <RawExtension>", "Data is the serialized representation of the state."}},
		{Args: []string{"explain", "podtemplate.template.spec.containers.image"}, Want: []string{"KIND:", "PodTemplate", "VERSION:", "v1", "FIELD: image"}},
		// Client-side apply cannot diff inside data (kubectl finds no
		// fields in a RawExtension, against kube too), so replace it.
		{Args: []string{"replace", "-f", changed}, WantErr: true, Want: []string{
			`The ControllerRevision "web-6b9c8d7f5" is invalid: data: Invalid value: {"spec":{"replicas":3}}: field is immutable`}},
		{Args: []string{"apply", "--server-side", "-f", ssa}, Want: []string{"controllerrevision.apps/web-2 serverside-applied"}},
		{Args: []string{"apply", "--server-side", "-f", ssa}, Want: []string{"controllerrevision.apps/web-2 serverside-applied"}},
		{Args: append(ns, "get", "controllerrevision", "web-2", "-o", "jsonpath={.revision} {.data.spec.template.spec.containers[0].image}"), Want: []string{"2 nginx:1.28"}},
		{Args: append(ns, "delete", "controllerrevision", "web-2"), Want: []string{`controllerrevision.apps "web-2" deleted`}},
		{Args: append(ns, "delete", "-f", manifest), Want: []string{`controllerrevision.apps "web-6b9c8d7f5" deleted`, `podtemplate "web" deleted`}},
		{Args: append(ns, "get", "controllerrevisions,podtemplates"), Want: []string{"No resources found in rev-demo namespace."}},
	}
	e2eutil.KubectlSteps(t, ts, steps)
}

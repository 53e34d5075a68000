package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/testserver"
)

// What kube-apiserver stores for a manifest, pinned by the golden files of
// internal/api/defaults (written by hand from kube's defaulting rules),
// must be what kpipe stores when the manifest goes through the whole
// server. The goldens pin defaulting alone, so the admission plugins that
// change pods (ServiceAccount, DefaultTolerationSeconds, Priority...) are
// off here; accesse2e/admission_builtin_test.go covers them.
func TestStoredDefaultsMatchKube(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{Configure: func(c *config.Config) {
		for i, e := range c.Pipeline {
			if e.Name == "mutating-admission" || e.Name == "validating-admission" {
				c.Pipeline[i].Config = map[string]any{"plugins": []any{}}
			}
		}
	}})
	c := ts.HTTPClient(t)
	paths := map[string]string{
		"Pod": "/api/v1/namespaces/NS/pods", "Service": "/api/v1/namespaces/NS/services",
		"ConfigMap": "/api/v1/namespaces/NS/configmaps", "Secret": "/api/v1/namespaces/NS/secrets",
		"Deployment": "/apis/apps/v1/namespaces/NS/deployments", "StatefulSet": "/apis/apps/v1/namespaces/NS/statefulsets",
		"DaemonSet": "/apis/apps/v1/namespaces/NS/daemonsets", "Endpoints": "/api/v1/namespaces/NS/endpoints",
		"ValidatingWebhookConfiguration": "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
		"MutatingWebhookConfiguration":   "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
		"RoleBinding":                    "/apis/rbac.authorization.k8s.io/v1/namespaces/NS/rolebindings",
		"NetworkPolicy":                  "/apis/networking.k8s.io/v1/namespaces/NS/networkpolicies",
		"IngressClass":                   "/apis/networking.k8s.io/v1/ingressclasses",
	}
	inputs, _ := filepath.Glob("../api/defaults/testdata/*.input.yaml")
	tested := 0
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".input.yaml")
		raw, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := yaml.Unmarshal(raw, &obj); err != nil {
			t.Fatal(err)
		}
		path, ok := paths[obj["kind"].(string)]
		if !ok {
			continue
		}
		tested++
		meta := obj["metadata"].(map[string]any)
		ns, _ := meta["namespace"].(string)
		path = strings.Replace(path, "NS", ns, 1)
		t.Run(name, func(t *testing.T) {
			// Manifests share names; each is removed after its check.
			defer func() {
				req, _ := http.NewRequest("DELETE", ts.URL()+path+"/"+meta["name"].(string), nil)
				if resp, err := c.Do(req); err == nil {
					resp.Body.Close()
				}
			}()
			body, _ := json.Marshal(obj)
			req, _ := http.NewRequest("POST", ts.URL()+path, strings.NewReader(string(body)))
			req.Header.Set("Content-Type", "application/json")
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got := readAll(resp)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("create: %d %s", resp.StatusCode, got)
			}
			goldenRaw, err := os.ReadFile(strings.Replace(in, ".input.", ".golden.", 1))
			if err != nil {
				t.Fatal(err)
			}
			var golden, stored map[string]any
			if err := yaml.Unmarshal(goldenRaw, &golden); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(got), &stored); err != nil {
				t.Fatal(err)
			}
			strip(golden)
			strip(stored)
			if !reflect.DeepEqual(golden, stored) {
				t.Errorf("stored object differs from kube's (-kube +kpipe):\n%s", cmp.Diff(golden, stored))
			}
		})
	}
	if tested < 8 {
		t.Fatalf("only %d golden manifests exercised", tested)
	}
}

// strip removes what the server sets per object (identity, time, status)
// and what a golden file cannot know.
func strip(obj map[string]any) {
	delete(obj, "status")
	if m, ok := obj["metadata"].(map[string]any); ok {
		for _, k := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"} {
			delete(m, k)
		}
	}
	// A Service's cluster IP and node ports are drawn from the ranges.
	if obj["kind"] == "Service" {
		spec, _ := obj["spec"].(map[string]any)
		if ip, _ := spec["clusterIP"].(string); ip != "None" {
			delete(spec, "clusterIP")
			delete(spec, "clusterIPs")
		}
		delete(spec, "healthCheckNodePort")
		ports, _ := spec["ports"].([]any)
		for _, p := range ports {
			delete(p.(map[string]any), "nodePort")
		}
	}
}

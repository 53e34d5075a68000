package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/testserver"
)

// reloadPolicy is an inline policy refusing configmaps with more than max
// keys, except those labelled example.com/exempt (a dotted label key, which
// must survive the config loader).
func reloadPolicy(t *testing.T, max int) map[string]any {
	var m map[string]any
	if err := yaml.Unmarshal([]byte(fmt.Sprintf(`
policies:
- apiVersion: admissionregistration.k8s.io/v1
  kind: ValidatingAdmissionPolicy
  metadata: {name: max-keys}
  spec:
    matchConstraints:
      resourceRules:
      - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
      objectSelector:
        matchExpressions:
        - {key: example.com/exempt, operator: DoesNotExist}
    validations:
    - expression: "size(object.data) <= %d"
      messageExpression: "'at most %d keys'"
bindings:
- metadata: {name: max-keys}
  spec: {policyName: max-keys, validationActions: [Deny]}
`, max, max)), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// An inline policy changed in the file applies after the reload, within
// seconds, without a restart.
func TestInlinePolicyReload(t *testing.T) {
	file := filepath.Join(t.TempDir(), "apiserver.yaml")
	var ts *testserver.TestServer
	withPolicy := func(pipeline []config.Entry, max int) []config.Entry {
		p := append([]config.Entry(nil), pipeline...)
		for i := range p {
			if p[i].Name == "validating-admission" {
				p[i].Config = map[string]any{"plugins": []any{
					map[string]any{"name": "NamespaceLifecycle"},
					map[string]any{"name": "ValidatingAdmissionPolicy", "config": reloadPolicy(t, max)},
				}}
			}
		}
		return p
	}
	write := func(pipeline []config.Entry, max int) {
		t.Helper()
		p := withPolicy(pipeline, max)
		cfg := *config.Default()
		if ts != nil {
			cfg = *ts.Settings()
		}
		cfg.Pipeline = p
		m := config.ToMap(&cfg).(map[string]any)
		if ts == nil {
			m = map[string]any{"pipeline": m["pipeline"]}
		}
		b, err := yaml.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file+".tmp", b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(file+".tmp", file); err != nil {
			t.Fatal(err)
		}
	}
	ts = testserver.Start(t, testserver.Options{
		Configure: func(c *config.Config) {
			c.Pipeline = withPolicy(c.Pipeline, 1)
			write(c.Pipeline, 1)
		},
		ConfigFile: file,
		Reload:     func() (*config.Loaded, error) { return config.Load(config.Options{File: file, Environ: []string{}}) },
	})
	write(ts.Settings().Pipeline, 1)
	cs := kubernetes.NewForConfigOrDie(ts.Config)
	cms := cs.CoreV1().ConfigMaps("default")
	cm := func(exempt bool) *corev1.ConfigMap {
		c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"a": "1", "b": "2"}}
		if exempt {
			c.Labels = map[string]string{"example.com/exempt": "yes"}
		}
		return c
	}
	// The policy loaded from the file refuses two keys, not exempt ones.
	_, err := cms.Create(ctx, cm(false), dryRun)
	expectStatus(t, err, 422, metav1.StatusReasonInvalid, `configmaps "cm" is forbidden: ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys' denied request: at most 1 keys`)
	if _, err := cms.Create(ctx, cm(true), dryRun); err != nil {
		t.Fatalf("exempt configmap: %v", err)
	}
	write(ts.Settings().Pipeline, 2)
	start := time.Now()
	for {
		if _, err := cms.Create(ctx, cm(false), dryRun); err == nil {
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatal("the reloaded policy did not apply within 5s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("reloaded policy applied after %v", time.Since(start))
}

package e2e

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
)

// The checks on list options, Content-Types and YAML aliases (the
// TestHostileRequests rows) let ordinary requests through: YAML with
// anchors, an apply with them, and media types kube accepts.
func TestRequestInputChecksLetOrdinaryRequestsThrough(t *testing.T) {
	ts, cs := e2eutil.APIServer(t)
	ctx := context.Background()
	const ns = "inputchecks"
	e2eutil.Namespace(t, cs, ns)
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "target"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := ts.HTTPClient(t)
	base := ts.URL() + "/api/v1/namespaces/" + ns + "/configmaps"

	cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"made"}}`
	// Ordinary YAML with anchors, and an apply with them, still work, as
	// does a patch Content-Type with stray semicolons, which kube cuts at
	// the first one.
	for _, tc := range []struct {
		name, method, path, contentType, body string
		code                                  int
	}{
		{"create YAML with anchors", "POST", "", "application/yaml",
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: anchored\n  labels: &l {app: web}\n  annotations: *l\ndata:\n  a: &v hello\n  b: *v\n", 201},
		{"apply with anchors", "PATCH", "/applied?fieldManager=t", "application/apply-patch+yaml",
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  a: &v hello\n  b: *v\n", 201},
		{"merge patch with semicolons", "PATCH", "/target", "application/merge-patch+json;;;", `{"data":{"m":"n"}}`, 200},
		{"create JSON in capitals with a charset", "POST", "", "Application/JSON; charset=utf-8", cm, 201},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", tc.contentType)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.code {
				t.Fatalf("got %d %.300s, want %d", resp.StatusCode, raw, tc.code)
			}
		})
	}
	got, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "anchored", metav1.GetOptions{})
	if err != nil || got.Labels["app"] != "web" || got.Annotations["app"] != "web" || got.Data["b"] != "hello" {
		t.Errorf("anchored: %+v, %v", got, err)
	}
}

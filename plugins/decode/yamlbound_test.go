package decode

import (
	"fmt"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/yaml"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/request"
)

const tooLargeYAML = "Request entity too large: limit is 3145728 for the YAML body with its aliases expanded"

// aliasedString is a ConfigMap whose one value of size bytes is aliased
// by n more keys: about size*(n+1) bytes as JSON.
func aliasedString(size, n int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  k0: &s " + strings.Repeat("x", size) + "\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  k%d: *s\n", i)
	}
	return b.String()
}

// laughs is the billion laughs in YAML: a 1 KiB string, then levels of
// ten aliases of the level before, 1 KiB * 10^levels expanded.
func laughs(levels int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nbomb:\n  l0: &l0 " + strings.Repeat("x", 1024) + "\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "  l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", i-1), 10), ","))
	}
	return b.String()
}

// TestYAMLBodyBound: a create or update body in YAML whose aliases expand
// past the body limit is a 413 naming the limit; ordinary YAML, anchors
// and all, still decodes.
func TestYAMLBodyBound(t *testing.T) {
	cases := []struct {
		name, contentType, body string
		tooLarge                bool
	}{
		{name: "ordinary YAML with anchors", contentType: "application/yaml",
			body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: &l {app: web}\n  annotations: *l\ndata:\n  a: &v hello\n  b: *v\n"},
		{name: "aliases within the limit", contentType: "application/yaml", body: aliasedString(100<<10, 20)},
		{name: "a string aliased past the limit", contentType: "application/yaml", body: aliasedString(40<<10, 100), tooLarge: true},
		{name: "nested aliases past the limit", contentType: "application/yaml", body: laughs(4), tooLarge: true},
		{name: "escapes count", contentType: "application/yaml", body: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  k0: &s \"" + strings.Repeat("<", 100<<10) + "\"\n" + "  k1: *s\n  k2: *s\n  k3: *s\n  k4: *s\n  k5: *s\n", tooLarge: true},
		{name: "JSON is not YAML's to bound", contentType: "application/json", body: laughs(4)},
	}
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/api/v1/namespaces/default/configmaps", nil)
			r.Header.Set("Content-Type", tc.contentType)
			obj, _, err := decodeBody(r, []byte(tc.body), defaultMaxBody, gvk, &corev1.ConfigMap{}, "")
			if tc.tooLarge {
				if !apierrors.IsRequestEntityTooLargeError(err) || err.Error() != tooLargeYAML {
					t.Fatalf("got %v, want %q", err, tooLargeYAML)
				}
				return
			}
			if apierrors.IsRequestEntityTooLargeError(err) {
				t.Fatalf("refused: %v", err)
			}
			if tc.contentType == "application/yaml" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if cm := obj.(*corev1.ConfigMap); cm.Name != "a" {
					t.Errorf("decoded %+v", cm)
				}
			}
		})
	}
}

// TestYAMLBoundDoesNotExpand: the bound counts a bomb without expanding
// it: 1 KiB aliased ten times over seven levels (10 GiB) is refused in a
// few kilobytes of allocation.
func TestYAMLBoundDoesNotExpand(t *testing.T) {
	body := []byte(laughs(7))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	err := boundYAML("application/yaml", body, defaultMaxBody)
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	if !apierrors.IsRequestEntityTooLargeError(err) {
		t.Fatalf("got %v, want a 413", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("allocated %d bytes for a %d-byte body", grew, len(body))
	}
	t.Logf("%d-byte body refused in %v", len(body), took)
}

// TestApplyPatchBound: an apply patch whose aliases expand past the limit
// is refused before anything converts it.
func TestApplyPatchBound(t *testing.T) {
	reg := api.NewRegistry(api.Resources(api.Options{}))
	cms, ok := reg.Lookup("", "v1", "configmaps")
	if !ok {
		t.Fatal("no configmaps resource")
	}
	d := newDecoder(defaultConfig())
	for _, tc := range []struct{ name, body string }{
		{"a string aliased past the limit", aliasedString(40<<10, 100)},
		{"nested aliases", laughs(6)},
		{"flow style that looks like JSON", `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"a": &s "` +
			strings.Repeat("y", 1<<20) + `", "b": *s, "c": *s, "d": *s}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("PATCH", "/api/v1/namespaces/default/configmaps/a?fieldManager=test", strings.NewReader(tc.body))
			r.Header.Set("Content-Type", "application/apply-patch+yaml")
			info := &request.RequestInfo{IsResourceRequest: true, Verb: "patch", APIVersion: "v1", Resource: "configmaps", Namespace: "default", Name: "a"}
			_, err := d.patch(r, info, cms, []byte(tc.body))
			if !apierrors.IsRequestEntityTooLargeError(err) || err.Error() != tooLargeYAML {
				t.Fatalf("got %v, want %q", err, tooLargeYAML)
			}
		})
	}
}

// TestYAMLJSONSize: the count is at least the converted JSON for
// strings, and the same node counts once however often it is aliased.
func TestYAMLJSONSize(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"aliased string", "a: &x hello\nb: *x\nc: [*x, *x]\n"},
		{"aliased mapping", "base: &b {k: v, \"q\": \"<&>\"}\nm: *b\nn: {<<: *b, extra: 1}\n"},
		{"escapes", "a: &x \"\\t\\n\\\"\\\\\\x01\\u2028é\"\nb: *x\n"},
		{"binary", "a: &x !!binary /////w==\nb: *x\n"},
		{"nested", laughs(2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			js, err := yaml.YAMLToJSON([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			n, ok := yamlJSONSize([]byte(tc.body), defaultMaxBody)
			if !ok || n < int64(len(js)) {
				t.Errorf("counted %d (%v), converts to %d bytes: %s", n, ok, len(js), js)
			}
		})
	}
	for _, tc := range []struct{ name, body string }{
		{"no alias", "a: b\n"},
		{"JSON", `{"a":"*"}`},
		{"unknown anchor", "a: *nope\n"},
		{"not YAML", "a: [\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if n, ok := yamlJSONSize([]byte(tc.body), defaultMaxBody); ok {
				t.Errorf("counted %d, want it left to the converter", n)
			}
		})
	}
	t.Run("anchor inside itself", func(t *testing.T) {
		if n, ok := yamlJSONSize([]byte("a: &x [1, *x]\n"), defaultMaxBody); ok && n > 100 {
			t.Errorf("counted %d", n)
		}
	})
}

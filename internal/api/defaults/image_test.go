package defaults

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Image references come straight from clients, so the parser must cope
// with anything.
func FuzzParseImage(f *testing.F) {
	for _, s := range []string{
		"", "nginx", "nginx:1.25", "nginx:latest", "nginx@sha256:" + digest64,
		"localhost:5000/a/b:c", "[::1]:5000/app", "index.docker.io/x", "NGINX", digest64,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, image string) {
		tag, digest, ok := parseImage(image)
		if !ok {
			if tag != "" || digest != "" {
				t.Fatalf("parseImage(%q) failed but returned tag %q, digest %q", image, tag, digest)
			}
			if p := pullPolicyFor(image); p != corev1.PullIfNotPresent {
				t.Fatalf("unparsable %q got %q, want IfNotPresent", image, p)
			}
			return
		}
		if tag != "" && !strings.Contains(image, ":"+tag) {
			t.Fatalf("parseImage(%q): tag %q not in the reference", image, tag)
		}
		if digest != "" && !strings.HasSuffix(image, "@"+digest) {
			t.Fatalf("parseImage(%q): digest %q does not end the reference", image, digest)
		}
		// Appending a version tag to a bare name never asks for Always.
		if tag == "" && digest == "" {
			if p := pullPolicyFor(image + ":v1"); p != corev1.PullIfNotPresent {
				t.Fatalf("%q:v1 got %q, want IfNotPresent", image, p)
			}
		}
	})
}

package decode

import (
	"testing"

	"sigs.k8s.io/yaml"
)

// FuzzYAMLBound feeds YAML to the expansion count: no panic, and whatever
// it lets through converts (with sigs.k8s.io/yaml, as the decoders do) to
// no more than a small factor of its count (numbers and timestamps may
// print a few times longer than their text). What it does not count (no
// alias, JSON, what its parser cannot read) converts to about its own
// size, so no expansion slips past it.
func FuzzYAMLBound(f *testing.F) {
	for _, seed := range []string{
		"a: &x hello\nb: *x\n",
		"base: &b {k: v}\nm: {<<: *b, n: 1}\n",
		"a: &x [1, 2, 3]\nb: [*x, *x, *x]\n",
		"a: &x !!binary /////w==\nb: *x\n",
		"a: &x 1e20\nb: [*x, *x]\n",
		"a: &x 2001-12-14\nb: *x\n",
		"a: &x\nb: *x\n",
		"a: &x [1, *x]\n",
		"--- &d\na: 1\n--- *d\n",
		`{"a": &x "<>", "b": *x}`,
		laughs(2),
	} {
		f.Add(seed)
	}
	const limit = 1 << 16
	f.Fuzz(func(t *testing.T, body string) {
		n, ok := yamlJSONSize([]byte(body), limit)
		if ok && n > limit {
			return
		}
		js, err := yaml.YAMLToJSON([]byte(body))
		if err != nil {
			return
		}
		if !ok {
			// Not counted: no alias, JSON, or what the tree parser could
			// not read. None of it may expand.
			if len(js) > 6*len(body)+16 {
				t.Fatalf("converts to %d bytes but was not counted: %q", len(js), body)
			}
			return
		}
		if int64(len(js)) > 4*n+16 {
			t.Fatalf("counted %d, converts to %d bytes: %q -> %s", n, len(js), body, js)
		}
	})
}

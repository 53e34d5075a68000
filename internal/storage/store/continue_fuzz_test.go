package store

import (
	"strings"
	"testing"
)

// FuzzContinueToken feeds arbitrary continue tokens to the decoder: no
// panic, an accepted token never resumes outside the listed prefix, and an
// accepted token's key and revision survive encoding again.
func FuzzContinueToken(f *testing.F) {
	const prefix = "/registry/configmaps/default/"
	good, err := encodeContinue(prefix+"b", prefix, 7)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{good, "", "%%%", "bm9wZQ", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NSwic3RhcnQiOiIuLi9zZWNyZXRzL3gifQ",
		"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0IjoiYSJ9", "eyJ2IjoieC92OSIsInJ2Ijo1LCJzdGFydCI6ImEifQ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, token string) {
		key, rev, err := decodeContinue(token, prefix)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "continue key is not valid") {
				t.Fatalf("error %q is not kube's continue error", err)
			}
			return
		}
		if !strings.HasPrefix(key, prefix) || strings.Contains(key, "//") {
			t.Fatalf("token %q resumes at %q, outside %q", token, key, prefix)
		}
		// A segment may start with dots ("..x" is a name); only "." and
		// ".." would step outside.
		for _, seg := range strings.Split(key[len(prefix):], "/") {
			if seg == "." || seg == ".." {
				t.Fatalf("token %q resumes at %q, outside %q", token, key, prefix)
			}
		}
		again, err := encodeContinue(key, prefix, rev)
		if err != nil {
			t.Fatalf("re-encoding %q at %d: %v", key, rev, err)
		}
		key2, rev2, err := decodeContinue(again, prefix)
		if err != nil || key2 != key || rev2 != rev {
			t.Fatalf("round trip of %q at %d gave %q at %d, %v", key, rev, key2, rev2, err)
		}
	})
}

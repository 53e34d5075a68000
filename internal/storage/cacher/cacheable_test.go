package cacher

import (
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

// Concurrent lookups of a few encoders each get one encoding per
// identifier, whoever adds it.
func TestEncodingsGet(t *testing.T) {
	var e encodings
	ids := []runtime.Identifier{"a", "b", "c", "d"}
	got := make([][]*encoding, 8)
	var wg sync.WaitGroup
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				got[g] = append(got[g], e.get(ids[(i+g)%len(ids)]))
			}
		}()
	}
	wg.Wait()
	if n := len(*e.list.Load()); n != len(ids) {
		t.Fatalf("%d encodings for %d identifiers", n, len(ids))
	}
	for g := range got {
		for i, r := range got[g] {
			if want := ids[(i+g)%len(ids)]; r.id != want || r != e.find(want) {
				t.Fatalf("goroutine %d, lookup %d: encoding %q, want the one of %q", g, i, r.id, want)
			}
		}
	}
}

package cacher

import (
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"
)

// A keySet answers as one sorted slice does, through random inserts and
// deletes that split and empty its chunks.
func TestKeySetMatchesSortedSlice(t *testing.T) {
	defer func(n int) { chunkMax = n }(chunkMax)
	chunkMax = 4
	r := rand.New(rand.NewSource(1))
	var s keySet
	ref := map[string]bool{}
	key := func() string { return fmt.Sprintf("/p/ns-%d/k-%03d", r.Intn(3), r.Intn(60)) }
	sorted := func(lo, hi string) []string {
		var out []string
		for k := range ref {
			if k >= lo && k < hi {
				out = append(out, k)
			}
		}
		sort.Strings(out)
		return out
	}
	initial := sorted("", "\xff")
	s.reset(initial)
	for i := 0; i < 5000; i++ {
		k := key()
		if r.Intn(3) == 0 {
			s.delete(k)
			delete(ref, k)
		} else {
			s.insert(k)
			ref[k] = true
		}
		if s.len() != len(ref) {
			t.Fatalf("step %d: len %d, want %d", i, s.len(), len(ref))
		}
		lo, hi := key(), key()
		if r.Intn(4) == 0 {
			lo, hi = "/p/ns-1/", "/p/ns-10"
		}
		want := sorted(lo, hi)
		if got := s.slice(lo, hi); !(len(got) == 0 && len(want) == 0) && !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d: slice(%q, %q) = %v, want %v", i, lo, hi, got, want)
		}
		if got := s.count(lo, hi); got != len(want) {
			t.Fatalf("step %d: count(%q, %q) = %d, want %d", i, lo, hi, got, len(want))
		}
		var seen []string
		s.each(lo, hi, func(k string) bool { seen = append(seen, k); return len(seen) < 3 })
		if n := min(3, len(want)); !reflect.DeepEqual(seen, want[:n]) && !(n == 0 && len(seen) == 0) {
			t.Fatalf("step %d: each stopped with %v, want %v", i, seen, want[:n])
		}
		if len(want) > 0 {
			k := want[0]
			if got, exp := s.after(k, hi), len(want) > 1; got != exp {
				t.Fatalf("step %d: after(%q, %q) = %v, want %v", i, k, hi, got, exp)
			}
		}
		for _, c := range s.chunks {
			if len(c) == 0 || len(c) > 2*chunkMax {
				t.Fatalf("step %d: a chunk of %d keys", i, len(c))
			}
		}
	}
}

// BenchmarkKeySetInsert inserts and deletes a key in a set of 100,000,
// against one sorted slice, which moves every key after the new one.
func BenchmarkKeySetInsert(b *testing.B) {
	keys := make([]string, 100000)
	for i := range keys {
		keys[i] = fmt.Sprintf("/registry/configmaps/ns/cm-%06d", i*2)
	}
	newKey := func(i int) string { return fmt.Sprintf("/registry/configmaps/ns/cm-%06d", (i*7919)%200000|1) }
	b.Run("keySet", func(b *testing.B) {
		var s keySet
		s.reset(keys)
		for i := 0; i < b.N; i++ {
			k := newKey(i)
			s.insert(k)
			s.delete(k)
		}
	})
	b.Run("sorted-slice", func(b *testing.B) {
		s := append([]string(nil), keys...)
		for i := 0; i < b.N; i++ {
			k := newKey(i)
			j := sort.SearchStrings(s, k)
			s = append(s, "")
			copy(s[j+1:], s[j:])
			s[j] = k
			s = append(s[:j], s[j+1:]...)
		}
	})
}

package cacher

import "sort"

// chunkMax is the size of the chunks a keySet is filled with; a chunk
// splits when it grows past twice that (a variable for tests).
var chunkMax = 512

// keySet holds the cache's keys in order, in chunks, so that an insert or
// a delete moves the keys of one chunk instead of all of them: with a
// single sorted slice each write cost a copy of every key, which at
// 100,000 objects is 1.6 MB per write. Guarded by the cacher's mu.
type keySet struct {
	chunks [][]string // each sorted and non-empty, in order
	n      int
}

// reset fills the set from sorted keys.
func (s *keySet) reset(sorted []string) {
	s.chunks, s.n = nil, len(sorted)
	for len(sorted) > 0 {
		n := min(chunkMax, len(sorted))
		s.chunks = append(s.chunks, append(make([]string, 0, n), sorted[:n]...))
		sorted = sorted[n:]
	}
}

func (s *keySet) len() int { return s.n }

// locate is the position of the first key >= k: a chunk and an index in
// it, or (len(chunks), 0) when every key is smaller.
func (s *keySet) locate(k string) (ci, i int) {
	ci = sort.Search(len(s.chunks), func(j int) bool {
		c := s.chunks[j]
		return c[len(c)-1] >= k
	})
	if ci == len(s.chunks) {
		return ci, 0
	}
	return ci, sort.SearchStrings(s.chunks[ci], k)
}

func (s *keySet) insert(k string) {
	ci, i := s.locate(k)
	if ci < len(s.chunks) && s.chunks[ci][i] == k {
		return
	}
	if ci == len(s.chunks) {
		if ci == 0 {
			s.chunks, s.n = [][]string{{k}}, 1
			return
		}
		ci--
		i = len(s.chunks[ci])
	}
	c := append(s.chunks[ci], "")
	copy(c[i+1:], c[i:])
	c[i] = k
	s.chunks[ci] = c
	s.n++
	if len(c) > 2*chunkMax {
		half := len(c) / 2
		right := append(make([]string, 0, len(c)-half), c[half:]...)
		s.chunks[ci] = c[:half]
		s.chunks = append(s.chunks, nil)
		copy(s.chunks[ci+2:], s.chunks[ci+1:])
		s.chunks[ci+1] = right
	}
}

func (s *keySet) delete(k string) {
	ci, i := s.locate(k)
	if ci == len(s.chunks) || s.chunks[ci][i] != k {
		return
	}
	c := append(s.chunks[ci][:i], s.chunks[ci][i+1:]...)
	s.n--
	if len(c) == 0 {
		s.chunks = append(s.chunks[:ci], s.chunks[ci+1:]...)
		return
	}
	s.chunks[ci] = c
}

// each calls fn on the keys in [lo, hi), in order, until fn returns false.
func (s *keySet) each(lo, hi string, fn func(string) bool) {
	ci, i := s.locate(lo)
	for ; ci < len(s.chunks); ci, i = ci+1, 0 {
		for _, k := range s.chunks[ci][i:] {
			if k >= hi || !fn(k) {
				return
			}
		}
	}
}

// slice returns the keys in [lo, hi). Within one chunk it shares the
// chunk's memory: the caller reads it under the cacher's lock only.
func (s *keySet) slice(lo, hi string) []string {
	if hi <= lo {
		return nil
	}
	ci, i := s.locate(lo)
	if ci < len(s.chunks) {
		c := s.chunks[ci]
		if j := sort.SearchStrings(c, hi); j < len(c) || ci == len(s.chunks)-1 {
			return c[i:j:j]
		}
	}
	var out []string
	s.each(lo, hi, func(k string) bool { out = append(out, k); return true })
	return out
}

// count is the number of keys in [lo, hi).
func (s *keySet) count(lo, hi string) int {
	if hi <= lo {
		return 0
	}
	return s.rank(hi) - s.rank(lo)
}

// rank is the number of keys < k.
func (s *keySet) rank(k string) int {
	ci, i := s.locate(k)
	n := i
	for _, c := range s.chunks[:ci] {
		n += len(c)
	}
	return n
}

// after reports whether a key in (k, hi) exists.
func (s *keySet) after(k, hi string) bool {
	found := false
	s.each(k+"\x00", hi, func(string) bool { found = true; return false })
	return found
}

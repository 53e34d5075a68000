package cacher

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kpipe/kpipe/internal/storage/store"
)

// Bounds of the encodings kept for gets. A get of an object that has not
// changed since the last one writes the bytes that one encoded; past
// either bound the kept encodings are dropped and built up again, so a
// cache of many objects read once keeps at most this much.
const (
	getEncodingsMaxBytes   = 8 << 20
	getEncodingsMaxObjects = 8192
)

// getEncodings are the encodings of the objects gets were answered with,
// by key. An entry holds for the object it was made for: an update puts a
// new object in the cache, so the entry no longer matches and is replaced.
type getEncodings struct {
	mu      sync.Mutex
	entries map[string]getEntry
	bytes   int // encoded since the entries were last dropped
}

type getEntry struct {
	obj runtime.Object // the cache's object, which is never changed
	enc *encodings
}

// wrap returns obj, the cache's object at key, as a runtime.CacheableObject
// that keeps its encodings for the next get of the same object.
func (g *getEncodings) wrap(key string, obj runtime.Object) *cachedObject {
	g.mu.Lock()
	defer g.mu.Unlock()
	e, ok := g.entries[key]
	if !ok || e.obj != obj {
		if g.entries == nil || g.bytes > getEncodingsMaxBytes || len(g.entries) >= getEncodingsMaxObjects {
			g.entries, g.bytes = map[string]getEntry{}, 0
		}
		e = getEntry{obj: obj, enc: &encodings{encoded: g.encoded}}
		g.entries[key] = e
	}
	return &cachedObject{obj: obj, enc: e.enc}
}

// encoded counts n bytes of a new encoding against the bound.
func (g *getEncodings) encoded(n int) {
	g.mu.Lock()
	g.bytes += n
	g.mu.Unlock()
}

// GetEncodable is Get for a caller that only encodes the object, as a
// get's response does. From memory it returns the cache's object wrapped
// as a runtime.CacheableObject: the encoders encode a copy of it once and
// later gets of the same, unchanged object write those bytes, where Get
// copies and encodes it every time. Otherwise it fills out, as Get does,
// and returns it.
func (c *Cacher) GetEncodable(ctx context.Context, key string, opts store.GetOptions, out runtime.Object) (runtime.Object, error) {
	obj, ok, err := c.getCached(ctx, key, opts, out)
	if err != nil || !ok || obj == nil {
		return out, err
	}
	return c.gets.wrap(key, obj), nil
}

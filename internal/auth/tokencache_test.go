package auth

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kpipe/kpipe/internal/request"
)

// fakeClock is a settable now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newTestCache(ttl time.Duration) (*TokenCache, *fakeClock) {
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := NewTokenCache(ttl, NewTokenCacheMetrics())
	c.now = clock.now
	return c, clock
}

// fetcher counts its calls and answers with a new user each time.
type fetcher struct {
	calls    atomic.Int32
	ok       bool
	err      error
	notAfter time.Time
}

func (f *fetcher) fetch() (TokenResult, bool, error) {
	n := f.calls.Add(1)
	if f.err != nil || !f.ok {
		return TokenResult{}, false, f.err
	}
	return TokenResult{
		User:     &request.User{Name: "u" + strconv.Itoa(int(n)), Groups: []string{"g"}, Extra: map[string][]string{"k": {"v"}}},
		Matched:  []string{"api"},
		NotAfter: f.notAfter,
	}, true, nil
}

func TestTokenCacheKeepsSuccesses(t *testing.T) {
	c, _ := newTestCache(10 * time.Second)
	f := &fetcher{ok: true}
	for range 3 {
		res, ok, err := c.Authenticate("tok", nil, f.fetch)
		if err != nil || !ok || res.User.Name != "u1" || len(res.Matched) != 1 {
			t.Fatalf("got %+v %v %v", res, ok, err)
		}
	}
	if n := f.calls.Load(); n != 1 {
		t.Errorf("fetched %d times for one token, want 1", n)
	}
	// Other audiences or another token are other entries.
	c.Authenticate("tok", []string{"vault"}, f.fetch)
	c.Authenticate("tok2", nil, f.fetch)
	// Length-prefixed: "ab"+["c"] is not "a"+["bc"].
	c.Authenticate("a", []string{"bc"}, f.fetch)
	c.Authenticate("ab", []string{"c"}, f.fetch)
	if n := f.calls.Load(); n != 5 {
		t.Errorf("fetched %d times, want 5: audiences and token are part of the key", n)
	}
	if hit, miss := testutil.ToFloat64(c.metrics.Requests.WithLabelValues("hit")), testutil.ToFloat64(c.metrics.Requests.WithLabelValues("miss")); hit != 2 || miss != 5 {
		t.Errorf("request_total hit=%v miss=%v, want 2 and 5", hit, miss)
	}
	if ok := testutil.ToFloat64(c.metrics.Fetches.WithLabelValues("ok")); ok != 5 {
		t.Errorf("fetch_total{ok} = %v, want 5", ok)
	}
}

func TestTokenCacheKeepsNoFailures(t *testing.T) {
	c, _ := newTestCache(10 * time.Second)
	unknown := &fetcher{}
	broken := &fetcher{err: errors.New("invalid signature")}
	for range 3 {
		if _, ok, err := c.Authenticate("tok", nil, unknown.fetch); ok || err != nil {
			t.Fatalf("unrecognised token: %v %v", ok, err)
		}
		if _, ok, err := c.Authenticate("bad", nil, broken.fetch); ok || err == nil {
			t.Fatalf("invalid token: %v %v", ok, err)
		}
	}
	if unknown.calls.Load() != 3 || broken.calls.Load() != 3 {
		t.Errorf("fetched %d and %d times, want 3 each: failures are not cached", unknown.calls.Load(), broken.calls.Load())
	}
	if n := c.Len(); n != 0 {
		t.Errorf("%d entries after failures only", n)
	}
	if e := testutil.ToFloat64(c.metrics.Fetches.WithLabelValues("error")); e != 3 {
		t.Errorf("fetch_total{error} = %v, want 3", e)
	}
}

func TestTokenCacheExpires(t *testing.T) {
	c, clock := newTestCache(10 * time.Second)
	f := &fetcher{ok: true}
	c.Authenticate("tok", nil, f.fetch)
	clock.add(9 * time.Second)
	c.Authenticate("tok", nil, f.fetch)
	if n := f.calls.Load(); n != 1 {
		t.Fatalf("fetched %d times within the TTL", n)
	}
	clock.add(time.Second)
	c.Authenticate("tok", nil, f.fetch)
	if n := f.calls.Load(); n != 2 {
		t.Fatalf("fetched %d times, want 2: the entry expires after the TTL", n)
	}

	// A token that expires before the TTL is kept only until then.
	short := &fetcher{ok: true, notAfter: clock.now().Add(2 * time.Second)}
	c.Authenticate("short", nil, short.fetch)
	clock.add(2 * time.Second)
	c.Authenticate("short", nil, short.fetch)
	if n := short.calls.Load(); n != 2 {
		t.Errorf("fetched %d times, want 2: an entry ends with its token", n)
	}
	// One already expired is not kept at all.
	gone := &fetcher{ok: true, notAfter: clock.now()}
	c.Authenticate("gone", nil, gone.fetch)
	c.Authenticate("gone", nil, gone.fetch)
	if n := gone.calls.Load(); n != 2 {
		t.Errorf("fetched %d times, want 2 for an expired token", n)
	}
}

// Every caller gets its own user: a later stage changing its copy changes
// nobody else's.
func TestTokenCacheHandsOutCopies(t *testing.T) {
	c, _ := newTestCache(10 * time.Second)
	f := &fetcher{ok: true}
	first, _, _ := c.Authenticate("tok", nil, f.fetch)
	first.User.Groups[0] = "changed"
	first.User.Extra["k"][0] = "changed"
	first.Matched[0] = "changed"
	second, _, _ := c.Authenticate("tok", nil, f.fetch)
	if second.User.Groups[0] != "g" || second.User.Extra["k"][0] != "v" || second.Matched[0] != "api" {
		t.Errorf("a caller's change reached the cache: %+v %v", second.User, second.Matched)
	}
	second.User.Name = "changed"
	if third, _, _ := c.Authenticate("tok", nil, f.fetch); third.User.Name != "u1" {
		t.Errorf("a hit's change reached the cache: %+v", third.User)
	}
}

// Concurrent requests with one new token verify it once.
func TestTokenCacheSharesConcurrentFetches(t *testing.T) {
	c, _ := newTestCache(10 * time.Second)
	var calls atomic.Int32
	release := make(chan struct{})
	fetch := func() (TokenResult, bool, error) {
		calls.Add(1)
		<-release
		return TokenResult{User: &request.User{Name: "u"}}, true, nil
	}
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res, ok, err := c.Authenticate("tok", nil, fetch); !ok || err != nil || res.User.Name != "u" {
				t.Errorf("got %+v %v %v", res, ok, err)
			}
		}()
	}
	time.Sleep(50 * time.Millisecond) // let them pile up on the fetch
	close(release)
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("fetched %d times for 32 concurrent requests, want 1", n)
	}
}

// Expired entries are swept, and the cache stops growing at its bound.
func TestTokenCacheBounded(t *testing.T) {
	c, clock := newTestCache(10 * time.Second)
	f := &fetcher{ok: true}
	for i := range 1000 {
		c.Authenticate("tok"+strconv.Itoa(i), nil, f.fetch)
	}
	if n := c.Len(); n != 1000 {
		t.Fatalf("%d entries, want 1000", n)
	}
	clock.add(11 * time.Second)
	for i := range tokenShards * 64 {
		c.Authenticate("new"+strconv.Itoa(i), nil, f.fetch)
	}
	if n := c.Len(); n > tokenShards*64 {
		t.Errorf("%d entries after a sweep, want only the new ones (%d)", n, tokenShards*64)
	}

	limit := tokenShards * maxTokensPerShard
	for i := range limit + 5000 {
		c.Authenticate("many"+strconv.Itoa(i), nil, f.fetch)
	}
	if n := c.Len(); n > limit {
		t.Errorf("%d entries, want at most %d", n, limit)
	}
}

func TestTokenCacheFailureTTL(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := NewTokenCacheTTLs(2*time.Minute, time.Minute, NewTokenCacheMetrics())
	c.SetClock(clock.now)

	t.Run("a token nobody recognised is kept for the failure TTL", func(t *testing.T) {
		f := &fetcher{}
		for range 3 {
			if _, ok, err := c.Authenticate("bad", nil, f.fetch); ok || err != nil {
				t.Fatalf("ok=%v err=%v, want a failure", ok, err)
			}
		}
		if n := f.calls.Load(); n != 1 {
			t.Fatalf("fetched %d times within the failure TTL, want 1", n)
		}
		clock.add(time.Minute)
		if _, ok, _ := c.Authenticate("bad", nil, f.fetch); ok {
			t.Fatal("ok after the failure TTL")
		}
		if n := f.calls.Load(); n != 2 {
			t.Fatalf("fetched %d times, want 2 after the failure TTL", n)
		}
	})
	t.Run("errors are never kept", func(t *testing.T) {
		f := &fetcher{err: errors.New("down")}
		for range 2 {
			if _, _, err := c.Authenticate("err", nil, f.fetch); err == nil {
				t.Fatal("no error")
			}
		}
		if n := f.calls.Load(); n != 2 {
			t.Fatalf("fetched %d times, want 2: errors are not cached", n)
		}
	})
	t.Run("successes use the success TTL", func(t *testing.T) {
		f := &fetcher{ok: true}
		c.Authenticate("good", nil, f.fetch)
		clock.add(time.Minute + time.Second)
		c.Authenticate("good", nil, f.fetch)
		if n := f.calls.Load(); n != 1 {
			t.Fatalf("fetched %d times within the success TTL, want 1", n)
		}
		clock.add(time.Minute)
		c.Authenticate("good", nil, f.fetch)
		if n := f.calls.Load(); n != 2 {
			t.Fatalf("fetched %d times after the success TTL, want 2", n)
		}
	})
}

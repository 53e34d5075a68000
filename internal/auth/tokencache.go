package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/kpipe/kpipe/internal/request"
)

// TokenCache remembers bearer tokens that authenticated, for TTL or until
// the token expires, whichever is first, as kube-apiserver's token cache
// does (10 s by default there). Verifying a signed token and reading the
// objects it names costs as much as the rest of a cached get; a client
// sends the same token on every request.
//
// By default only successes are kept (kube's failure TTL is 0), so
// nothing a client makes up can fill it; NewTokenCacheTTLs also keeps
// tokens nobody recognised, bounded the same way. What a cached token names may change within TTL
// and go unseen, as in kube: a deleted service account's token still
// authenticates until its entry expires.
//
// Concurrent misses on one token share one authentication.
type TokenCache struct {
	ttl        time.Duration
	failureTTL time.Duration // 0: failures are not kept
	now        func() time.Time

	hashes sync.Pool // HMAC-SHA256 under a key of this process
	shards [tokenShards]tokenShard
	group  singleflight.Group

	metrics TokenCacheMetrics
}

const tokenShards = 16

// maxTokensPerShard bounds the cache at 65,536 tokens; past it, in a
// shard, tokens are authenticated without being kept until a sweep makes
// room.
const maxTokensPerShard = 4096

type tokenShard struct {
	mu        sync.Mutex
	entries   map[string]tokenEntry
	nextSweep time.Time
}

type tokenEntry struct {
	user    *request.User
	matched []string
	expires time.Time
}

// TokenResult is what an authentication found.
type TokenResult struct {
	User *request.User
	// Matched are the audiences the token matched, for TokenReview.
	Matched []string
	// NotAfter is when the token itself expires; zero if it does not.
	NotAfter time.Time
}

// TokenCacheMetrics are kube's token cache metrics.
type TokenCacheMetrics struct {
	Requests *prometheus.CounterVec   // status: hit, miss
	Latency  *prometheus.HistogramVec // status: hit, miss
	Fetches  *prometheus.CounterVec   // status: ok, error
}

// NewTokenCacheMetrics returns the metrics, unregistered.
func NewTokenCacheMetrics() TokenCacheMetrics {
	return TokenCacheMetrics{
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "authentication", Subsystem: "token_cache", Name: "request_total",
			Help: "Token authentications answered from the cache (hit) or not (miss).",
		}, []string{"status"}),
		Latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "authentication", Subsystem: "token_cache", Name: "request_duration_seconds",
			Help: "Token authentication latency through the cache.",
		}, []string{"status"}),
		Fetches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "authentication", Subsystem: "token_cache", Name: "fetch_total",
			Help: "Token authentications the cache had to make, by outcome.",
		}, []string{"status"}),
	}
}

// NewTokenCache returns a cache keeping successes for ttl.
func NewTokenCache(ttl time.Duration, m TokenCacheMetrics) *TokenCache {
	return NewTokenCacheTTLs(ttl, 0, m)
}

// NewTokenCacheTTLs returns a cache keeping successes for ttl and tokens
// that were not recognised (no error) for failureTTL, as kube's cache
// around its token webhook does. Errors are never kept.
func NewTokenCacheTTLs(ttl, failureTTL time.Duration, m TokenCacheMetrics) *TokenCache {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		panic(err) // crypto/rand does not fail
	}
	c := &TokenCache{ttl: ttl, failureTTL: failureTTL, now: time.Now, metrics: m}
	c.hashes.New = func() any { return hmac.New(sha256.New, key) }
	for i := range c.shards {
		c.shards[i].entries = map[string]tokenEntry{}
	}
	return c
}

// Authenticate answers for token and the wanted audiences from the cache,
// or calls fetch and keeps a success. ok is false when fetch did not
// recognise the token.
func (c *TokenCache) Authenticate(token string, want []string, fetch func() (TokenResult, bool, error)) (TokenResult, bool, error) {
	start := c.now()
	key := c.key(token, want)
	sh := &c.shards[shardOf(key)]
	sh.mu.Lock()
	e, hit := sh.entries[key]
	sh.mu.Unlock()
	if hit && start.Before(e.expires) {
		c.observe("hit", start)
		if e.user == nil { // a kept failure
			return TokenResult{}, false, nil
		}
		return TokenResult{User: e.user.DeepCopy(), Matched: slices.Clone(e.matched)}, true, nil
	}
	type answer struct {
		res TokenResult
		ok  bool
	}
	v, err, _ := c.group.Do(key, func() (any, error) {
		res, ok, err := fetch()
		if err != nil {
			c.metrics.Fetches.WithLabelValues("error").Inc()
			return nil, err
		}
		c.metrics.Fetches.WithLabelValues("ok").Inc()
		switch {
		case ok && res.User != nil:
			c.put(sh, key, res, c.ttl)
		case !ok && c.failureTTL > 0:
			c.put(sh, key, TokenResult{}, c.failureTTL)
		}
		return answer{res, ok}, nil
	})
	c.observe("miss", start)
	if err != nil {
		return TokenResult{}, false, err
	}
	a := v.(answer)
	// Callers sharing one fetch, and the cache, must not share its user.
	if a.res.User != nil {
		a.res.User = a.res.User.DeepCopy()
	}
	a.res.Matched = slices.Clone(a.res.Matched)
	return a.res, a.ok, nil
}

func (c *TokenCache) observe(status string, start time.Time) {
	c.metrics.Requests.WithLabelValues(status).Inc()
	c.metrics.Latency.WithLabelValues(status).Observe(c.now().Sub(start).Seconds())
}

// put keeps res (a failure when it has no user) until ttl or the token's
// own expiry. Expired entries
// are swept once per TTL, on a write, so the map holds only the tokens
// that authenticated within about two TTLs.
func (c *TokenCache) put(sh *tokenShard, key string, res TokenResult, ttl time.Duration) {
	now := c.now()
	expires := now.Add(ttl)
	if !res.NotAfter.IsZero() && res.NotAfter.Before(expires) {
		expires = res.NotAfter
	}
	if !now.Before(expires) {
		return
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if now.After(sh.nextSweep) {
		for k, e := range sh.entries {
			if !now.Before(e.expires) {
				delete(sh.entries, k)
			}
		}
		sh.nextSweep = now.Add(max(c.ttl, c.failureTTL))
	}
	if len(sh.entries) >= maxTokensPerShard {
		return
	}
	e := tokenEntry{matched: slices.Clone(res.Matched), expires: expires}
	if res.User != nil {
		e.user = res.User.DeepCopy()
	}
	sh.entries[key] = e
}

// Len is the number of entries held, expired or not.
func (c *TokenCache) Len() int {
	n := 0
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		n += len(sh.entries)
		sh.mu.Unlock()
	}
	return n
}

// key is an HMAC of the token and the audiences, each length-prefixed so
// no two different pairs collide: the cache holds no token in the clear.
func (c *TokenCache) key(token string, want []string) string {
	h := c.hashes.Get().(hash.Hash)
	defer c.hashes.Put(h)
	h.Reset()
	var n [4]byte
	write := func(s string) {
		binary.BigEndian.PutUint32(n[:], uint32(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	write(token)
	binary.BigEndian.PutUint32(n[:], uint32(len(want)))
	h.Write(n[:])
	for _, a := range want {
		write(a)
	}
	return string(h.Sum(nil))
}

func shardOf(key string) int {
	return int(key[0]) % tokenShards
}

// SetClock replaces the cache's clock (tests).
func (c *TokenCache) SetClock(now func() time.Time) { c.now = now }

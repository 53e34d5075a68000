package x509

import (
	"crypto/sha256"
	stdx509 "crypto/x509"
	"sync"
	"time"

	"github.com/kpipe/kpipe/internal/request"
)

// maxVerified bounds the verified-chain cache; past it the cache starts
// over, which costs one verification per client.
const maxVerified = 4096

// verifiedCache remembers a chain that verified against one CA pool, until
// the first certificate in the chain expires. The pool is part of the key
// by identity: the server hands out a new pool when the client CA bundle
// is reloaded, so a reload invalidates every entry. Failures are never
// cached.
type verifiedCache struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]*verifiedEntry
}

type verifiedEntry struct {
	roots     *stdx509.CertPool
	notBefore time.Time
	notAfter  time.Time
	user      *request.User // nil: verified, but names no user (empty CN)
}

// chainKey identifies the presented chain: every certificate, in order.
func chainKey(peers []*stdx509.Certificate) [sha256.Size]byte {
	if len(peers) == 1 {
		return sha256.Sum256(peers[0].Raw)
	}
	h := sha256.New()
	for _, c := range peers {
		n := sha256.Sum256(c.Raw)
		h.Write(n[:])
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// validity is the window in which every certificate of chain is valid.
func validity(chain []*stdx509.Certificate) (notBefore, notAfter time.Time) {
	for i, c := range chain {
		if i == 0 || c.NotBefore.After(notBefore) {
			notBefore = c.NotBefore
		}
		if i == 0 || c.NotAfter.Before(notAfter) {
			notAfter = c.NotAfter
		}
	}
	return notBefore, notAfter
}

// get returns a copy of the user of a chain that verified against roots
// and is still in its validity window at now. ok false means: verify.
func (c *verifiedCache) get(key [sha256.Size]byte, roots *stdx509.CertPool, now time.Time) (*request.User, bool) {
	c.mu.Lock()
	e := c.entries[key]
	c.mu.Unlock()
	if e == nil || e.roots != roots || now.Before(e.notBefore) || now.After(e.notAfter) {
		return nil, false
	}
	if e.user == nil {
		return nil, true
	}
	return e.user.DeepCopy(), true
}

func (c *verifiedCache) put(key [sha256.Size]byte, roots *stdx509.CertPool, notBefore, notAfter time.Time, u *request.User) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxVerified {
		c.entries = make(map[[sha256.Size]byte]*verifiedEntry)
	}
	c.entries[key] = &verifiedEntry{roots: roots, notBefore: notBefore, notAfter: notAfter, user: u}
}

package jwt

import (
	"context"
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"sync"
	"time"

	gojwt "github.com/golang-jwt/jwt/v5"
)

// maxBody bounds what is read from an issuer: discovery documents and key
// sets are a few KiB.
const maxBody = 1 << 20

// keySet is an issuer's JWKS: cached, and fetched again when a token names
// a key it does not hold, at most once per minRefresh (concurrent misses
// share one fetch).
type keySet struct {
	url        string
	client     *http.Client
	ctx        context.Context // the authenticator's lifetime
	now        func() time.Time
	minRefresh time.Duration

	mu        sync.Mutex
	keys      []jwk
	fetched   bool
	lastFetch time.Time
	inflight  *fetchCall
}

type fetchCall struct {
	done chan struct{}
	keys []jwk
	err  error
}

type jwk struct {
	kid string
	alg string
	key crypto.PublicKey
}

// verify checks sig over signed with the key the header names (any key
// when it names none), fetching the set again once if none verifies.
func (s *keySet) verify(ctx context.Context, kid, alg, signed string, sig []byte) error {
	method := gojwt.GetSigningMethod(alg)
	if method == nil {
		return fmt.Errorf("unsupported algorithm %q", alg)
	}
	try := func(keys []jwk) bool {
		for _, k := range keys {
			if (kid == "" || k.kid == kid) && (k.alg == "" || k.alg == alg) {
				if method.Verify(signed, sig, k.key) == nil {
					return true
				}
			}
		}
		return false
	}
	keys, refresh := s.cached()
	if try(keys) {
		return nil
	}
	if !refresh {
		return errors.New("failed to verify id token signature")
	}
	// An unknown key: the issuer may have rotated its keys.
	keys, err := s.refresh(ctx)
	if err != nil {
		return fmt.Errorf("fetching keys %v", err)
	}
	if try(keys) {
		return nil
	}
	return errors.New("failed to verify id token signature")
}

// cached returns the keys held and whether a fetch is allowed now.
func (s *keySet) cached() ([]jwk, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys, !s.fetched || s.inflight != nil || s.now().Sub(s.lastFetch) >= s.minRefresh
}

// refresh fetches the set, or waits for the fetch under way.
func (s *keySet) refresh(ctx context.Context) ([]jwk, error) {
	s.mu.Lock()
	c := s.inflight
	if c == nil {
		c = &fetchCall{done: make(chan struct{})}
		s.inflight = c
		go func() {
			keys, err := s.fetch()
			s.mu.Lock()
			if err == nil {
				s.keys = keys
			}
			s.fetched = true
			s.lastFetch = s.now()
			s.inflight = nil
			s.mu.Unlock()
			c.keys, c.err = keys, err
			close(c.done)
		}()
	}
	s.mu.Unlock()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.done:
		return c.keys, c.err
	}
}

func (s *keySet) fetch() ([]jwk, error) {
	req, err := http.NewRequestWithContext(s.ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, fmt.Errorf("oidc: can't create request: %v", err)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("oidc: get keys failed %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("unable to read response body: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("oidc: get keys failed: %s %s", resp.Status, body)
	}
	keys, err := parseJWKS(body)
	if err != nil {
		return nil, fmt.Errorf("oidc: failed to decode keys: %v %s", err, body)
	}
	return keys, nil
}

// rawJWK is a JSON Web Key (RFC 7517) of the kinds JWTs are signed with.
type rawJWK struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// parseJWKS reads a key set. Keys for encryption, of other types or that
// do not parse are skipped: they verify nothing.
func parseJWKS(body []byte) ([]jwk, error) {
	var set struct {
		Keys []rawJWK `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, err
	}
	var out []jwk
	for _, k := range set.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		pub, err := k.publicKey()
		if err != nil {
			continue
		}
		out = append(out, jwk{kid: k.Kid, alg: k.Alg, key: pub})
	}
	return out, nil
}

func (k *rawJWK) publicKey() (crypto.PublicKey, error) {
	switch k.Kty {
	case "RSA":
		n, err := b64Int(k.N)
		if err != nil {
			return nil, err
		}
		e, err := b64Int(k.E)
		if err != nil {
			return nil, err
		}
		if n.Sign() <= 0 || !e.IsInt64() || e.Int64() < 2 || e.Int64() > 1<<31-1 {
			return nil, errors.New("invalid RSA key")
		}
		return &rsa.PublicKey{N: n, E: int(e.Int64())}, nil
	case "EC":
		var (
			curve elliptic.Curve
			check ecdh.Curve
			size  int
		)
		switch k.Crv {
		case "P-256":
			curve, check, size = elliptic.P256(), ecdh.P256(), 32
		case "P-384":
			curve, check, size = elliptic.P384(), ecdh.P384(), 48
		case "P-521":
			curve, check, size = elliptic.P521(), ecdh.P521(), 66
		default:
			return nil, fmt.Errorf("unsupported curve %q", k.Crv)
		}
		x, err := base64.RawURLEncoding.DecodeString(k.X)
		if err != nil {
			return nil, err
		}
		y, err := base64.RawURLEncoding.DecodeString(k.Y)
		if err != nil {
			return nil, err
		}
		if len(x) != size || len(y) != size {
			return nil, errors.New("invalid EC key size")
		}
		// crypto/ecdh checks that the point is on the curve.
		if _, err := check.NewPublicKey(append(append([]byte{4}, x...), y...)); err != nil {
			return nil, err
		}
		return &ecdsa.PublicKey{Curve: curve, X: new(big.Int).SetBytes(x), Y: new(big.Int).SetBytes(y)}, nil
	}
	return nil, fmt.Errorf("unsupported key type %q", k.Kty)
}

func b64Int(s string) (*big.Int, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	return new(big.Int).SetBytes(b), nil
}

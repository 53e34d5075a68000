// Package jwttest runs an OpenID Connect issuer for tests: discovery and
// a JWKS over TLS on 127.0.0.1, and tokens signed with its keys.
package jwttest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	gojwt "github.com/golang-jwt/jwt/v5"
)

// Key is a signing key with its kid.
type Key struct {
	ID      string
	Private crypto.Signer
}

// NewRSAKey makes a 2048-bit RSA key.
func NewRSAKey(t testing.TB, kid string) Key {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return Key{ID: kid, Private: k}
}

// NewECKey makes a P-256 key.
func NewECKey(t testing.TB, kid string) Key {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return Key{ID: kid, Private: k}
}

// Issuer is a running OpenID Connect issuer.
type Issuer struct {
	Server *httptest.Server
	// URL is the issuer URL, https://127.0.0.1:port.
	URL string
	// CAPEM is the PEM of the certificate the server presents.
	CAPEM []byte

	mu        sync.Mutex
	name      string // the issuer the discovery document and tokens name
	published []Key
	signing   Key
	status    int // discovery's status when not 0
	discovery atomic.Int64
	jwks      atomic.Int64
}

// NewIssuer starts an issuer that publishes and signs with key. It stops
// when the test ends.
func NewIssuer(t testing.TB, key Key) *Issuer {
	t.Helper()
	is := &Issuer{published: []Key{key}, signing: key}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		is.discovery.Add(1)
		is.mu.Lock()
		status := is.status
		is.mu.Unlock()
		if status != 0 {
			http.Error(w, "unavailable", status)
			return
		}
		is.mu.Lock()
		name := is.name
		is.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer":                                name,
			"jwks_uri":                              is.URL + "/keys",
			"id_token_signing_alg_values_supported": []string{"RS256", "ES256"},
		})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		is.jwks.Add(1)
		is.mu.Lock()
		keys := make([]map[string]string, 0, len(is.published))
		for _, k := range is.published {
			keys = append(keys, jwk(k))
		}
		is.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": keys})
	})
	is.Server = httptest.NewUnstartedServer(mux)
	// Clients that do not trust the server (a test of just that) are not
	// worth a log line.
	is.Server.Config.ErrorLog = log.New(io.Discard, "", 0)
	is.Server.StartTLS()
	t.Cleanup(is.Server.Close)
	is.URL = is.Server.URL
	is.name = is.URL
	is.CAPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: is.Server.Certificate().Raw})
	return is
}

// SetDiscoveryStatus makes discovery answer status (0: serve it).
func (is *Issuer) SetDiscoveryStatus(status int) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.status = status
}

// SetName makes the discovery document and the tokens signed from now on
// name issuer instead of URL.
func (is *Issuer) SetName(issuer string) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.name = issuer
}

// Rotate publishes only key and signs with it from now on.
func (is *Issuer) Rotate(key Key) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.published = []Key{key}
	is.signing = key
}

// DiscoveryRequests and JWKSRequests count the requests served.
func (is *Issuer) DiscoveryRequests() int64 { return is.discovery.Load() }

// JWKSRequests counts the key set requests served.
func (is *Issuer) JWKSRequests() int64 { return is.jwks.Load() }

// Sign signs claims with the issuer's current key. iss defaults to the
// issuer's name (its URL unless SetName changed it).
func (is *Issuer) Sign(t testing.TB, claims map[string]any) string {
	t.Helper()
	is.mu.Lock()
	k, name := is.signing, is.name
	is.mu.Unlock()
	c := gojwt.MapClaims{"iss": name}
	for k, v := range claims {
		c[k] = v
	}
	return SignWith(t, k, c)
}

// SignWith signs claims with k, as they are.
func SignWith(t testing.TB, k Key, claims map[string]any) string {
	t.Helper()
	var m gojwt.SigningMethod = gojwt.SigningMethodRS256
	if _, ok := k.Private.(*ecdsa.PrivateKey); ok {
		m = gojwt.SigningMethodES256
	}
	tok := gojwt.NewWithClaims(m, gojwt.MapClaims(claims))
	if k.ID != "" {
		tok.Header["kid"] = k.ID
	}
	s, err := tok.SignedString(k.Private)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func jwk(k Key) map[string]string {
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	switch p := k.Private.Public().(type) {
	case *rsa.PublicKey:
		return map[string]string{"kty": "RSA", "kid": k.ID, "use": "sig", "alg": "RS256", "n": b64(p.N.Bytes()), "e": b64(big.NewInt(int64(p.E)).Bytes())}
	case *ecdsa.PublicKey:
		x, y := make([]byte, 32), make([]byte, 32)
		p.X.FillBytes(x)
		p.Y.FillBytes(y)
		return map[string]string{"kty": "EC", "kid": k.ID, "use": "sig", "alg": "ES256", "crv": "P-256", "x": b64(x), "y": b64(y)}
	}
	panic("jwttest: unsupported key type")
}

package jwt

import (
	"context"
	"testing"
	"time"

	"github.com/kpipe/kpipe/plugins/authentication/jwt/jwttest"
)

// FuzzVerify feeds untrusted tokens to the issuer's checks and the key
// set parser: nothing panics, and nothing but the issuer's own tokens
// verifies.
func FuzzVerify(f *testing.F) {
	key := jwttest.NewRSAKey(f, "k1")
	const url = "https://issuer.example.com"
	good := jwttest.SignWith(f, key, map[string]any{"iss": url, "sub": "a", "aud": "kpipe", "exp": time.Now().Add(time.Hour).Unix()})
	for _, s := range []string{good, "a.b.c", "eyJhbGciOiJub25lIn0.eyJpc3MiOiJodHRwczovL2lzc3Vlci5leGFtcGxlLmNvbSJ9.", "{}", "...", "e30.e30.e30"} {
		f.Add(s, `{"keys":[{"kty":"EC","crv":"P-256","x":"AA","y":"AA"}]}`)
	}
	f.Fuzz(func(t *testing.T, token, jwks string) {
		keys, _ := parseJWKS([]byte(jwks))
		is := newIssuer(Issuer{URL: url, Audiences: []string{"kpipe"}, ClaimMappings: ClaimMappings{Username: PrefixedClaim{Claim: "sub", Prefix: ptr("")}}})
		ks := &keySet{keys: keys, fetched: true, now: time.Now, minRefresh: time.Hour, lastFetch: time.Now()}
		_, _ = untrustedIssuer(token)
		c, _, err := is.verifyToken(context.Background(), ks, token)
		if err != nil {
			return
		}
		if _, err := is.user(context.Background(), c); err != nil {
			return
		}
		if len(keys) > 0 && token != good {
			// Only a token signed with one of the parsed keys verifies;
			// the fuzzer cannot sign, so a success is the seed's
			// signature over the seed's payload.
			t.Fatalf("token %q verified with keys %q", token, jwks)
		}
	})
}

package jwt

import (
	"context"
	"crypto"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"

	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
	sa "github.com/kpipe/kpipe/internal/serviceaccount"
	"github.com/kpipe/kpipe/plugins/authentication/jwt/jwttest"
)

func ptr(s string) *string { return &s }

// start provisions an authenticator for iss with mappings changed by
// change, and waits until it has discovered the issuer.
func start(t *testing.T, iss *jwttest.Issuer, change func(*Issuer)) (*Authenticator, *prometheus.Registry) {
	t.Helper()
	ic := Issuer{
		URL:                  iss.URL,
		Audiences:            []string{"kpipe"},
		CertificateAuthority: string(iss.CAPEM),
		ClaimMappings: ClaimMappings{
			Username: PrefixedClaim{Claim: "sub", Prefix: ptr("oidc:")},
			Groups:   PrefixedClaim{Claim: "groups", Prefix: ptr("oidc:")},
			UID:      ClaimOrExpression{Claim: "uid"},
		},
	}
	if change != nil {
		change(&ic)
	}
	c := &Config{Issuers: []Issuer{ic}} // cacheTTL 0: every token verified
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	a, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := a.Provision(&pipeline.Env{Log: zap.NewNop(), Metrics: reg, Context: ctx}); err != nil {
		t.Fatal(err)
	}
	// Provision waited for the first discovery.
	if err := a.HealthCheck(); err != nil {
		t.Fatalf("after Provision: %v", err)
	}
	return a, reg
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func authn(a *Authenticator, token string) (*request.User, bool, error) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return a.AuthenticateRequest(r)
}

func valid(extra map[string]any) map[string]any {
	c := map[string]any{"sub": "alice", "aud": "kpipe", "exp": time.Now().Add(time.Hour).Unix()}
	for k, v := range extra {
		if v == nil {
			delete(c, k)
			continue
		}
		c[k] = v
	}
	return c
}

func TestAuthenticate(t *testing.T) {
	key := jwttest.NewRSAKey(t, "k1")
	iss := jwttest.NewIssuer(t, key)
	a, _ := start(t, iss, nil)
	stranger := jwttest.NewRSAKey(t, "k1") // same kid, other key
	now := time.Now()

	tests := []struct {
		name    string
		token   string
		want    *request.User
		wantOK  bool
		wantErr string
	}{
		{
			name:   "claims mapped with prefixes, uid and jti",
			token:  iss.Sign(t, valid(map[string]any{"groups": []string{"devs", "ops"}, "uid": "u-1", "jti": "abc"})),
			wantOK: true,
			want: &request.User{Name: "oidc:alice", UID: "u-1", Groups: []string{"oidc:devs", "oidc:ops"},
				Extra: map[string][]string{"authentication.kubernetes.io/credential-id": {"JTI=abc"}}},
		},
		{
			name:   "a single string is one group",
			token:  iss.Sign(t, valid(map[string]any{"groups": "admins", "uid": "u-1"})),
			wantOK: true,
			want:   &request.User{Name: "oidc:alice", UID: "u-1", Groups: []string{"oidc:admins"}},
		},
		{
			name:   "audience in a list",
			token:  iss.Sign(t, valid(map[string]any{"aud": []string{"other", "kpipe"}, "uid": "u-1"})),
			wantOK: true,
			want:   &request.User{Name: "oidc:alice", UID: "u-1"},
		},
		{name: "no bearer token", token: "", wantOK: false},
		{name: "not a JWT", token: "opaque-token", wantOK: false},
		{name: "another issuer's JWT", token: jwttest.SignWith(t, stranger, valid(map[string]any{"iss": "https://elsewhere.example.com"})), wantOK: false},
		{name: "another audience", token: iss.Sign(t, valid(map[string]any{"aud": "other", "uid": "u"})), wantErr: `oidc: verify token: oidc: expected audience "kpipe" got ["other"]`},
		{name: "expired", token: iss.Sign(t, valid(map[string]any{"exp": now.Add(-time.Minute).Unix(), "uid": "u"})), wantErr: "oidc: verify token: oidc: token is expired (Token Expiry: "},
		{name: "no expiry", token: iss.Sign(t, valid(map[string]any{"exp": nil, "uid": "u"})), wantErr: "oidc: token is expired"},
		{name: "not yet valid", token: iss.Sign(t, valid(map[string]any{"nbf": now.Add(time.Hour).Unix(), "uid": "u"})), wantErr: "before the nbf (not before) time"},
		{name: "nbf within a minute of leeway", token: iss.Sign(t, valid(map[string]any{"nbf": now.Add(30 * time.Second).Unix(), "uid": "u"})), wantOK: true, want: &request.User{Name: "oidc:alice", UID: "u"}},
		{name: "wrong signature", token: jwttest.SignWith(t, stranger, valid(map[string]any{"iss": iss.URL, "uid": "u"})), wantErr: "oidc: verify token: failed to verify signature: failed to verify id token signature"},
		{name: "tampered payload", token: tamper(iss.Sign(t, valid(map[string]any{"uid": "u"}))), wantErr: "failed to verify signature"},
		{name: "missing username claim", token: iss.Sign(t, valid(map[string]any{"sub": nil, "uid": "u"})), wantErr: `oidc: parse username claims "sub": claim not present`},
		{name: "missing uid claim", token: iss.Sign(t, valid(nil)), wantErr: `oidc: parse uid claim "uid": claim not present`},
		{name: "groups not strings", token: iss.Sign(t, valid(map[string]any{"groups": 3, "uid": "u"})), wantErr: `oidc: parse groups claim "groups"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, ok, err := authn(a, tt.token)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if ok {
					t.Error("ok with an error")
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if tt.want != nil && !reflect.DeepEqual(u, tt.want) {
				t.Errorf("user = %+v, want %+v", u, tt.want)
			}
		})
	}
}

// tamper changes the payload's sub and keeps the signature.
func tamper(tok string) string {
	parts := strings.Split(tok, ".")
	p, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		panic(err)
	}
	parts[1] = base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(p), `"alice"`, `"admin"`, 1)))
	return strings.Join(parts, ".")
}

func TestEmailVerified(t *testing.T) {
	iss := jwttest.NewIssuer(t, jwttest.NewRSAKey(t, "k1"))
	a, _ := start(t, iss, func(ic *Issuer) {
		ic.ClaimMappings = ClaimMappings{Username: PrefixedClaim{Claim: "email", Prefix: ptr("")}}
	})
	tests := []struct {
		name    string
		claims  map[string]any
		wantErr string
	}{
		{name: "verified", claims: map[string]any{"email": "a@example.com", "email_verified": true}},
		{name: "no email_verified claim", claims: map[string]any{"email": "a@example.com"}},
		{name: "not verified", claims: map[string]any{"email": "a@example.com", "email_verified": false}, wantErr: "oidc: email not verified"},
		{name: "email_verified not a bool", claims: map[string]any{"email": "a@example.com", "email_verified": "yes"}, wantErr: "oidc: parse 'email_verified' claim"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, ok, err := authn(a, iss.Sign(t, valid(tt.claims)))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !ok || u.Name != "a@example.com" {
				t.Fatalf("user %+v ok %v err %v", u, ok, err)
			}
		})
	}
}

func TestAudiencesAndRules(t *testing.T) {
	iss := jwttest.NewIssuer(t, jwttest.NewECKey(t, "ec"))
	a, _ := start(t, iss, func(ic *Issuer) {
		ic.Audiences = []string{"b", "a"}
		ic.AudienceMatchPolicy = "MatchAny"
		ic.ClaimMappings = ClaimMappings{Username: PrefixedClaim{Claim: "sub", Prefix: ptr("")}}
		ic.ClaimValidationRules = []ClaimValidationRule{{Claim: "hd", RequiredValue: "example.com"}}
	})
	tests := []struct {
		name    string
		claims  map[string]any
		wantErr string
	}{
		{name: "one of the audiences, ES256", claims: map[string]any{"aud": []string{"x", "a"}, "hd": "example.com"}},
		{name: "none of the audiences", claims: map[string]any{"aud": "x", "hd": "example.com"}, wantErr: `oidc: expected audience in ["a" "b"] got ["x"]`},
		{name: "required claim missing", claims: map[string]any{"aud": "a"}, wantErr: "oidc: required claim hd not present in ID token"},
		{name: "required claim differs", claims: map[string]any{"aud": "a", "hd": "other.com"}, wantErr: "oidc: required claim hd value does not match. Got = other.com, want = example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, ok, err := authn(a, iss.Sign(t, valid(tt.claims)))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !ok || u.Name != "alice" {
				t.Fatalf("user %+v ok %v err %v", u, ok, err)
			}
		})
	}
}

func TestUnsupportedAlgorithm(t *testing.T) {
	iss := jwttest.NewIssuer(t, jwttest.NewRSAKey(t, "k1"))
	a, _ := start(t, iss, nil)
	// An HS256 token whose secret is the issuer's public key material is
	// the classic confusion attack: refused by algorithm.
	hs := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + strings.Split(iss.Sign(t, valid(map[string]any{"uid": "u"})), ".")[1] + ".c2ln"
	_, _, err := authn(a, hs)
	if err == nil || !strings.Contains(err.Error(), `oidc: id token signed with unsupported algorithm, expected ["RS256" "RS384" "RS512" "ES256" "ES384" "ES512" "PS256" "PS384" "PS512"] got "HS256"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestKeyRotation(t *testing.T) {
	old := jwttest.NewRSAKey(t, "old")
	iss := jwttest.NewIssuer(t, old)
	a, reg := start(t, iss, nil)
	is := a.order[0]
	clock := &fakeClock{t: time.Now()}
	ks := is.keys.Load()
	ks.mu.Lock()
	ks.now = clock.now
	ks.lastFetch = clock.now()
	ks.mu.Unlock()

	oldTok := iss.Sign(t, valid(map[string]any{"uid": "u"}))
	if _, ok, err := authn(a, oldTok); !ok || err != nil {
		t.Fatalf("old key: ok %v err %v", ok, err)
	}
	fetches := iss.JWKSRequests()

	// The issuer rotates; a token with the new kid is refused while the
	// last fetch is recent, then the set is fetched again.
	iss.Rotate(jwttest.NewRSAKey(t, "new"))
	newTok := iss.Sign(t, valid(map[string]any{"uid": "u"}))
	if _, _, err := authn(a, newTok); err == nil || !strings.Contains(err.Error(), "failed to verify id token signature") {
		t.Fatalf("within the refresh interval: err = %v", err)
	}
	if got := iss.JWKSRequests(); got != fetches {
		t.Fatalf("JWKS fetched %d times within the interval", got-fetches)
	}
	clock.add(minKeyRefresh)
	if u, ok, err := authn(a, newTok); !ok || err != nil || u.Name != "oidc:alice" {
		t.Fatalf("after rotation: user %+v ok %v err %v", u, ok, err)
	}
	if got := iss.JWKSRequests(); got != fetches+1 {
		t.Fatalf("JWKS fetched %d times, want once", got-fetches)
	}
	// The old key is gone from the set.
	if _, _, err := authn(a, oldTok); err == nil {
		t.Fatal("a token of the retired key still authenticates")
	}
	// Tokens of known keys do not fetch.
	for range 5 {
		if _, ok, err := authn(a, newTok); !ok || err != nil {
			t.Fatal(err)
		}
	}
	if got := iss.JWKSRequests(); got != fetches+1 {
		t.Fatalf("JWKS fetched %d times for known keys", got-fetches-1)
	}
	if n := testutil.CollectAndCount(reg, "apiserver_authentication_jwt_authenticator_latency_seconds"); n != 2 {
		t.Errorf("latency series = %d, want success and failure", n)
	}
	var b strings.Builder
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "jwt_issuer_hash" {
					b.WriteString(l.GetValue())
				}
			}
		}
	}
	if !strings.Contains(b.String(), issuerHash(iss.URL)) || !strings.HasPrefix(issuerHash(iss.URL), "sha256:") {
		t.Errorf("jwt_issuer_hash labels %q", b.String())
	}
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestIssuerUnreachable(t *testing.T) {
	iss := jwttest.NewIssuer(t, jwttest.NewRSAKey(t, "k1"))
	iss.SetDiscoveryStatus(http.StatusServiceUnavailable)
	c := &Config{Issuers: []Issuer{{
		URL: iss.URL, Audiences: []string{"kpipe"}, CertificateAuthority: string(iss.CAPEM),
		ClaimMappings: ClaimMappings{Username: PrefixedClaim{Claim: "sub", Prefix: ptr("")}},
	}}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	a, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	a.order[0].discoveryInterval = 20 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := a.Provision(&pipeline.Env{Log: zap.NewNop(), Context: ctx}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a failed discovery", func() bool { return iss.DiscoveryRequests() >= 2 })
	if err := a.HealthCheck(); err == nil || !strings.Contains(err.Error(), "503 Service Unavailable") {
		t.Errorf("health = %v", err)
	}
	tok := iss.Sign(t, valid(nil))
	if _, ok, err := authn(a, tok); ok || err == nil || err.Error() != "oidc: authenticator not initialized" {
		t.Fatalf("before discovery: ok %v err %v", ok, err)
	}
	iss.SetDiscoveryStatus(0)
	eventually(t, "discovery", func() bool { return a.HealthCheck() == nil })
	if u, ok, err := authn(a, tok); !ok || err != nil || u.Name != "alice" {
		t.Fatalf("after discovery: user %+v ok %v err %v", u, ok, err)
	}
}

func TestUntrustedCA(t *testing.T) {
	iss := jwttest.NewIssuer(t, jwttest.NewRSAKey(t, "k1"))
	// No certificateAuthority: the system roots do not trust the test
	// server.
	c := &Config{Issuers: []Issuer{{
		URL: iss.URL, Audiences: []string{"kpipe"},
		ClaimMappings: ClaimMappings{Username: PrefixedClaim{Claim: "sub", Prefix: ptr("")}},
	}}}
	a, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := a.Provision(&pipeline.Env{Log: zap.NewNop(), Context: ctx}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a failed discovery", func() bool {
		err := a.HealthCheck()
		return err != nil && strings.Contains(err.Error(), "certificate")
	})
	if iss.DiscoveryRequests() != 0 {
		t.Errorf("discovery served over an unverified connection")
	}
}

func TestDiscoveryURL(t *testing.T) {
	iss := jwttest.NewIssuer(t, jwttest.NewRSAKey(t, "k1"))
	// The issuer is a path with no discovery document of its own; its
	// document is served at the server's root.
	tenant := iss.URL + "/tenant"
	iss.SetName(tenant)
	a, _ := start(t, iss, func(ic *Issuer) {
		ic.URL = tenant
		ic.DiscoveryURL = iss.URL + "/.well-known/openid-configuration"
	})
	u, ok, err := authn(a, iss.Sign(t, valid(map[string]any{"uid": "u"})))
	if !ok || err != nil || u.Name != "oidc:alice" {
		t.Fatalf("user %+v ok %v err %v", u, ok, err)
	}
}

func TestDiscoveryIssuerMismatch(t *testing.T) {
	iss := jwttest.NewIssuer(t, jwttest.NewRSAKey(t, "k1"))
	iss.SetName("https://someone-else.example.com")
	c := &Config{Issuers: []Issuer{{
		URL: iss.URL, Audiences: []string{"kpipe"}, CertificateAuthority: string(iss.CAPEM),
		ClaimMappings: ClaimMappings{Username: PrefixedClaim{Claim: "sub", Prefix: ptr("")}},
	}}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	a, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := a.Provision(&pipeline.Env{Log: zap.NewNop(), Context: ctx}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("oidc: issuer did not match the issuer returned by provider, expected %q got %q", iss.URL, "https://someone-else.example.com")
	eventually(t, "a failed discovery", func() bool {
		err := a.HealthCheck()
		return err != nil && strings.Contains(err.Error(), want)
	})
}

func TestServiceAccountIssuerRefused(t *testing.T) {
	tokens, err := sa.New(sa.Options{Issuer: "https://kubernetes.default.svc.cluster.local", PublicKeys: []crypto.PublicKey{jwttest.NewECKey(t, "").Private.Public()}})
	if err != nil {
		t.Fatal(err)
	}
	c := &Config{Issuers: []Issuer{{
		URL: "https://kubernetes.default.svc.cluster.local", Audiences: []string{"kpipe"},
		ClaimMappings: ClaimMappings{Username: PrefixedClaim{Claim: "sub", Prefix: ptr("")}},
	}}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	a, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err = a.Provision(&pipeline.Env{Log: zap.NewNop(), Context: ctx, Shared: &pipeline.Shared{ServiceAccounts: tokens}})
	want := `issuers[0].url: Invalid value: "https://kubernetes.default.svc.cluster.local": URL must not overlap with disallowed issuers: [https://kubernetes.default.svc.cluster.local]`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
}

func TestTokenReviewAudiences(t *testing.T) {
	iss := jwttest.NewIssuer(t, jwttest.NewRSAKey(t, "k1"))
	a, _ := start(t, iss, nil)
	a.apiAudiences = []string{"https://kubernetes.default.svc.cluster.local"}
	tok := iss.Sign(t, valid(map[string]any{"uid": "u"}))
	review := func(want ...string) (*auth.AudienceCheck, bool, error) {
		check := &auth.AudienceCheck{Want: want}
		r := httptest.NewRequestWithContext(auth.WithAudienceCheck(context.Background(), check), http.MethodGet, "/", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		_, ok, err := a.AuthenticateRequest(r)
		return check, ok, err
	}
	// kube's audience-agnostic wrapper: for the API's audiences, the
	// token is the API's; for others it is not this authenticator's.
	if check, ok, err := review("https://kubernetes.default.svc.cluster.local", "other"); !ok || err != nil || !reflect.DeepEqual(check.Matched, []string{"https://kubernetes.default.svc.cluster.local"}) {
		t.Errorf("API audiences: ok %v err %v matched %v", ok, err, check.Matched)
	}
	if _, ok, err := review("other"); ok || err != nil {
		t.Errorf("other audiences: ok %v err %v, want neither", ok, err)
	}
}

func TestCELMappings(t *testing.T) {
	iss := jwttest.NewIssuer(t, jwttest.NewRSAKey(t, "k1"))
	a, _ := start(t, iss, func(ic *Issuer) {
		ic.ClaimMappings = ClaimMappings{
			Username: PrefixedClaim{Expression: "claims.email_verified ? 'oidc:' + claims.email : ''"},
			Groups:   PrefixedClaim{Expression: "has(claims.roles) ? claims.roles.map(r, 'role:' + r) : []"},
			UID:      ClaimOrExpression{Expression: "string(claims.sub)"},
			Extra: []ExtraMapping{
				{Key: "example.com/tenant", ValueExpression: "has(claims.tenant) ? claims.tenant : ''"},
				{Key: "example.com/tags", ValueExpression: "has(claims.tags) ? claims.tags : null"},
				{Key: "example.com/org", ValueExpression: "has(claims.example__dot__com__slash__org) ? claims.example__dot__com__slash__org : ''"},
				{Key: "example.com/team", ValueExpression: "has(claims.nested) ? claims.nested[0].team__dash__name : ''"},
			},
		}
		ic.ClaimValidationRules = []ClaimValidationRule{{Expression: "claims.sub != 'blocked'", Message: "blocked subject"}}
		ic.UserValidationRules = []UserValidationRule{{Expression: "!user.username.startsWith('oidc:system')", Message: "no system users"}}
	})
	tests := []struct {
		name    string
		claims  map[string]any
		want    *request.User
		wantErr string
	}{
		{
			name: "every mapping",
			claims: map[string]any{"email": "a@example.com", "email_verified": true, "roles": []string{"dev", "ops"}, "tenant": "t1", "tags": []string{"x", "", "y"},
				"example.com/org": "acme", "nested": []any{map[string]any{"team-name": "blue"}}},
			want: &request.User{Name: "oidc:a@example.com", UID: "alice", Groups: []string{"role:dev", "role:ops"},
				Extra: map[string][]string{"example.com/tenant": {"t1"}, "example.com/tags": {"x", "y"}, "example.com/org": {"acme"}, "example.com/team": {"blue"}}},
		},
		{
			name:   "empty values are no groups or extra",
			claims: map[string]any{"email": "a@example.com", "email_verified": true},
			want:   &request.User{Name: "oidc:a@example.com", UID: "alice"},
		},
		{name: "empty username", claims: map[string]any{"email": "a@example.com", "email_verified": false}, wantErr: "oidc: empty username via CEL expression is not allowed"},
		{name: "evaluation error", claims: map[string]any{"email_verified": true}, wantErr: "oidc: error evaluating username claim expression: expression 'claims.email_verified ? 'oidc:' + claims.email : ''' resulted in error: no such key: email"},
		{name: "groups not strings", claims: map[string]any{"email": "a@example.com", "email_verified": true, "roles": []int{1}}, wantErr: "oidc: error evaluating group claim expression"},
		{name: "extra not strings", claims: map[string]any{"email": "a@example.com", "email_verified": true, "tags": 3}, wantErr: "oidc: error evaluating extra claim expression: has(claims.tags) ? claims.tags : null: expression must return a string or a list of strings"},
		{name: "claim rule fails", claims: map[string]any{"sub": "blocked", "email": "a@example.com", "email_verified": true}, wantErr: "oidc: error evaluating claim validation expression: validation expression 'claims.sub != 'blocked'' failed: blocked subject"},
		{name: "user rule fails", claims: map[string]any{"email": "system@example.com", "email_verified": true}, wantErr: "oidc: error evaluating user info validation rule: validation expression '!user.username.startsWith('oidc:system')' failed: no system users"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, ok, err := authn(a, iss.Sign(t, valid(tt.claims)))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !ok {
				t.Fatalf("ok %v err %v", ok, err)
			}
			if !reflect.DeepEqual(u, tt.want) {
				t.Errorf("user = %+v, want %+v", u, tt.want)
			}
		})
	}
}

package jwt

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"github.com/kpipe/kpipe/internal/request"
)

// credentialIDKey is the user extra kube sets to a JWT's jti.
const credentialIDKey = "authentication.kubernetes.io/credential-id"

// claims are a token's payload, each claim decoded when used.
type claims map[string]json.RawMessage

func (c claims) unmarshalClaim(name string, v any) error {
	raw, ok := c[name]
	if !ok {
		return errors.New("claim not present")
	}
	return json.Unmarshal(raw, v)
}

func (c claims) has(name string) bool { _, ok := c[name]; return ok }

// untrustedIssuer reads a JWT's iss without verifying anything, to find
// whose token it is. ok is false for what is not a compact JWT.
func untrustedIssuer(token string) (string, bool) {
	if strings.HasPrefix(strings.TrimSpace(token), "{") {
		return "", false
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", false
	}
	var c struct {
		Issuer string `json:"iss"`
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return "", false
	}
	// OpenID Connect's legacy Google issuer, as kube coalesces it.
	if c.Issuer == "accounts.google.com" {
		return "https://accounts.google.com", true
	}
	return c.Issuer, true
}

// audience is a JWT's aud: a string or a list of them.
type audience []string

func (a *audience) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*a = audience{s}
		return nil
	}
	var l []string
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	*a = l
	return nil
}

// numericDate is a JWT time: seconds since the epoch, as an integer or a
// number whose fraction is dropped (go-oidc's, which kube uses).
type numericDate struct{ time.Time }

func (d *numericDate) UnmarshalJSON(b []byte) error {
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	sec, err := n.Int64()
	if err != nil {
		f, ferr := n.Float64()
		if ferr != nil {
			return ferr
		}
		sec = int64(f)
	}
	d.Time = time.Unix(sec, 0)
	return nil
}

// verifyToken checks the token as kube's OIDC verifier does (go-oidc's
// order and messages): its form, issuer, audience, expiry, not-before,
// algorithm and signature. It returns the claims and the token's expiry.
func (is *issuer) verifyToken(ctx context.Context, ks *keySet, raw string) (claims, time.Time, error) {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return nil, time.Time{}, fmt.Errorf("oidc: malformed jwt: compact JWS format must have three parts")
	}
	hb, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("oidc: malformed jwt: %v", err)
	}
	var header struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
	}
	if err := json.Unmarshal(hb, &header); err != nil {
		return nil, time.Time{}, fmt.Errorf("oidc: malformed jwt: %v", err)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("oidc: malformed jwt: %v", err)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("oidc: malformed jwt: oidc: malformed jwt payload: %v", err)
	}
	var c claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, time.Time{}, fmt.Errorf("oidc: failed to unmarshal claims: %v", err)
	}
	var std struct {
		Issuer    string       `json:"iss"`
		Audience  audience     `json:"aud"`
		Expiry    numericDate  `json:"exp"`
		NotBefore *numericDate `json:"nbf"`
	}
	if err := json.Unmarshal(payload, &std); err != nil {
		return nil, time.Time{}, fmt.Errorf("oidc: failed to unmarshal claims: %v", err)
	}
	if std.Issuer != is.cfg.URL && !(is.cfg.URL == "https://accounts.google.com" && std.Issuer == "accounts.google.com") {
		return nil, time.Time{}, fmt.Errorf("oidc: id token issued by a different provider, expected %q got %q", is.cfg.URL, std.Issuer)
	}
	if len(is.cfg.Audiences) == 1 && !slices.Contains(std.Audience, is.cfg.Audiences[0]) {
		return nil, time.Time{}, fmt.Errorf("oidc: expected audience %q got %q", is.cfg.Audiences[0], []string(std.Audience))
	}
	now := is.now()
	if std.Expiry.Before(now) {
		return nil, time.Time{}, fmt.Errorf("oidc: token is expired (Token Expiry: %v)", std.Expiry.Time)
	}
	if std.NotBefore != nil && now.Add(time.Minute).Before(std.NotBefore.Time) {
		return nil, time.Time{}, fmt.Errorf("oidc: current time %v before the nbf (not before) time: %v", now, std.NotBefore.Time)
	}
	if !slices.Contains(allowedAlgs, header.Alg) {
		return nil, time.Time{}, fmt.Errorf("oidc: id token signed with unsupported algorithm, expected %q got %q", allowedAlgs, header.Alg)
	}
	if err := ks.verify(ctx, header.Kid, header.Alg, parts[0]+"."+parts[1], sig); err != nil {
		return nil, time.Time{}, fmt.Errorf("failed to verify signature: %v", err)
	}
	if len(is.cfg.Audiences) > 1 && !slices.ContainsFunc(std.Audience, func(a string) bool { return is.audiences[a] }) {
		want := slices.Clone(is.cfg.Audiences)
		sort.Strings(want)
		return nil, time.Time{}, fmt.Errorf("oidc: expected audience in %q got %q", want, []string(std.Audience))
	}
	return c, std.Expiry.Time, nil
}

// user maps verified claims to the user, as kube's claimMappings (a
// claim, or a CEL expression), then checks the claim and user
// validation rules.
func (is *issuer) user(ctx context.Context, c claims) (*request.User, error) {
	m := is.cfg.ClaimMappings
	x := is.cel
	var cv ref.Val
	if x.usesClaims() {
		var err error
		if cv, err = claimsValue(c); err != nil {
			return nil, fmt.Errorf("oidc: %w", err)
		}
	}
	u := &request.User{}
	if x.username != nil {
		out, err := x.username.eval(ctx, claimsVar, cv)
		if err != nil {
			return nil, fmt.Errorf("oidc: error evaluating username claim expression: %w", err)
		}
		if out.Type() != types.StringType {
			return nil, errors.New("oidc: error evaluating username claim expression: username claim expression must return a string")
		}
		if u.Name = out.Value().(string); u.Name == "" {
			return nil, errors.New("oidc: empty username via CEL expression is not allowed")
		}
	} else {
		var name string
		if err := c.unmarshalClaim(m.Username.Claim, &name); err != nil {
			return nil, fmt.Errorf("oidc: parse username claims %q: %v", m.Username.Claim, err)
		}
		if m.Username.Claim == "email" && c.has("email_verified") {
			// OpenID Connect: an email is the user's only once verified.
			var verified bool
			if err := c.unmarshalClaim("email_verified", &verified); err != nil {
				return nil, fmt.Errorf("oidc: parse 'email_verified' claim: %v", err)
			}
			if !verified {
				return nil, errors.New("oidc: email not verified")
			}
		}
		u.Name = is.usernamePrefix + name
	}
	if g := m.Groups.Claim; g != "" && c.has(g) {
		var groups stringOrList
		if err := c.unmarshalClaim(g, &groups); err != nil {
			return nil, fmt.Errorf("oidc: parse groups claim %q: %w", g, err)
		}
		for i := range groups {
			groups[i] = is.groupsPrefix + groups[i]
		}
		u.Groups = groups
	} else if x.groups != nil {
		out, err := x.groups.eval(ctx, claimsVar, cv)
		if err != nil {
			return nil, fmt.Errorf("oidc: error evaluating group claim expression: %w", err)
		}
		if u.Groups, err = stringList(out); err != nil {
			return nil, fmt.Errorf("oidc: error evaluating group claim expression: %w", err)
		}
	}
	if uc := m.UID.Claim; uc != "" {
		if err := c.unmarshalClaim(uc, &u.UID); err != nil {
			return nil, fmt.Errorf("oidc: parse uid claim %q: %w", uc, err)
		}
	} else if x.uid != nil {
		out, err := x.uid.eval(ctx, claimsVar, cv)
		if err != nil {
			return nil, fmt.Errorf("oidc: error evaluating uid claim expression: %w", err)
		}
		if out.Type() != types.StringType {
			return nil, errors.New("oidc: error evaluating uid claim expression: uid claim expression must return a string")
		}
		u.UID = out.Value().(string)
	}
	extra := map[string][]string{}
	if c.has("jti") {
		var jti string
		if c.unmarshalClaim("jti", &jti) == nil && jti != "" {
			extra[credentialIDKey] = []string{"JTI=" + jti}
		}
	}
	outs := make([]ref.Val, len(x.extra))
	for i, e := range x.extra {
		out, err := e.eval(ctx, claimsVar, cv)
		if err != nil {
			return nil, err
		}
		outs[i] = out
	}
	for i, e := range x.extra {
		vals, err := stringList(outs[i])
		if err != nil {
			return nil, fmt.Errorf("oidc: error evaluating extra claim expression: %s: %w", e.src, err)
		}
		if len(vals) > 0 {
			extra[e.key] = vals
		}
	}
	if len(extra) > 0 {
		u.Extra = extra
	}
	for _, r := range is.cfg.ClaimValidationRules {
		if r.Claim == "" {
			continue
		}
		if !c.has(r.Claim) {
			return nil, fmt.Errorf("oidc: required claim %s not present in ID token", r.Claim)
		}
		var v string
		if err := c.unmarshalClaim(r.Claim, &v); err != nil {
			return nil, fmt.Errorf("oidc: parse claim %s: %w", r.Claim, err)
		}
		if v != r.RequiredValue {
			return nil, fmt.Errorf("oidc: required claim %s value does not match. Got = %s, want = %s", r.Claim, v, r.RequiredValue)
		}
	}
	if len(x.claimRules) > 0 {
		if err := checkRules(ctx, x.claimRules, claimsVar, cv); err != nil {
			return nil, fmt.Errorf("oidc: error evaluating claim validation expression: %w", err)
		}
	}
	if len(x.userRules) > 0 {
		if err := checkRules(ctx, x.userRules, userVar, userValue(u)); err != nil {
			return nil, fmt.Errorf("oidc: error evaluating user info validation rule: %w", err)
		}
	}
	return u, nil
}

// stringOrList is a groups claim: a list, or one string (kube allows a
// single "role" claim as the group).
type stringOrList []string

func (s *stringOrList) UnmarshalJSON(b []byte) error {
	var l []string
	if err := json.Unmarshal(b, &l); err == nil {
		*s = l
		return nil
	}
	var one string
	if err := json.Unmarshal(b, &one); err != nil {
		return err
	}
	*s = stringOrList{one}
	return nil
}

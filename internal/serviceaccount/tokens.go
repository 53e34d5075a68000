// Package serviceaccount issues and verifies service account tokens: JWTs
// signed with the server's key, with kube's claims, issuer and audiences.
// It also answers TokenRequest (serviceaccounts/<name>/token).
package serviceaccount

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// DefaultIssuer is kube's in-cluster issuer, used as kube-apiserver's
// --service-account-issuer when none is configured.
const DefaultIssuer = "https://kubernetes.default.svc.cluster.local"

// Claims are a service account token's: the registered ones and kube's
// private "kubernetes.io" claim.
type Claims struct {
	jwt.RegisteredClaims
	Kubernetes Private `json:"kubernetes.io"`
}

// Private is the "kubernetes.io" claim: the service account and the object
// the token is bound to.
type Private struct {
	Namespace      string           `json:"namespace,omitempty"`
	ServiceAccount Ref              `json:"serviceaccount"`
	Pod            *Ref             `json:"pod,omitempty"`
	Secret         *Ref             `json:"secret,omitempty"`
	Node           *Ref             `json:"node,omitempty"`
	WarnAfter      *jwt.NumericDate `json:"warnafter,omitempty"`
}

// Ref names an object by name and uid.
type Ref struct {
	Name string `json:"name,omitempty"`
	UID  string `json:"uid,omitempty"`
}

// Options are kube-apiserver's service account flags.
type Options struct {
	// Issuer is --service-account-issuer.
	Issuer string
	// APIAudiences is --api-audiences; empty means the issuer.
	APIAudiences []string
	// Signer is the --service-account-signing-key-file key; nil means
	// tokens can be verified but not issued.
	Signer crypto.Signer
	// PublicKeys verify tokens: the signer's and --service-account-key-file's.
	PublicKeys []crypto.PublicKey
	// MaxExpiration is --service-account-max-token-expiration; 0 is none.
	MaxExpiration time.Duration
}

// Tokens signs and verifies service account tokens.
type Tokens struct {
	issuer    string
	audiences []string
	signer    crypto.Signer
	method    jwt.SigningMethod
	kid       string
	keys      map[string][]crypto.PublicKey // by key id
	all       []crypto.PublicKey
	maxExp    time.Duration
	now       func() time.Time
}

// New checks o and builds the token issuer and verifier.
func New(o Options) (*Tokens, error) {
	t := &Tokens{issuer: o.Issuer, audiences: o.APIAudiences, signer: o.Signer, maxExp: o.MaxExpiration,
		keys: map[string][]crypto.PublicKey{}, now: time.Now}
	if t.issuer == "" {
		t.issuer = DefaultIssuer
	}
	if len(t.audiences) == 0 {
		t.audiences = []string{t.issuer}
	}
	pubs := slices.Clone(o.PublicKeys)
	if o.Signer != nil {
		m, err := signingMethod(o.Signer.Public())
		if err != nil {
			return nil, err
		}
		t.method = m
		if t.kid, err = keyID(o.Signer.Public()); err != nil {
			return nil, err
		}
		pubs = append(pubs, o.Signer.Public())
	}
	if len(pubs) == 0 {
		return nil, errors.New("service accounts: no key to verify tokens with")
	}
	for _, p := range pubs {
		id, err := keyID(p)
		if err != nil {
			return nil, err
		}
		t.keys[id] = append(t.keys[id], p)
		t.all = append(t.all, p)
	}
	return t, nil
}

// signingMethod picks kube's algorithm for a key: RS256, or ES256/384/512
// by curve.
func signingMethod(pub crypto.PublicKey) (jwt.SigningMethod, error) {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return jwt.SigningMethodRS256, nil
	case *ecdsa.PublicKey:
		switch k.Curve.Params().BitSize {
		case 256:
			return jwt.SigningMethodES256, nil
		case 384:
			return jwt.SigningMethodES384, nil
		case 521:
			return jwt.SigningMethodES512, nil
		}
	}
	return nil, fmt.Errorf("service accounts: unsupported signing key %T", pub)
}

// Issuer is the tokens' iss.
func (t *Tokens) Issuer() string { return t.issuer }

// APIAudiences are the audiences the server accepts tokens for.
func (t *Tokens) APIAudiences() []string { return slices.Clone(t.audiences) }

// CanIssue reports whether a signing key is configured.
func (t *Tokens) CanIssue() bool { return t.signer != nil }

// Sign signs claims, setting iss.
func (t *Tokens) Sign(c *Claims) (string, error) {
	if t.signer == nil {
		return "", errors.New("no service account signing key is configured")
	}
	c.Issuer = t.issuer
	tok := jwt.NewWithClaims(t.method, c)
	tok.Header["kid"] = t.kid
	return tok.SignedString(t.signer)
}

// Verify checks a token's signature, times, issuer and audiences. want are
// the audiences it must be for (the API audiences when empty); matched are
// those it is for. ok is false when the token is not a JWT of this issuer,
// so another authenticator may know it; err is set when it is one but is
// not valid. The caller still checks that the service account (and bound
// object) exists.
func (t *Tokens) Verify(token string, want []string) (c *Claims, matched []string, ok bool, err error) {
	if !t.hasIssuer(token) {
		return nil, nil, false, nil
	}
	c = &Claims{}
	parser := jwt.NewParser(
		jwt.WithValidMethods([]string{"RS256", "RS384", "RS512", "ES256", "ES384", "ES512"}),
		jwt.WithLeeway(time.Minute), // go-jose's default leeway, as kube
		jwt.WithTimeFunc(t.now),
		jwt.WithIssuedAt(),
	)
	_, err = parser.ParseWithClaims(token, c, t.keyFunc)
	switch {
	case err == nil:
	case errors.Is(err, jwt.ErrTokenExpired):
		return nil, nil, false, errors.New("service account token has expired")
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return nil, nil, false, errors.New("service account token is not valid yet")
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return nil, nil, false, errors.New("service account token is issued in the future")
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return nil, nil, false, errors.New("invalid signature")
	default:
		return nil, nil, false, fmt.Errorf("invalid service account token: %v", err)
	}
	if c.Issuer != t.issuer {
		return nil, nil, false, fmt.Errorf("token issuer %q is invalid", c.Issuer)
	}
	if len(want) == 0 {
		want = t.audiences
	}
	tokenAuds := []string(c.Audience)
	if len(tokenAuds) == 0 {
		tokenAuds = t.audiences // a legacy token is for the API
	}
	for _, a := range tokenAuds {
		if slices.Contains(want, a) && !slices.Contains(matched, a) {
			matched = append(matched, a)
		}
	}
	if len(matched) == 0 {
		return nil, nil, false, fmt.Errorf("token audiences %q is invalid for the target audiences %q", tokenAuds, want)
	}
	if c.Kubernetes.ServiceAccount.Name == "" || c.Kubernetes.Namespace == "" {
		return nil, nil, false, errors.New("service account token has no service account claims")
	}
	return c, matched, true, nil
}

func (t *Tokens) keyFunc(tok *jwt.Token) (any, error) {
	keys := t.all
	if kid, _ := tok.Header["kid"].(string); kid != "" {
		keys = t.keys[kid]
	}
	if len(keys) == 0 {
		return nil, errors.New("invalid signature, no keys found")
	}
	set := jwt.VerificationKeySet{}
	for _, k := range keys {
		set.Keys = append(set.Keys, k)
	}
	return set, nil
}

// hasIssuer peeks at the unverified payload, as kube does, so tokens of
// other issuers are left to other authenticators.
func (t *Tokens) hasIssuer(token string) bool {
	if strings.HasPrefix(strings.TrimSpace(token), "{") {
		return false
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return false
	}
	var claims struct {
		Issuer string `json:"iss"`
	}
	if json.Unmarshal(payload, &claims) != nil {
		return false
	}
	return claims.Issuer == t.issuer
}

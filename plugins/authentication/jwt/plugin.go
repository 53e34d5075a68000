// Package jwt is the jwt authenticator: bearer JWTs from external OpenID
// Connect issuers, as kube-apiserver's JWT authenticator (structured
// authentication configuration `jwt:` entries, or the legacy --oidc-*
// flags).
package jwt

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	certutil "k8s.io/client-go/util/cert"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the authenticator's name in apiserver.yaml.
const Name = "jwt"

// maxIssuers is kube's limit on `jwt:` entries.
const maxIssuers = 64

// Config is the authenticator's config block.
type Config struct {
	// Issuers are kube's AuthenticationConfiguration `jwt:` entries, with
	// the `issuer:` fields one level up.
	Issuers []Issuer `koanf:"issuers"`
	// CacheTTL is how long a token that authenticated is believed without
	// verifying it again (never past its exp): kube-apiserver's token
	// success cache, 10 s. 0 verifies every request.
	CacheTTL config.Duration `koanf:"cacheTTL"`
}

// Issuer is one OpenID Connect issuer: kube's JWTAuthenticator.
type Issuer struct {
	// URL is the issuer, exactly as the tokens' iss says; https only.
	URL string `koanf:"url"`
	// DiscoveryURL, when set, is where the discovery document is fetched
	// from instead of URL + /.well-known/openid-configuration.
	DiscoveryURL string `koanf:"discoveryURL"`
	// Audiences: a token's aud must hold at least one of them.
	Audiences []string `koanf:"audiences"`
	// AudienceMatchPolicy is MatchAny (required with several audiences).
	AudienceMatchPolicy string `koanf:"audienceMatchPolicy"`
	// CertificateAuthority verifies the issuer's TLS certificate: PEM
	// inline (kube's field) or the path of a PEM file. Empty: system roots.
	CertificateAuthority string `koanf:"certificateAuthority"`
	// ClaimMappings map the claims to the user, by claim or CEL.
	ClaimMappings ClaimMappings `koanf:"claimMappings"`
	// ClaimValidationRules are claims that must hold a given value, or
	// CEL expressions on the claims that must be true.
	ClaimValidationRules []ClaimValidationRule `koanf:"claimValidationRules"`
	// UserValidationRules are CEL expressions on the mapped user.
	UserValidationRules []UserValidationRule `koanf:"userValidationRules"`

	caPEM []byte    // the CA, read by Validate
	cel   *compiled // the expressions, compiled by Validate
}

// UserValidationRule is kube's UserValidationRule.
type UserValidationRule struct {
	Expression string `koanf:"expression"`
	Message    string `koanf:"message"`
}

// ExtraMapping is kube's ExtraMapping.
type ExtraMapping struct {
	Key             string `koanf:"key"`
	ValueExpression string `koanf:"valueExpression"`
}

// ClaimMappings are kube's claimMappings.
type ClaimMappings struct {
	Username PrefixedClaim     `koanf:"username"`
	Groups   PrefixedClaim     `koanf:"groups"`
	UID      ClaimOrExpression `koanf:"uid"`
	Extra    []ExtraMapping    `koanf:"extra"`
}

// PrefixedClaim is kube's PrefixedClaimOrExpression.
type PrefixedClaim struct {
	Claim string `koanf:"claim"`
	// Prefix is required with claim ("" for none), as in kube's
	// structured configuration.
	Prefix     *string `koanf:"prefix"`
	Expression string  `koanf:"expression"`
}

// ClaimOrExpression is kube's ClaimOrExpression.
type ClaimOrExpression struct {
	Claim      string `koanf:"claim"`
	Expression string `koanf:"expression"`
}

// ClaimValidationRule is kube's ClaimValidationRule.
type ClaimValidationRule struct {
	Claim         string `koanf:"claim"`
	RequiredValue string `koanf:"requiredValue"`
	Expression    string `koanf:"expression"`
	Message       string `koanf:"message"`
}

func defaultConfig() *Config { return &Config{CacheTTL: 10 * time.Second} }

// Validate implements pipeline.Validator: kube's structured
// authentication configuration rules, with the first error reported
// under its key.
func (c *Config) Validate() error {
	if c.CacheTTL < 0 {
		return &config.FieldError{Key: "cacheTTL", Msg: fmt.Sprintf("must be 0 or more, got %s", c.CacheTTL)}
	}
	root := field.NewPath("issuers")
	var errs field.ErrorList
	switch {
	case len(c.Issuers) == 0:
		errs = append(errs, field.Required(root, "at least one issuer is required"))
	case len(c.Issuers) > maxIssuers:
		errs = append(errs, field.TooMany(root, len(c.Issuers), maxIssuers))
	}
	seenURLs := map[string]bool{}
	seenDiscovery := map[string]bool{}
	for i := range c.Issuers {
		is := &c.Issuers[i]
		p := root.Index(i)
		errs = append(errs, is.validate(p)...)
		if seenURLs[is.URL] {
			errs = append(errs, field.Duplicate(p.Child("url"), is.URL))
		}
		seenURLs[is.URL] = true
		if is.DiscoveryURL != "" {
			if seenDiscovery[is.DiscoveryURL] {
				errs = append(errs, field.Duplicate(p.Child("discoveryURL"), is.DiscoveryURL))
			}
			seenDiscovery[is.DiscoveryURL] = true
		}
	}
	return firstError(errs)
}

// firstError turns kube's field error into kpipe's: the key, then kube's
// "Invalid value: ...: detail".
func firstError(errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return &config.FieldError{Key: errs[0].Field, Msg: errs[0].ErrorBody()}
}

func (is *Issuer) validate(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if is.URL == "" {
		errs = append(errs, field.Required(p.Child("url"), ""))
	} else {
		errs = append(errs, validateURL(is.URL, p.Child("url"))...)
	}
	if is.DiscoveryURL != "" {
		if is.URL != "" && strings.TrimRight(is.URL, "/") == strings.TrimRight(is.DiscoveryURL, "/") {
			errs = append(errs, field.Invalid(p.Child("discoveryURL"), is.DiscoveryURL, "discoveryURL must be different from URL"))
		}
		errs = append(errs, validateURL(is.DiscoveryURL, p.Child("discoveryURL"))...)
	}
	errs = append(errs, validateAudiences(is.Audiences, is.AudienceMatchPolicy, p.Child("audiences"), p.Child("audienceMatchPolicy"))...)
	errs = append(errs, is.loadCA(p.Child("certificateAuthority"))...)
	errs = append(errs, validateClaimRules(is.ClaimValidationRules, p.Child("claimValidationRules"))...)
	errs = append(errs, validateMappings(&is.ClaimMappings, p.Child("claimMappings"))...)
	errs = append(errs, is.validateCEL(p)...)
	return errs
}

func validateURL(s string, p *field.Path) field.ErrorList {
	u, err := url.Parse(s)
	if err != nil {
		return field.ErrorList{field.Invalid(p, s, err.Error())}
	}
	var errs field.ErrorList
	if u.Scheme != "https" {
		errs = append(errs, field.Invalid(p, s, "URL scheme must be https"))
	}
	if u.User != nil {
		errs = append(errs, field.Invalid(p, s, "URL must not contain a username or password"))
	}
	if u.RawQuery != "" {
		errs = append(errs, field.Invalid(p, s, "URL must not contain a query"))
	}
	if u.Fragment != "" {
		errs = append(errs, field.Invalid(p, s, "URL must not contain a fragment"))
	}
	return errs
}

func validateAudiences(auds []string, policy string, p, policyPath *field.Path) field.ErrorList {
	if len(auds) == 0 {
		return field.ErrorList{field.Required(p, fmt.Sprintf("at least one %s is required", p))}
	}
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, a := range auds {
		if a == "" {
			errs = append(errs, field.Required(p.Index(i), ""))
		}
		if seen[a] {
			errs = append(errs, field.Duplicate(p.Index(i), a))
		}
		seen[a] = true
	}
	if len(auds) > 1 && policy != matchAny {
		errs = append(errs, field.Invalid(policyPath, policy, "audienceMatchPolicy must be MatchAny for multiple audiences"))
	}
	if len(auds) == 1 && policy != "" && policy != matchAny {
		errs = append(errs, field.Invalid(policyPath, policy, "audienceMatchPolicy must be empty or MatchAny for single audience"))
	}
	return errs
}

const matchAny = "MatchAny"

// loadCA reads certificateAuthority: inline PEM, as kube's field, or the
// path of a PEM file.
func (is *Issuer) loadCA(p *field.Path) field.ErrorList {
	ca := is.CertificateAuthority
	if ca == "" {
		return nil
	}
	shown := "<omitted>" // kube's, for inline PEM
	data := []byte(ca)
	if !strings.Contains(ca, "-----BEGIN") {
		shown = ca
		b, err := os.ReadFile(ca)
		if err != nil {
			return field.ErrorList{field.Invalid(p, shown, err.Error())}
		}
		data = b
	}
	if _, err := certutil.NewPoolFromBytes(data); err != nil {
		return field.ErrorList{field.Invalid(p, shown, err.Error())}
	}
	is.caPEM = data
	return nil
}

func validateClaimRules(rules []ClaimValidationRule, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, r := range rules {
		p := p.Index(i)
		switch {
		case r.Claim != "" && r.Expression != "":
			errs = append(errs, field.Invalid(p, r.Claim, "claim and expression can't both be set"))
		case r.Claim == "" && r.Expression == "":
			errs = append(errs, field.Required(p, "claim or expression is required"))
		case r.Claim != "":
			if r.Message != "" {
				errs = append(errs, field.Invalid(p.Child("message"), r.Message, "may not be specified when claim is set"))
			}
			if seen[r.Claim] {
				errs = append(errs, field.Duplicate(p.Child("claim"), r.Claim))
			}
			seen[r.Claim] = true
		default:
			if r.RequiredValue != "" {
				errs = append(errs, field.Invalid(p.Child("requiredValue"), r.RequiredValue, "may not be specified when expression is set"))
			}
		}
	}
	return errs
}

func validateMappings(m *ClaimMappings, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validatePrefixed(m.Username, p.Child("username"), true)...)
	errs = append(errs, validatePrefixed(m.Groups, p.Child("groups"), false)...)
	switch {
	case m.UID.Claim != "" && m.UID.Expression != "":
		errs = append(errs, field.Invalid(p.Child("uid"), "", "claim and expression can't both be set"))
	}
	return errs
}

func validatePrefixed(m PrefixedClaim, p *field.Path, required bool) field.ErrorList {
	switch {
	case m.Expression != "" && m.Claim != "":
		return field.ErrorList{field.Invalid(p, "", "claim and expression can't both be set")}
	case m.Expression == "" && m.Claim == "" && required:
		return field.ErrorList{field.Required(p, "claim or expression is required")}
	case m.Expression != "":
		if m.Prefix != nil {
			return field.ErrorList{field.Invalid(p.Child("prefix"), *m.Prefix, "may not be specified when expression is set")}
		}
	case m.Claim != "" && m.Prefix == nil:
		return field.ErrorList{field.Required(p.Child("prefix"), "prefix is required when claim is set. It can be set to an empty string to disable prefixing")}
	}
	return nil
}

// Register adds the authenticator to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindAuthenticator,
		Description: "authenticates bearer JWTs from external OpenID Connect issuers (discovery and JWKS over HTTPS), mapping claims to the user as kube's JWT authenticator.",
		Config:      func() any { return defaultConfig() },
		New: func(cfg any) (any, error) {
			c, ok := cfg.(*Config)
			if !ok {
				return nil, errors.New("jwt: wrong config type")
			}
			return New(c)
		},
	})
}

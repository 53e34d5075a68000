package jwt

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/pipeline/pipelinetest"
)

func TestConfig(t *testing.T) {
	testCA := selfSignedPEM(t)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, []byte(testCA), 0o600); err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(t.TempDir(), "junk.pem")
	if err := os.WriteFile(notPEM, []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	// issuer returns a valid issuer entry with changes applied.
	issuer := func(change func(m map[string]any)) map[string]any {
		m := map[string]any{
			"url":       "https://issuer.example.com",
			"audiences": []any{"kpipe"},
			"claimMappings": map[string]any{
				"username": map[string]any{"claim": "sub", "prefix": "oidc:"},
			},
		}
		if change != nil {
			change(m)
		}
		return m
	}
	one := func(change func(m map[string]any)) map[string]any {
		return map[string]any{"issuers": []any{issuer(change)}}
	}
	mappings := func(m map[string]any) map[string]any { return m["claimMappings"].(map[string]any) }
	const p = "pipeline[0] (jwt).config."
	tests := []struct {
		name    string
		raw     map[string]any
		wantKey string
		wantMsg string
	}{
		{name: "valid", raw: one(nil)},
		{name: "valid with everything", raw: one(func(m map[string]any) {
			m["discoveryURL"] = "https://discovery.example.com/.well-known/openid-configuration"
			m["audiences"] = []any{"a", "b"}
			m["audienceMatchPolicy"] = "MatchAny"
			m["certificateAuthority"] = caFile
			mappings(m)["groups"] = map[string]any{"claim": "groups", "prefix": ""}
			mappings(m)["uid"] = map[string]any{"claim": "sub"}
			m["claimValidationRules"] = []any{map[string]any{"claim": "hd", "requiredValue": "example.com"}}
		})},
		{name: "inline CA", raw: one(func(m map[string]any) { m["certificateAuthority"] = testCA })},
		{name: "empty prefix", raw: one(func(m map[string]any) { mappings(m)["username"] = map[string]any{"claim": "email", "prefix": ""} })},
		{name: "no issuers", raw: map[string]any{}, wantKey: p + "issuers", wantMsg: "Required value: at least one issuer is required"},
		{name: "unknown key", raw: one(func(m map[string]any) { m["issuer"] = "x" }), wantKey: p + "issuers[0].issuer", wantMsg: "unknown key"},
		{name: "missing url", raw: one(func(m map[string]any) { delete(m, "url") }), wantKey: p + "issuers[0].url", wantMsg: "Required value"},
		{name: "http url", raw: one(func(m map[string]any) { m["url"] = "http://issuer.example.com" }), wantKey: p + "issuers[0].url", wantMsg: `Invalid value: "http://issuer.example.com": URL scheme must be https`},
		{name: "url with user", raw: one(func(m map[string]any) { m["url"] = "https://u:p@issuer.example.com" }), wantKey: p + "issuers[0].url", wantMsg: "URL must not contain a username or password"},
		{name: "url with query", raw: one(func(m map[string]any) { m["url"] = "https://issuer.example.com?a=b" }), wantKey: p + "issuers[0].url", wantMsg: "URL must not contain a query"},
		{name: "url with fragment", raw: one(func(m map[string]any) { m["url"] = "https://issuer.example.com#x" }), wantKey: p + "issuers[0].url", wantMsg: "URL must not contain a fragment"},
		{name: "discovery same as url", raw: one(func(m map[string]any) { m["discoveryURL"] = "https://issuer.example.com/" }), wantKey: p + "issuers[0].discoveryURL", wantMsg: "discoveryURL must be different from URL"},
		{name: "no audiences", raw: one(func(m map[string]any) { delete(m, "audiences") }), wantKey: p + "issuers[0].audiences", wantMsg: "Required value: at least one issuers[0].audiences is required"},
		{name: "empty audience", raw: one(func(m map[string]any) { m["audiences"] = []any{""} }), wantKey: p + "issuers[0].audiences[0]", wantMsg: "Required value"},
		{name: "duplicate audience", raw: one(func(m map[string]any) {
			m["audiences"] = []any{"a", "a"}
			m["audienceMatchPolicy"] = "MatchAny"
		}), wantKey: p + "issuers[0].audiences[1]", wantMsg: `Duplicate value: "a"`},
		{name: "several audiences without MatchAny", raw: one(func(m map[string]any) { m["audiences"] = []any{"a", "b"} }), wantKey: p + "issuers[0].audienceMatchPolicy", wantMsg: "audienceMatchPolicy must be MatchAny for multiple audiences"},
		{name: "bad match policy", raw: one(func(m map[string]any) { m["audienceMatchPolicy"] = "MatchAll" }), wantKey: p + "issuers[0].audienceMatchPolicy", wantMsg: "audienceMatchPolicy must be empty or MatchAny for single audience"},
		{name: "missing CA file", raw: one(func(m map[string]any) { m["certificateAuthority"] = caFile + ".nope" }), wantKey: p + "issuers[0].certificateAuthority", wantMsg: "no such file"},
		{name: "CA file without certificates", raw: one(func(m map[string]any) { m["certificateAuthority"] = notPEM }), wantKey: p + "issuers[0].certificateAuthority", wantMsg: "data does not contain any valid RSA or ECDSA certificates"},
		{name: "bad inline CA", raw: one(func(m map[string]any) {
			m["certificateAuthority"] = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
		}), wantKey: p + "issuers[0].certificateAuthority", wantMsg: `Invalid value: "<omitted>"`},
		{name: "no username", raw: one(func(m map[string]any) { delete(mappings(m), "username") }), wantKey: p + "issuers[0].claimMappings.username", wantMsg: "Required value: claim or expression is required"},
		{name: "username without prefix", raw: one(func(m map[string]any) { mappings(m)["username"] = map[string]any{"claim": "sub"} }), wantKey: p + "issuers[0].claimMappings.username.prefix", wantMsg: "prefix is required when claim is set. It can be set to an empty string to disable prefixing"},
		{name: "groups without prefix", raw: one(func(m map[string]any) { mappings(m)["groups"] = map[string]any{"claim": "groups"} }), wantKey: p + "issuers[0].claimMappings.groups.prefix", wantMsg: "prefix is required when claim is set"},
		{name: "CEL everywhere", raw: one(func(m map[string]any) {
			mappings(m)["username"] = map[string]any{"expression": "claims.email"}
			mappings(m)["groups"] = map[string]any{"expression": "claims.roles"}
			mappings(m)["uid"] = map[string]any{"expression": "claims.sub"}
			mappings(m)["extra"] = []any{map[string]any{"key": "example.com/tenant", "valueExpression": "claims.tenant"}}
			m["claimValidationRules"] = []any{map[string]any{"expression": "claims.email_verified == true", "message": "verify your email"}}
			m["userValidationRules"] = []any{map[string]any{"expression": "!user.username.startsWith('system:')", "message": "no system users"}}
		})},
		{name: "username expression with prefix", raw: one(func(m map[string]any) {
			mappings(m)["username"] = map[string]any{"expression": "claims.sub", "prefix": "x:"}
		}), wantKey: p + "issuers[0].claimMappings.username.prefix", wantMsg: "may not be specified when expression is set"},
		{name: "username claim and expression", raw: one(func(m map[string]any) {
			mappings(m)["username"] = map[string]any{"claim": "sub", "expression": "claims.sub"}
		}), wantKey: p + "issuers[0].claimMappings.username", wantMsg: "claim and expression can't both be set"},
		{name: "expression that does not compile", raw: one(func(m map[string]any) { mappings(m)["uid"] = map[string]any{"expression": "claims.sub +"} }),
			wantKey: p + "issuers[0].claimMappings.uid.expression", wantMsg: `Invalid value: "claims.sub +": compilation failed: ERROR: <input>:1:13: Syntax error`},
		{name: "email without email_verified", raw: one(func(m map[string]any) { mappings(m)["username"] = map[string]any{"expression": "claims.email"} }),
			wantKey: p + "issuers[0].claimMappings.username.expression", wantMsg: "claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression"},
		{name: "email with email_verified", raw: one(func(m map[string]any) {
			mappings(m)["username"] = map[string]any{"expression": "claims.email_verified ? claims.email : ''"}
		})},
		{name: "extra key without domain", raw: one(func(m map[string]any) {
			mappings(m)["extra"] = []any{map[string]any{"key": "tenant", "valueExpression": "claims.t"}}
		}), wantKey: p + "issuers[0].claimMappings.extra[0].key", wantMsg: "domain-prefixed path"},
		{name: "extra key uppercase", raw: one(func(m map[string]any) {
			mappings(m)["extra"] = []any{map[string]any{"key": "example.com/Tenant", "valueExpression": "claims.t"}}
		}), wantKey: p + "issuers[0].claimMappings.extra[0].key", wantMsg: "must be lowercase"},
		{name: "extra key reserved", raw: one(func(m map[string]any) {
			mappings(m)["extra"] = []any{map[string]any{"key": "authentication.kubernetes.io/x", "valueExpression": "claims.t"}}
		}), wantKey: p + "issuers[0].claimMappings.extra[0].key", wantMsg: "k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use"},
		{name: "extra without expression", raw: one(func(m map[string]any) {
			mappings(m)["extra"] = []any{map[string]any{"key": "example.com/t"}}
		}), wantKey: p + "issuers[0].claimMappings.extra[0].valueExpression", wantMsg: "Required value"},
		{name: "user rule without expression", raw: one(func(m map[string]any) {
			m["userValidationRules"] = []any{map[string]any{"message": "m"}}
		}), wantKey: p + "issuers[0].userValidationRules[0].expression", wantMsg: "Required value"},
		{name: "user rule not a bool", raw: one(func(m map[string]any) {
			m["userValidationRules"] = []any{map[string]any{"expression": "user.username"}}
		}), wantKey: p + "issuers[0].userValidationRules[0].expression", wantMsg: "must evaluate to bool"},
		{name: "rule without claim", raw: one(func(m map[string]any) { m["claimValidationRules"] = []any{map[string]any{"requiredValue": "x"}} }), wantKey: p + "issuers[0].claimValidationRules[0]", wantMsg: "claim or expression is required"},
		{name: "rule expression not a bool", raw: one(func(m map[string]any) { m["claimValidationRules"] = []any{map[string]any{"expression": "claims.sub"}} }),
			wantKey: p + "issuers[0].claimValidationRules[0].expression", wantMsg: `Invalid value: "claims.sub": must evaluate to bool`},
		{name: "rule expression with requiredValue", raw: one(func(m map[string]any) {
			m["claimValidationRules"] = []any{map[string]any{"expression": "true", "requiredValue": "x"}}
		}), wantKey: p + "issuers[0].claimValidationRules[0].requiredValue", wantMsg: "may not be specified when expression is set"},
		{name: "duplicate rule expression", raw: one(func(m map[string]any) {
			m["claimValidationRules"] = []any{map[string]any{"expression": "true"}, map[string]any{"expression": "true"}}
		}), wantKey: p + "issuers[0].claimValidationRules[1].expression", wantMsg: "Duplicate value"},
		{name: "rule message with claim", raw: one(func(m map[string]any) {
			m["claimValidationRules"] = []any{map[string]any{"claim": "hd", "message": "m"}}
		}), wantKey: p + "issuers[0].claimValidationRules[0].message", wantMsg: "may not be specified when claim is set"},
		{name: "duplicate rule", raw: one(func(m map[string]any) {
			m["claimValidationRules"] = []any{map[string]any{"claim": "hd"}, map[string]any{"claim": "hd"}}
		}), wantKey: p + "issuers[0].claimValidationRules[1].claim", wantMsg: `Duplicate value: "hd"`},
		{name: "duplicate issuer", raw: map[string]any{"issuers": []any{issuer(nil), issuer(nil)}}, wantKey: p + "issuers[1].url", wantMsg: `Duplicate value: "https://issuer.example.com"`},
		{name: "duplicate discovery URL", raw: map[string]any{"issuers": []any{
			issuer(func(m map[string]any) { m["discoveryURL"] = "https://d.example.com" }),
			issuer(func(m map[string]any) {
				m["url"] = "https://other.example.com"
				m["discoveryURL"] = "https://d.example.com"
			}),
		}}, wantKey: p + "issuers[1].discoveryURL", wantMsg: "Duplicate value"},
		{name: "negative cacheTTL", raw: map[string]any{"issuers": []any{issuer(nil)}, "cacheTTL": "-1s"}, wantKey: p + "cacheTTL", wantMsg: "must be 0 or more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := pipelinetest.Build(t, Register, pipeline.KindAuthenticator, Name, tt.raw)
			pipelinetest.WantFieldError(t, err, tt.wantKey)
			if tt.wantMsg != "" {
				if fe := err.(*config.FieldError); !strings.Contains(fe.Msg, tt.wantMsg) {
					t.Errorf("message %q, want it to contain %q", fe.Msg, tt.wantMsg)
				}
			}
		})
	}
}

// selfSignedPEM makes a self-signed CA certificate, only parsed here.
func selfSignedPEM(t *testing.T) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "test-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

package jwt

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// allowedAlgs are kube's: the asymmetric JOSE algorithms. Structured
// authentication configuration accepts all of them.
var allowedAlgs = []string{"RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512"}

const (
	wellKnown = "/.well-known/openid-configuration"
	// discoveryInterval is kube's: discovery is tried every 10 s until it
	// succeeds.
	discoveryInterval = 10 * time.Second
	// minKeyRefresh bounds how often tokens naming unknown keys make the
	// key set be fetched again.
	minKeyRefresh = 5 * time.Second
	// clientTimeout is kube's timeout of requests to the issuer.
	clientTimeout = 30 * time.Second
)

// issuer verifies the tokens of one configured issuer.
type issuer struct {
	cfg            Issuer
	cel            *compiled
	usernamePrefix string
	groupsPrefix   string
	audiences      map[string]bool
	required       map[string]string
	hash           string // jwt_issuer_hash

	client *http.Client
	keys   atomic.Pointer[keySet] // nil until discovery succeeded
	tried  chan struct{}          // closed once discovery was first tried
	health atomic.Pointer[error]  // the last discovery error, nil when reached

	now               func() time.Time
	discoveryInterval time.Duration
	minKeyRefresh     time.Duration
}

func newIssuer(c Issuer) *issuer {
	is := &issuer{
		cfg:               c,
		audiences:         map[string]bool{},
		required:          map[string]string{},
		hash:              issuerHash(c.URL),
		now:               time.Now,
		discoveryInterval: discoveryInterval,
		minKeyRefresh:     minKeyRefresh,
		cel:               c.cel,
		tried:             make(chan struct{}),
	}
	if is.cel == nil {
		is.cel = &compiled{}
	}
	if p := c.ClaimMappings.Username.Prefix; p != nil {
		is.usernamePrefix = *p
	}
	if p := c.ClaimMappings.Groups.Prefix; p != nil {
		is.groupsPrefix = *p
	}
	for _, a := range c.Audiences {
		is.audiences[a] = true
	}
	for _, r := range c.ClaimValidationRules {
		is.required[r.Claim] = r.RequiredValue
	}
	var roots *x509.CertPool // nil: the system's roots
	if len(c.caPEM) > 0 {
		roots = x509.NewCertPool()
		roots.AppendCertsFromPEM(c.caPEM)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	is.client = &http.Client{Transport: tr, Timeout: clientTimeout}
	err := fmt.Errorf("oidc: authenticator for issuer %q is not initialized", c.URL)
	is.health.Store(&err)
	return is
}

// issuerHash is kube's jwt_issuer_hash label.
func issuerHash(s string) string {
	if s == "" {
		return ""
	}
	return fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(s)))
}

// run discovers the issuer, every discoveryInterval until it succeeds or
// ctx ends; kube serves meanwhile, and the issuer's tokens are refused.
func (is *issuer) run(ctx context.Context, log *zap.Logger) {
	t := time.NewTimer(0)
	defer t.Stop()
	var once sync.Once
	defer once.Do(func() { close(is.tried) })
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		jwksURL, err := is.discover(ctx)
		if err == nil {
			ks := &keySet{url: jwksURL, client: is.client, ctx: ctx, now: is.now, minRefresh: is.minKeyRefresh}
			// Fetch the keys now, so the first token need not wait; a
			// failure here is retried when a token arrives.
			if _, kerr := ks.refresh(ctx); kerr != nil {
				log.Warn("jwt authenticator: fetching keys", zap.String("issuer", is.cfg.URL), zap.Error(kerr))
			}
			is.keys.Store(ks)
			is.health.Store(nil)
			once.Do(func() { close(is.tried) })
			log.Info("jwt authenticator: issuer discovered", zap.String("issuer", is.cfg.URL), zap.String("jwks_uri", jwksURL))
			return
		}
		if ctx.Err() != nil {
			return
		}
		log.Error("jwt authenticator: initializing issuer", zap.String("issuer", is.cfg.URL), zap.Error(err))
		is.health.Store(&err)
		once.Do(func() { close(is.tried) })
		t.Reset(is.discoveryInterval)
	}
}

// discover fetches the issuer's OpenID configuration and returns its
// jwks_uri, checking that it names the configured issuer.
func (is *issuer) discover(ctx context.Context) (string, error) {
	u := strings.TrimSuffix(is.cfg.URL, "/") + wellKnown
	if is.cfg.DiscoveryURL != "" {
		u = is.cfg.DiscoveryURL
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := is.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return "", fmt.Errorf("unable to read response body: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", resp.Status, body)
	}
	var doc struct {
		Issuer  string `json:"issuer"`
		JWKSURL string `json:"jwks_uri"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return "", fmt.Errorf("oidc: failed to decode provider discovery object: %v", err)
	}
	if doc.Issuer != is.cfg.URL {
		return "", fmt.Errorf("oidc: issuer did not match the issuer returned by provider, expected %q got %q", is.cfg.URL, doc.Issuer)
	}
	if doc.JWKSURL == "" {
		return "", errors.New("provider did not return JWKS URL")
	}
	return doc.JWKSURL, nil
}

// healthy is kube's HealthCheck: nil once the issuer has been reached.
func (is *issuer) healthy() error {
	if p := is.health.Load(); p != nil {
		return fmt.Errorf("oidc: authenticator for issuer %q is not healthy: %w", is.cfg.URL, *p)
	}
	return nil
}

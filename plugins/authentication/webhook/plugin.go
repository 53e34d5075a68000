// Package webhook is the webhook token authenticator: kube-apiserver's
// --authentication-token-webhook-config-file, asking a remote service
// about bearer tokens with an authentication.k8s.io/v1 TokenReview.
package webhook

import (
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the authenticator's name in apiserver.yaml.
const Name = "webhook"

// Config is the authenticator's config block: kube's
// --authentication-token-webhook-* flags.
type Config struct {
	// KubeConfigFile names the remote service (clusters), its CA and the
	// credentials the server presents (users):
	// --authentication-token-webhook-config-file.
	KubeConfigFile string `koanf:"kubeConfigFile"`
	// Version is --authentication-token-webhook-version: v1 (the default
	// here) or v1beta1 (kube's flag default).
	Version string `koanf:"version"`
	// CacheTTL is how long an answer (authenticated or not) is kept:
	// --authentication-token-webhook-cache-ttl. 0 asks every time.
	CacheTTL config.Duration `koanf:"cacheTTL"`
}

// defaultConfig is kube-apiserver's: answers are kept for 2 minutes.
func defaultConfig() *Config {
	return &Config{Version: authenticationv1.SchemeGroupVersion.Version, CacheTTL: 2 * time.Minute}
}

// Validate implements pipeline.Validator.
func (c *Config) Validate() error {
	switch {
	case c.KubeConfigFile == "":
		return &config.FieldError{Key: "kubeConfigFile", Msg: "is required"}
	case c.Version != "v1" && c.Version != "v1beta1":
		return &config.FieldError{Key: "version", Msg: fmt.Sprintf("unsupported value %q: supported values are \"v1\", \"v1beta1\"", c.Version)}
	case c.CacheTTL < 0:
		return &config.FieldError{Key: "cacheTTL", Msg: fmt.Sprintf("must be 0 or more, got %s", c.CacheTTL)}
	}
	return nil
}

// Register adds the authenticator to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindAuthenticator,
		Description: "asks a remote service about bearer tokens with a TokenReview (kube's token webhook); answers are cached for cacheTTL.",
		Config:      func() any { return defaultConfig() },
		New:         func(cfg any) (any, error) { return New(cfg.(*Config)) },
	})
}

// Package webhook is the webhook authorizer: kube-apiserver's
// --authorization-mode=Webhook, asking a remote service with an
// authorization.k8s.io/v1 SubjectAccessReview.
package webhook

import (
	"fmt"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/admission/cel"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the authorizer's name in apiserver.yaml.
const Name = "webhook"

// Failure policies: what a failed call decides.
const (
	FailurePolicyNoOpinion = "NoOpinion"
	FailurePolicyDeny      = "Deny"
)

// maxTimeout is kube's bound on an AuthorizationConfiguration webhook's
// timeout.
const maxTimeout = 30 * time.Second

// Config is the authorizer's config block: kube's --authorization-webhook-*
// flags and the fields of an AuthorizationConfiguration webhook.
type Config struct {
	// Name labels the metrics (kube's authorizer name; the flags give
	// "default").
	Name string `koanf:"name"`
	// KubeConfigFile names the remote service (clusters), its CA and the
	// credentials the server presents (users): --authorization-webhook-config-file.
	KubeConfigFile string `koanf:"kubeConfigFile"`
	// SubjectAccessReviewVersion is --authorization-webhook-version: v1
	// (the default here) or v1beta1 (kube's flag default).
	SubjectAccessReviewVersion string `koanf:"subjectAccessReviewVersion"`
	// AuthorizedTTL and UnauthorizedTTL are how long allowed and
	// not-allowed answers are kept: --authorization-webhook-cache-(un)authorized-ttl.
	// 0 keeps none (cacheAuthorizedRequests: false).
	AuthorizedTTL   config.Duration `koanf:"authorizedTTL"`
	UnauthorizedTTL config.Duration `koanf:"unauthorizedTTL"`
	// Timeout bounds one call (at most 30s).
	Timeout config.Duration `koanf:"timeout"`
	// FailurePolicy is what a failed call decides: NoOpinion (the next
	// authorizer is asked) or Deny.
	FailurePolicy string `koanf:"failurePolicy"`
	// MatchConditions are CEL expressions over `request` (the review's
	// spec): the webhook is asked only when all are true; one false
	// skips it (NoOpinion), an error decides by failurePolicy.
	MatchConditions []MatchCondition `koanf:"matchConditions"`
}

// MatchCondition is one CEL expression of matchConditions.
type MatchCondition struct {
	Expression string `koanf:"expression"`
}

// maxMatchConditions is kube's bound.
const maxMatchConditions = 64

// defaultConfig is kube-apiserver's: the flags' TTLs, the timeout and
// failure policy the flags imply.
func defaultConfig() *Config {
	return &Config{
		Name:                       "default",
		SubjectAccessReviewVersion: authorizationv1.SchemeGroupVersion.Version,
		AuthorizedTTL:              5 * time.Minute,
		UnauthorizedTTL:            30 * time.Second,
		Timeout:                    30 * time.Second,
		FailurePolicy:              FailurePolicyNoOpinion,
	}
}

// Validate implements pipeline.Validator.
func (c *Config) Validate() error {
	switch {
	case c.Name == "":
		return &config.FieldError{Key: "name", Msg: "is required"}
	case c.KubeConfigFile == "":
		return &config.FieldError{Key: "kubeConfigFile", Msg: "is required"}
	case c.SubjectAccessReviewVersion != "v1" && c.SubjectAccessReviewVersion != "v1beta1":
		return &config.FieldError{Key: "subjectAccessReviewVersion", Msg: fmt.Sprintf("unsupported value %q: supported values are \"v1\", \"v1beta1\"", c.SubjectAccessReviewVersion)}
	case c.AuthorizedTTL < 0:
		return &config.FieldError{Key: "authorizedTTL", Msg: fmt.Sprintf("must be 0 or more, got %s", c.AuthorizedTTL)}
	case c.UnauthorizedTTL < 0:
		return &config.FieldError{Key: "unauthorizedTTL", Msg: fmt.Sprintf("must be 0 or more, got %s", c.UnauthorizedTTL)}
	case c.Timeout <= 0 || c.Timeout > maxTimeout:
		return &config.FieldError{Key: "timeout", Msg: fmt.Sprintf("must be more than 0 and no more than 30s, got %s", c.Timeout)}
	case c.FailurePolicy != FailurePolicyNoOpinion && c.FailurePolicy != FailurePolicyDeny:
		return &config.FieldError{Key: "failurePolicy", Msg: fmt.Sprintf("unsupported value %q: supported values are \"NoOpinion\", \"Deny\"", c.FailurePolicy)}
	case len(c.MatchConditions) > maxMatchConditions:
		return &config.FieldError{Key: "matchConditions", Msg: fmt.Sprintf("must have at most %d items, got %d", maxMatchConditions, len(c.MatchConditions))}
	}
	seen := map[string]bool{}
	for i, m := range c.MatchConditions {
		key := fmt.Sprintf("matchConditions[%d].expression", i)
		switch {
		case strings.TrimSpace(m.Expression) == "":
			return &config.FieldError{Key: key, Msg: "is required"}
		case seen[m.Expression]:
			return &config.FieldError{Key: key, Msg: fmt.Sprintf("duplicate value %q", m.Expression)}
		}
		seen[m.Expression] = true
		if x := cel.CompileAuthorizationMatchCondition(m.Expression); x.Err != nil {
			return &config.FieldError{Key: key, Msg: x.Err.Error()}
		}
	}
	return nil
}

// Register adds the authorizer to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindAuthorizer,
		Description: "asks a remote service with a SubjectAccessReview (kube's Webhook mode); answers are cached for authorizedTTL/unauthorizedTTL.",
		Config:      func() any { return defaultConfig() },
		New:         func(cfg any) (any, error) { return New(cfg.(*Config)) },
	})
}

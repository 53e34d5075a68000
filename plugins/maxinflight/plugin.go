// Package maxinflight is the max-inflight stage: it caps the requests served
// at once, read-only and mutating separately, and turns the excess away at
// once with 429 so an overloaded server sheds load instead of queueing it.
package maxinflight

import (
	"fmt"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the stage's name in apiserver.yaml.
const Name = "max-inflight"

// Config is the stage's config block.
type Config struct {
	// MaxRequestsInflight caps read-only requests (get, list) in flight; 0
	// means unlimited.
	MaxRequestsInflight int `koanf:"maxRequestsInflight"`
	// MaxMutatingRequestsInflight caps mutating requests in flight; 0 means
	// unlimited.
	MaxMutatingRequestsInflight int `koanf:"maxMutatingRequestsInflight"`
}

// defaultConfig returns kube-apiserver's defaults.
func defaultConfig() *Config {
	return &Config{MaxRequestsInflight: 400, MaxMutatingRequestsInflight: 200}
}

// Validate implements pipeline.Validator.
func (c *Config) Validate() error {
	if c.MaxRequestsInflight < 0 {
		return &config.FieldError{Key: "maxRequestsInflight", Msg: fmt.Sprintf("must be 0 (unlimited) or more, got %d", c.MaxRequestsInflight)}
	}
	if c.MaxMutatingRequestsInflight < 0 {
		return &config.FieldError{Key: "maxMutatingRequestsInflight", Msg: fmt.Sprintf("must be 0 (unlimited) or more, got %d", c.MaxMutatingRequestsInflight)}
	}
	return nil
}

// Register adds the stage to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindStage,
		Description: "rejects requests past the in-flight limits with 429; long-running requests are exempt.",
		Config:      func() any { return defaultConfig() },
		New:         func(cfg any) (any, error) { return newLimiter(cfg.(*Config)), nil },
		Requires:    []string{"request-info"},
	})
}

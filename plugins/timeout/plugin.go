// Package timeout is the timeout stage: it answers 504 when a request that
// is not long-running outlives its deadline, and gives the rest of the
// pipeline a context that ends at that deadline.
package timeout

import (
	"fmt"
	"time"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the stage's name in apiserver.yaml.
const Name = "timeout"

// Config is the stage's config block.
type Config struct {
	// RequestTimeout is the longest a request that is not long-running may
	// take. A shorter ?timeout= on the request wins.
	RequestTimeout config.Duration `koanf:"requestTimeout"`
}

// defaultConfig returns kube-apiserver's --request-timeout default.
func defaultConfig() *Config {
	return &Config{RequestTimeout: 60 * time.Second}
}

// Validate implements pipeline.Validator.
func (c *Config) Validate() error {
	if c.RequestTimeout <= 0 {
		return &config.FieldError{Key: "requestTimeout", Msg: fmt.Sprintf("must be more than 0, got %s", c.RequestTimeout)}
	}
	return nil
}

// Register adds the stage to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindStage,
		Description: "answers 504 when a request that is not long-running outlives requestTimeout or its ?timeout=.",
		Config:      func() any { return defaultConfig() },
		New:         func(cfg any) (any, error) { return newTimeout(cfg.(*Config)), nil },
		Requires:    []string{"request-info"},
	})
}

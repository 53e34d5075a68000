// Package decode is the decode stage: the body limit, and the Operation a
// write works on (options, the decoded and defaulted object, the live
// object, patches applied to it).
package decode

import (
	"fmt"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the stage's name in apiserver.yaml.
const Name = "decode"

// Config is the stage's config block.
type Config struct {
	// MaxRequestBodyBytes is the largest request body accepted.
	MaxRequestBodyBytes int64 `koanf:"maxRequestBodyBytes"`
}

// defaultMaxBody is kube-apiserver's default body limit, 3 MiB. A YAML
// body's aliases may not expand it past the same limit.
const defaultMaxBody = 3 * 1024 * 1024

// defaultConfig returns kube-apiserver's default limit.
func defaultConfig() *Config {
	return &Config{MaxRequestBodyBytes: defaultMaxBody}
}

// Validate implements pipeline.Validator.
func (c *Config) Validate() error {
	if c.MaxRequestBodyBytes <= 0 {
		return &config.FieldError{Key: "maxRequestBodyBytes", Msg: fmt.Sprintf("must be more than 0, got %d", c.MaxRequestBodyBytes)}
	}
	return nil
}

// Register adds the stage to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindStage,
		Description: "reads the body (413 past maxRequestBodyBytes) and builds the write's Operation: options, decoding, patches, defaults, live object.",
		Config:      func() any { return defaultConfig() },
		New:         func(cfg any) (any, error) { return newDecoder(cfg.(*Config)), nil },
		Requires:    []string{"request-info"},
	})
}

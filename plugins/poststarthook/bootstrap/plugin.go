// Package bootstrap is the bootstrap-controller post-start hook: the
// cluster's own fixtures, kept present as kube-apiserver's bootstrap
// controller keeps them.
package bootstrap

import (
	"time"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the hook's name in apiserver.yaml's postStartHooks.
const Name = "bootstrap-controller"

// Config is the hook's config block.
type Config struct {
	// SystemNamespacesInterval is how often the system namespaces are
	// checked and recreated when missing.
	SystemNamespacesInterval time.Duration `koanf:"systemNamespacesInterval"`
}

func defaultConfig() *Config {
	return &Config{SystemNamespacesInterval: time.Minute}
}

// Validate implements pipeline.Validator.
func (c *Config) Validate() error {
	if c.SystemNamespacesInterval <= 0 {
		return &config.FieldError{Key: "systemNamespacesInterval", Msg: "must be positive"}
	}
	return nil
}

// Register adds the hook to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindPostStartHook,
		Description: "keeps the system namespaces (default, kube-system, kube-public, kube-node-lease) present.",
		Config:      func() any { return defaultConfig() },
		New:         func(c any) (any, error) { return &Controller{cfg: c.(*Config)}, nil },
	})
}

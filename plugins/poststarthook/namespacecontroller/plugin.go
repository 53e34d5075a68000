// Package namespacecontroller is the namespace-controller post-start hook:
// it empties namespaces being deleted and then removes them, the job
// kube leaves to kube-controller-manager, so `kubectl delete namespace`
// completes against kpipe alone.
package namespacecontroller

import (
	"time"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the hook's name in apiserver.yaml's postStartHooks.
const Name = "namespace-controller"

// Config is the hook's config block.
type Config struct {
	// Interval is how often namespaces being deleted are looked for.
	Interval time.Duration `koanf:"interval"`
}

// Validate implements pipeline.Validator.
func (c *Config) Validate() error {
	if c.Interval <= 0 {
		return &config.FieldError{Key: "interval", Msg: "must be positive"}
	}
	return nil
}

// Register adds the hook to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindPostStartHook,
		Description: "deletes everything in a terminating namespace, then finalizes it.",
		Config:      func() any { return &Config{Interval: time.Second} },
		New:         func(c any) (any, error) { return &Controller{cfg: c.(*Config)}, nil },
	})
}

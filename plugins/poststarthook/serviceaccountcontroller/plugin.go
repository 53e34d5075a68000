// Package serviceaccountcontroller is the serviceaccount-controller
// post-start hook: it keeps a `default` ServiceAccount in every active
// namespace, the job kube leaves to kube-controller-manager, so pods
// admitted by the ServiceAccount plugin find their account.
package serviceaccountcontroller

import (
	"fmt"
	"time"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the hook's name in apiserver.yaml's postStartHooks.
const Name = "serviceaccount-controller"

// Config is the hook's config block.
type Config struct {
	// ServiceAccounts are the accounts kept in every namespace.
	ServiceAccounts []string `koanf:"serviceAccounts"`
	// Resync is how often every namespace is checked again, besides the
	// watch.
	Resync time.Duration `koanf:"resync"`
}

// Validate implements pipeline.Validator.
func (c *Config) Validate() error {
	if c.Resync <= 0 {
		return &config.FieldError{Key: "resync", Msg: "must be positive"}
	}
	for i, n := range c.ServiceAccounts {
		if n == "" {
			return &config.FieldError{Key: fmt.Sprintf("serviceAccounts[%d]", i), Msg: "must not be empty"}
		}
	}
	return nil
}

// Register adds the hook to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindPostStartHook,
		Description: "keeps a default ServiceAccount in every namespace.",
		Config:      func() any { return &Config{ServiceAccounts: []string{"default"}, Resync: 30 * time.Second} },
		New:         func(c any) (any, error) { return &Controller{cfg: c.(*Config)}, nil },
	})
}

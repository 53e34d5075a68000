// Package resourcequotacontroller is the resourcequota-controller
// post-start hook, kube-controller-manager's quota controller: it fills
// a new ResourceQuota's status.hard and status.used, and recalculates
// status.used when objects are deleted (releasing what the ResourceQuota
// admission plugin charged) and every resync period.
package resourcequotacontroller

import (
	"time"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the hook's name in apiserver.yaml's postStartHooks.
const Name = "resourcequota-controller"

// Config is the hook's config block.
type Config struct {
	// Resync recalculates every quota this often (kube's
	// --resource-quota-sync-period, 5m).
	Resync time.Duration `koanf:"resync"`
	// Workers recalculate quotas in parallel.
	Workers int `koanf:"workers"`
}

// Validate implements pipeline.Validator.
func (c *Config) Validate() error {
	if c.Resync <= 0 {
		return &config.FieldError{Key: "resync", Msg: "must be positive"}
	}
	if c.Workers <= 0 {
		return &config.FieldError{Key: "workers", Msg: "must be positive"}
	}
	return nil
}

// Register adds the hook to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindPostStartHook,
		Description: "computes ResourceQuota status.hard and status.used, releasing usage of deleted objects.",
		Config:      func() any { return &Config{Resync: 5 * time.Minute, Workers: 2} },
		New:         func(c any) (any, error) { return &Controller{cfg: c.(*Config)}, nil },
	})
}

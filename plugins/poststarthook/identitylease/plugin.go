// Package identitylease is the apiserver-identity-lease post-start hook:
// each server keeps a coordination.k8s.io/v1 Lease naming it in
// kube-system, as kube-apiserver's identity lease controller does, and
// removes the expired leases of servers that are gone.
package identitylease

import (
	"time"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the hook's name in apiserver.yaml's postStartHooks.
const Name = "apiserver-identity-lease"

// Config is the hook's config block.
type Config struct {
	// LeaseDuration is the lease's spec.leaseDurationSeconds: how long
	// after its last renewal another server may collect it (kube: 1h).
	LeaseDuration time.Duration `koanf:"leaseDuration"`
	// RenewInterval is how often the lease is renewed (kube: 10s).
	RenewInterval time.Duration `koanf:"renewInterval"`
	// GCInterval is how often expired leases of other servers are deleted
	// (kube: 1h).
	GCInterval time.Duration `koanf:"gcInterval"`
}

// Validate implements pipeline.Validator.
func (c *Config) Validate() error {
	if c.LeaseDuration < time.Second {
		return &config.FieldError{Key: "leaseDuration", Msg: "must be at least 1s"}
	}
	if c.RenewInterval <= 0 {
		return &config.FieldError{Key: "renewInterval", Msg: "must be positive"}
	}
	if c.RenewInterval >= c.LeaseDuration {
		return &config.FieldError{Key: "renewInterval", Msg: "must be shorter than leaseDuration"}
	}
	if c.GCInterval <= 0 {
		return &config.FieldError{Key: "gcInterval", Msg: "must be positive"}
	}
	return nil
}

// Register adds the hook to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindPostStartHook,
		Description: "keeps this server's identity Lease in kube-system renewed and deletes other servers' expired ones.",
		Config: func() any {
			return &Config{LeaseDuration: time.Hour, RenewInterval: 10 * time.Second, GCInterval: time.Hour}
		},
		New: func(c any) (any, error) { return &Controller{cfg: c.(*Config)}, nil },
	})
}

// Package bootstrap is the bootstrap-controller post-start and
// pre-shutdown hook: the cluster's own fixtures (the system namespaces,
// the `kubernetes` Service with its Endpoints and EndpointSlice, the
// repair of the service IP and node port bitmaps), kept present as
// kube-apiserver's bootstrap controller keeps them.
package bootstrap

import (
	"time"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the hook's name in apiserver.yaml's postStartHooks.
const Name = "bootstrap-controller"

// Endpoint reconciler types, kube's --endpoint-reconciler-type values.
const (
	ReconcilerLease = "lease"
	ReconcilerNone  = "none"
)

// Config is the hook's config block.
type Config struct {
	// SystemNamespacesInterval is how often the system namespaces are
	// checked and recreated when missing.
	SystemNamespacesInterval time.Duration `koanf:"systemNamespacesInterval"`
	// EndpointInterval is how often the default namespace, the kubernetes
	// Service and its endpoints are checked, and this server's lease renewed.
	EndpointInterval time.Duration `koanf:"endpointInterval"`
	// EndpointReconcilerType is kube's --endpoint-reconciler-type: lease
	// (each server keeps a lease key; the endpoints list the live ones) or
	// none (the endpoints are the operator's).
	EndpointReconcilerType string `koanf:"endpointReconcilerType"`
	// EndpointReconcilerTTL is the life of a server's lease key
	// (/registry/masterleases/<ip>) when it stops renewing it.
	EndpointReconcilerTTL time.Duration `koanf:"endpointReconcilerTTL"`
	// RepairInterval is how often the service IP and node port bitmaps are
	// reconciled with the services that exist.
	RepairInterval time.Duration `koanf:"repairInterval"`
}

func defaultConfig() *Config {
	return &Config{
		SystemNamespacesInterval: time.Minute,
		EndpointInterval:         10 * time.Second,
		EndpointReconcilerType:   ReconcilerLease,
		EndpointReconcilerTTL:    15 * time.Second,
		RepairInterval:           3 * time.Minute,
	}
}

// Validate implements pipeline.Validator.
func (c *Config) Validate() error {
	for _, f := range []struct {
		key string
		d   time.Duration
	}{
		{"systemNamespacesInterval", c.SystemNamespacesInterval},
		{"endpointInterval", c.EndpointInterval},
		{"repairInterval", c.RepairInterval},
	} {
		if f.d <= 0 {
			return &config.FieldError{Key: f.key, Msg: "must be positive"}
		}
	}
	switch c.EndpointReconcilerType {
	case ReconcilerLease:
		// etcd leases count whole seconds.
		if c.EndpointReconcilerTTL < time.Second {
			return &config.FieldError{Key: "endpointReconcilerTTL", Msg: "must be at least 1s"}
		}
	case ReconcilerNone:
	default:
		return &config.FieldError{Key: "endpointReconcilerType", Msg: `must be "lease" or "none"`}
	}
	return nil
}

// Register adds the hook to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindPostStartHook,
		Description: "keeps the system namespaces, the kubernetes Service and its endpoints present, and repairs service IP and node port allocations.",
		Config:      func() any { return defaultConfig() },
		New:         func(c any) (any, error) { return &Controller{cfg: c.(*Config)}, nil },
	})
}

// Package serviceaccount is kube's ServiceAccount admission plugin: a new
// pod runs as the `default` service account unless it names one, the
// account must exist, and unless automounting is turned off the pod gets
// the projected kube-api-access-<random> token volume mounted in every
// container.
package serviceaccount

import (
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the plugin's name in both admission lists.
const Name = "ServiceAccount"

// Config is the plugin's config block.
type Config struct {
	// MountServiceAccountToken adds the token volume to pods that
	// automount it (kube's default, true).
	MountServiceAccountToken bool `koanf:"mountServiceAccountToken"`
	// LimitSecretReferences refuses pods referencing secrets their service
	// account does not list, for every account rather than only those
	// annotated kubernetes.io/enforce-mountable-secrets.
	LimitSecretReferences bool `koanf:"limitSecretReferences"`
}

// Register adds the plugin to both admission lists: the defaults and the
// mount are set in mutating-admission, the account is checked again in
// validating-admission, as kube runs its Admit and Validate phases.
func Register(r *pipeline.Registry) {
	for _, k := range []pipeline.Kind{pipeline.KindMutatingAdmission, pipeline.KindValidatingAdmission} {
		r.MustRegister(pipeline.Plugin{
			Name:        Name,
			Kind:        k,
			Description: "defaults a pod's service account, checks it exists and mounts its API token.",
			Config:      func() any { return &Config{MountServiceAccountToken: true} },
			New:         func(c any) (any, error) { return &Plugin{cfg: *c.(*Config)}, nil },
		})
	}
}

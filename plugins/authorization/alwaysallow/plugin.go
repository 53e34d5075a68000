// Package alwaysallow is kube's AlwaysAllow authorizer: every request is
// allowed. Meant for tests and trusted single-user setups.
package alwaysallow

import (
	"context"

	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the authorizer's name in apiserver.yaml.
const Name = "always-allow"

// Register adds the authorizer to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindAuthorizer,
		Description: "allows every request (kube's AlwaysAllow).",
		New:         func(any) (any, error) { return Authorizer{}, nil },
	})
}

// Authorizer allows everything.
type Authorizer struct{}

var _ auth.Authorizer = Authorizer{}

// Authorize implements auth.Authorizer.
func (Authorizer) Authorize(context.Context, *auth.Attributes) (auth.Decision, string, error) {
	return auth.Allow, "", nil
}

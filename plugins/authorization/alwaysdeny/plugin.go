// Package alwaysdeny is kube's AlwaysDeny authorizer: it allows nothing.
// Like kube's, it answers NoOpinion with the reason "Everything is
// forbidden.", so an authorizer listed after it may still allow.
package alwaysdeny

import (
	"context"

	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the authorizer's name in apiserver.yaml.
const Name = "always-deny"

// Reason is kube's reason, appended to the Forbidden message.
const Reason = "Everything is forbidden."

// Register adds the authorizer to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindAuthorizer,
		Description: "allows nothing (kube's AlwaysDeny).",
		New:         func(any) (any, error) { return Authorizer{}, nil },
	})
}

// Authorizer has no opinion on anything, with kube's reason.
type Authorizer struct{}

var _ auth.Authorizer = Authorizer{}

// Authorize implements auth.Authorizer.
func (Authorizer) Authorize(context.Context, *auth.Attributes) (auth.Decision, string, error) {
	return auth.NoOpinion, Reason, nil
}

// AuthorizerName is kube's union name of the AlwaysDeny mode, which
// prefixes its reason in the 403.
func (Authorizer) AuthorizerName() string { return "alwaysdeny" }

// Package authentication is the authentication stage.
package authentication

import "github.com/kpipe/kpipe/internal/pipeline"

// Name is the stage's name in apiserver.yaml.
const Name = "authentication"

// Register adds the stage to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindStage,
		Description: "authenticates the request with an ordered list of authenticators.",
		New:         func(any) (any, error) { return pipeline.PassThrough, nil },
		Requires:    []string{"request-info"},
	})
}

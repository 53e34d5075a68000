// Package authorization is the authorization stage.
package authorization

import "github.com/kpipe/kpipe/internal/pipeline"

// Name is the stage's name in apiserver.yaml.
const Name = "authorization"

// Register adds the stage to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindStage,
		Description: "authorizes the request with an ordered list of authorizers.",
		New:         func(any) (any, error) { return pipeline.PassThrough, nil },
		Requires:    []string{"authentication"},
		After:       []string{"impersonation", "audit"},
	})
}

// Package mutating is the mutating-admission stage.
package mutating

import "github.com/kpipe/kpipe/internal/pipeline"

// Name is the stage's name in apiserver.yaml.
const Name = "mutating-admission"

// Register adds the stage to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindStage,
		Description: "runs the ordered list of mutating admission plugins.",
		New:         func(any) (any, error) { return pipeline.PassThrough, nil },
		Requires:    []string{"decode"},
		After:       []string{"field-manager", "authorization"},
	})
}

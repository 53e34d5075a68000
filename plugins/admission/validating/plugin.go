// Package validating is the validating-admission stage.
package validating

import "github.com/kpipe/kpipe/internal/pipeline"

// Name is the stage's name in apiserver.yaml.
const Name = "validating-admission"

// Register adds the stage to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindStage,
		Description: "runs the ordered list of validating admission plugins.",
		New:         func(any) (any, error) { return pipeline.PassThrough, nil },
		Requires:    []string{"decode"},
		After:       []string{"validate", "mutating-admission"},
	})
}

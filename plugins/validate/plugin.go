// Package validate is the validate stage: what kube-apiserver's
// rest.BeforeCreate and BeforeUpdate do to an object before admission's
// validating phase and storage.
package validate

import "github.com/kpipe/kpipe/internal/pipeline"

// Name is the stage's name in apiserver.yaml.
const Name = "validate"

// Register adds the stage to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindStage,
		Description: "fills system fields and validates the object by its type's strategy.",
		New:         func(any) (any, error) { return &Stage{}, nil },
		Requires:    []string{"decode"},
		After:       []string{"mutating-admission"},
	})
}

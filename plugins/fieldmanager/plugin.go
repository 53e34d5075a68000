// Package fieldmanager is the field-manager stage.
package fieldmanager

import "github.com/kpipe/kpipe/internal/pipeline"

// Name is the stage's name in apiserver.yaml.
const Name = "field-manager"

// Register adds the stage to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindStage,
		Description: "keeps metadata.managedFields and runs server-side apply.",
		New:         func(any) (any, error) { return pipeline.PassThrough, nil },
		Requires:    []string{"decode"},
	})
}

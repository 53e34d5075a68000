// Package audit is the audit stage.
package audit

import "github.com/kpipe/kpipe/internal/pipeline"

// Name is the stage's name in apiserver.yaml.
const Name = "audit"

// Register adds the stage to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindStage,
		Description: "writes audit.k8s.io/v1 events by policy.",
		New:         func(any) (any, error) { return pipeline.PassThrough, nil },
		Requires:    []string{"authentication"},
	})
}

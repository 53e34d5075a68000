// Package etcdwriter is the etcd-writer stage.
package etcdwriter

import "github.com/kpipe/kpipe/internal/pipeline"

// Name is the stage's name in apiserver.yaml.
const Name = "etcd-writer"

// Register adds the stage to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindStage,
		Description: "the terminal stage: storage and the response.",
		New:         func(any) (any, error) { return pipeline.PassThrough, nil },
		Requires:    []string{"request-info"},
		Terminal:    true,
	})
}

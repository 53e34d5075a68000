// Package etcdwriter is the terminal stage: it serves resource requests
// from storage and writes the response. Everything that is not a resource
// request (health, version, metrics, discovery) it hands to the server's
// non-resource endpoints.
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
		New:         func(any) (any, error) { return &Writer{}, nil },
		Requires:    []string{"request-info"},
		Terminal:    true,
	})
}

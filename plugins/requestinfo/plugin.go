// Package requestinfo is the request-info stage: it resolves the request's
// RequestInfo (verb, group, version, resource, namespace, name) once, for
// every later stage and for the engine's metrics.
package requestinfo

import "github.com/kpipe/kpipe/internal/pipeline"

// Name is the stage's name in apiserver.yaml.
const Name = "request-info"

// Register adds the stage to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindStage,
		Description: "resolves the request's verb, group, version, resource, namespace and name.",
		New:         func(any) (any, error) { return newStage(), nil },
	})
}

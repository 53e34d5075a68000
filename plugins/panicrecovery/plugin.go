// Package panicrecovery is the panic-recovery stage: it turns a panic in any
// later stage into a 500 Status, so one bad request never takes the server
// or its connection down.
package panicrecovery

import "github.com/kpipe/kpipe/internal/pipeline"

// Name is the stage's name in apiserver.yaml.
const Name = "panic-recovery"

// Register adds the stage to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindStage,
		Description: "answers a panic in any later stage with a 500 Status and logs it with its stack.",
		New:         func(any) (any, error) { return newRecovery(), nil },
	})
}

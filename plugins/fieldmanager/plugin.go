// Package fieldmanager is the field-manager stage: it keeps
// metadata.managedFields on every create, update and patch, and merges
// server-side apply patches into the live object, as kube-apiserver's
// handlers do with k8s.io/apimachinery's managedfields.
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
		New:         func(any) (any, error) { return newStage(), nil },
		Requires:    []string{"decode"},
	})
}

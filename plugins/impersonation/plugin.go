// Package impersonation is the impersonation stage: it acts on the
// Impersonate-User, Impersonate-Group, Impersonate-Uid and
// Impersonate-Extra-* headers as kube-apiserver's WithImpersonation filter
// does, authorizing each with the impersonate verb.
package impersonation

import "github.com/kpipe/kpipe/internal/pipeline"

// Name is the stage's name in apiserver.yaml.
const Name = "impersonation"

// Register adds the stage to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindStage,
		Description: "acts on the Impersonate-* headers, each authorized with the impersonate verb.",
		New:         func(any) (any, error) { return &Stage{}, nil },
		Requires:    []string{"authentication"},
		After:       []string{"audit"},
	})
}

// Package authentication is the authentication stage: it finds who made
// the request with an ordered list of authenticators, as kube-apiserver's
// WithAuthentication filter does, and refuses it with 401 when nobody can
// tell.
package authentication

import (
	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the stage's name in apiserver.yaml.
const Name = "authentication"

// Register adds the stage to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindStage,
		Description: "authenticates the request with an ordered list of authenticators; 401 when none recognises it.",
		New:         func(any) (any, error) { return &Stage{}, nil },
		Nested:      map[string]pipeline.Kind{"authenticators": pipeline.KindAuthenticator},
		NestedDefaults: map[string][]config.Entry{
			"authenticators": {{Name: "x509"}, {Name: "service-account"}, {Name: "anonymous"}},
		},
		Requires: []string{"request-info"},
	})
}

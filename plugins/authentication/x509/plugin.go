// Package x509 is the x509 authenticator: a client certificate signed by
// a trusted client CA names the user (CN) and the groups (O), as
// kube-apiserver's --client-ca-file does.
package x509

import "github.com/kpipe/kpipe/internal/pipeline"

// Name is the authenticator's name in apiserver.yaml.
const Name = "x509"

// Register adds the authenticator to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindAuthenticator,
		Description: "authenticates client certificates signed by the client CA: CN is the user, O the groups.",
		New:         func(any) (any, error) { return &Authenticator{}, nil },
	})
}

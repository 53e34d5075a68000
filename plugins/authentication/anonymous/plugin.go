// Package anonymous is the anonymous authenticator: a request without
// credentials is system:anonymous in system:unauthenticated, as
// kube-apiserver's --anonymous-auth does.
package anonymous

import (
	"net/http"

	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
)

// Name is the authenticator's name in apiserver.yaml.
const Name = "anonymous"

// Config is the authenticator's config block.
type Config struct {
	// Enabled is kube's --anonymous-auth.
	Enabled bool `koanf:"enabled"`
}

// Register adds the authenticator to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindAuthenticator,
		Description: "makes a request without an Authorization header system:anonymous.",
		Config:      func() any { return &Config{Enabled: true} },
		New:         func(cfg any) (any, error) { return &Authenticator{enabled: cfg.(*Config).Enabled}, nil },
	})
}

// Authenticator recognises requests that carry no Authorization header.
type Authenticator struct{ enabled bool }

var _ auth.Authenticator = (*Authenticator)(nil)

// Fallback tells the authentication stage to skip it once another
// authenticator found an invalid credential.
func (a *Authenticator) Fallback() bool { return true }

// AuthenticateRequest implements auth.Authenticator. A request with any
// Authorization header is not anonymous: if nothing else recognised it,
// it is refused.
func (a *Authenticator) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	if !a.enabled || len(r.Header.Values("Authorization")) > 0 {
		return nil, false, nil
	}
	return &request.User{Name: request.Anonymous, Groups: []string{request.AllUnauthenticated}}, true, nil
}

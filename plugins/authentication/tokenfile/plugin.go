// Package tokenfile is the token-file authenticator: kube-apiserver's
// --token-auth-file static bearer tokens, reloaded when the file changes.
package tokenfile

import (
	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the authenticator's name in apiserver.yaml.
const Name = "token-file"

// Config is the authenticator's config block.
type Config struct {
	// TokenAuthFile is the CSV file: token,user,uid,"group1,group2".
	TokenAuthFile string `koanf:"tokenAuthFile"`
}

// Validate implements pipeline.Validator.
func (c *Config) Validate() error {
	if c.TokenAuthFile == "" {
		return &config.FieldError{Key: "tokenAuthFile", Msg: "is required"}
	}
	return nil
}

// Register adds the authenticator to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindAuthenticator,
		Description: "authenticates bearer tokens listed in a static CSV file, reloaded when it changes.",
		Config:      func() any { return &Config{} },
		New:         func(cfg any) (any, error) { return New(cfg.(*Config).TokenAuthFile) },
	})
}

// Package serviceaccount is the service-account authenticator: bearer
// JWTs signed with the server's service account key, as kube-apiserver's
// service account token authenticator.
package serviceaccount

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
	sa "github.com/kpipe/kpipe/internal/serviceaccount"
)

// Name is the authenticator's name in apiserver.yaml.
const Name = "service-account"

// Register adds the authenticator to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindAuthenticator,
		Description: "authenticates service account tokens (JWTs signed with the server's service account key) whose service account still exists.",
		New:         func(any) (any, error) { return &Authenticator{now: time.Now}, nil },
	})
}

// Authenticator verifies service account tokens.
type Authenticator struct {
	tokens *sa.Tokens
	objs   sa.Objects
	now    func() time.Time
}

var (
	_ auth.Authenticator   = (*Authenticator)(nil)
	_ pipeline.Provisioner = (*Authenticator)(nil)
)

// Provision implements pipeline.Provisioner.
func (a *Authenticator) Provision(env *pipeline.Env) error {
	if env.Shared == nil || env.Shared.ServiceAccounts == nil || env.Shared.Resources == nil {
		return errors.New("service-account: the server has no service account key or no resources")
	}
	a.tokens = env.Shared.ServiceAccounts
	a.objs = sa.Objects{Resources: env.Shared.Resources, Prefix: env.Shared.StoragePrefix}
	return nil
}

// AuthenticateRequest implements auth.Authenticator. A bearer token that
// is not a JWT of this issuer is left to the others; one that is, but is
// invalid, expired, for other audiences or for a deleted service account,
// is an error (401).
func (a *Authenticator) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	token, ok := bearer(r)
	if !ok {
		return nil, false, nil
	}
	check := auth.AudienceCheckFrom(r.Context())
	var want []string
	if check != nil {
		want = check.Want
	}
	c, matched, ok, err := a.tokens.Verify(token, want)
	if err != nil || !ok {
		return nil, false, err
	}
	if err := a.objs.Live(r.Context(), c, a.now()); err != nil {
		return nil, false, err
	}
	if check != nil {
		check.Matched = matched
	}
	return sa.UserFor(c), true, nil
}

func bearer(r *http.Request) (string, bool) {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	parts := strings.SplitN(h, " ", 3)
	if len(parts) < 2 || !strings.EqualFold(parts[0], "bearer") || parts[1] == "" {
		return "", false
	}
	return parts[1], true
}

package auth

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"

	"github.com/kpipe/kpipe/internal/request"
)

// AuthenticatorHolder carries the authentication stage's current
// authenticator to TokenReview, which authenticates a token for someone
// else. The pipeline engine sets it when a generation starts serving, and
// empties it when that generation has no authentication stage.
type AuthenticatorHolder struct {
	a atomic.Pointer[authnBox]
}

type authnBox struct{ Authenticator }

// ErrNoAuthenticator is returned while the serving pipeline has no
// authentication stage.
var ErrNoAuthenticator = errors.New("no authenticator is configured")

// Set makes a the current authenticator; nil empties the holder.
func (h *AuthenticatorHolder) Set(a Authenticator) {
	if h == nil {
		return
	}
	if a == nil {
		h.a.Store(nil)
		return
	}
	h.a.Store(&authnBox{a})
}

// AuthenticateRequest asks the current authenticator.
func (h *AuthenticatorHolder) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	if h == nil {
		return nil, false, ErrNoAuthenticator
	}
	b := h.a.Load()
	if b == nil || b.Authenticator == nil {
		return nil, false, ErrNoAuthenticator
	}
	return b.AuthenticateRequest(r)
}

// AudienceCheck travels in the context of a request whose token must be
// for one of Want (TokenReview's spec.audiences). The authenticator that
// accepts an audience-bound token records the audiences it matched.
type AudienceCheck struct {
	Want    []string
	Matched []string
}

type audienceKey struct{}

// WithAudienceCheck returns ctx carrying c.
func WithAudienceCheck(ctx context.Context, c *AudienceCheck) context.Context {
	return context.WithValue(ctx, audienceKey{}, c)
}

// AudienceCheckFrom returns the request's audience check, or nil: the
// token must then be for the server's own audiences.
func AudienceCheckFrom(ctx context.Context) *AudienceCheck {
	c, _ := ctx.Value(audienceKey{}).(*AudienceCheck)
	return c
}

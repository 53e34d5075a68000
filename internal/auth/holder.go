package auth

import (
	"context"
	"errors"
	"sync/atomic"
)

// Holder carries the authorization stage's current decision (system:masters
// plus its ordered authorizers) to the parts of the server that authorize
// outside that stage: impersonation, which runs before it, and the access
// review APIs, which answer for another user. The pipeline engine sets it
// when a generation starts serving, and empties it when that generation
// has no authorization stage.
type Holder struct {
	a atomic.Pointer[box]
}

type box struct{ Authorizer }

// ErrNoAuthorizer is returned while the serving pipeline has no
// authorization stage: callers fail closed.
var ErrNoAuthorizer = errors.New("no authorizer is configured")

// Set makes a the current authorizer; nil empties the holder.
func (h *Holder) Set(a Authorizer) {
	if h == nil {
		return
	}
	if a == nil {
		h.a.Store(nil)
		return
	}
	h.a.Store(&box{a})
}

// Authorize asks the current authorizer. Without one the answer is
// NoOpinion with ErrNoAuthorizer, which every caller treats as a refusal.
func (h *Holder) Authorize(ctx context.Context, a *Attributes) (Decision, string, error) {
	if h == nil {
		return NoOpinion, "", ErrNoAuthorizer
	}
	b := h.a.Load()
	if b == nil || b.Authorizer == nil {
		return NoOpinion, "", ErrNoAuthorizer
	}
	return b.Authorize(ctx, a)
}

// Current returns the current authorizer, or nil.
func (h *Holder) Current() Authorizer {
	if h == nil {
		return nil
	}
	if b := h.a.Load(); b != nil {
		return b.Authorizer
	}
	return nil
}

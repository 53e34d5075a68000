// Package request holds what the pipeline learns about one request
// (RequestInfo, and later the user and the Operation) and the context
// accessors for it.
package request

import "context"

// Scope is the per-request state the stages share. The engine puts one in
// the context before the first stage, so a stage that learns something
// (request-info, authentication) records it where stages outside it, and
// the engine's metrics, can read it after the inner stages return, even
// though they hold an older *http.Request.
type Scope struct {
	Info *RequestInfo
	// Op is the write the object stages work on; nil for reads.
	Op *Operation
	// User is who made the request; nil before authentication. After the
	// impersonation stage it is the impersonated user.
	User *User
	// Impersonator is the authenticated user when the impersonation stage
	// replaced User with the one it asked for (audit reports both).
	Impersonator *User
	// Audit is the audit stage's record of the request, nil when it is
	// not audited: later stages add annotations and the decoded write.
	Audit AuditRecorder
	// Detacher is the engine's hold on the request, nil outside one.
	Detacher Detacher
}

// Detacher lets a long-running request give back the pipeline generation
// it came through, once the stage serving it has taken over.
type Detacher interface{ Detach() }

// Detach tells the engine that the request, a watch say, no longer needs
// the instances it has passed: a reload may retire them while it runs.
func Detach(ctx context.Context) {
	if s := ScopeFrom(ctx); s != nil && s.Detacher != nil {
		s.Detacher.Detach()
	}
}

type scopeKey struct{}

// WithScope returns ctx carrying s.
func WithScope(ctx context.Context, s *Scope) context.Context {
	return context.WithValue(ctx, scopeKey{}, s)
}

// ScopeFrom returns the request's scope, or nil outside the pipeline.
func ScopeFrom(ctx context.Context) *Scope {
	s, _ := ctx.Value(scopeKey{}).(*Scope)
	return s
}

// InfoFrom returns the RequestInfo the request-info stage resolved.
func InfoFrom(ctx context.Context) (*RequestInfo, bool) {
	if s := ScopeFrom(ctx); s != nil && s.Info != nil {
		return s.Info, true
	}
	return nil, false
}

// SetInfo records info on the request's scope. It reports false when ctx
// has no scope, which only happens outside the pipeline.
func SetInfo(ctx context.Context, info *RequestInfo) bool {
	s := ScopeFrom(ctx)
	if s == nil {
		return false
	}
	s.Info = info
	return true
}

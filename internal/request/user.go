package request

import (
	"context"
	"slices"
)

// User is who made the request, as authentication found it.
type User struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

// Well-known users and groups, kube's names.
const (
	AllAuthenticated   = "system:authenticated"
	AllUnauthenticated = "system:unauthenticated"
	Anonymous          = "system:anonymous"
	SystemPrivileged   = "system:masters"
	APIServerUser      = "system:apiserver"
)

// UserFrom returns the request's user, set by the authentication stage.
func UserFrom(ctx context.Context) (*User, bool) {
	if s := ScopeFrom(ctx); s != nil && s.User != nil {
		return s.User, true
	}
	return nil, false
}

// SetUser records the request's user on its scope.
func SetUser(ctx context.Context, u *User) bool {
	s := ScopeFrom(ctx)
	if s == nil {
		return false
	}
	s.User = u
	return true
}

// DeepCopy is a copy of u that its holder may change freely: caches hand
// one out per request.
func (u *User) DeepCopy() *User {
	out := *u
	out.Groups = slices.Clone(u.Groups)
	if u.Extra != nil {
		out.Extra = make(map[string][]string, len(u.Extra))
		for k, v := range u.Extra {
			out.Extra[k] = slices.Clone(v)
		}
	}
	return &out
}

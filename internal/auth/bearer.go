package auth

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/kpipe/kpipe/internal/request"
)

// BearerToken reads `Authorization: Bearer <token>` as kube does.
func BearerToken(r *http.Request) (string, bool) {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	parts := strings.SplitN(h, " ", 3)
	if len(parts) < 2 || !strings.EqualFold(parts[0], "bearer") || parts[1] == "" {
		return "", false
	}
	return parts[1], true
}

// TokenVerifier authenticates one token for the wanted audiences.
type TokenVerifier func(ctx context.Context, token string, want []string) (TokenResult, bool, error)

// AuthenticateBearer is what bearer-token authenticators share: the
// request's token, for the audiences its AudienceCheck wants (TokenReview)
// or else defaults, verified through cache when there is one, and the
// audiences matched recorded for TokenReview. A verification shared
// through the cache runs on none of its callers' contexts, bounded by
// timeout, so one client going away does not fail the others.
func AuthenticateBearer(r *http.Request, cache *TokenCache, defaults []string, timeout time.Duration, verify TokenVerifier) (*request.User, bool, error) {
	token, ok := BearerToken(r)
	if !ok {
		return nil, false, nil
	}
	check := AudienceCheckFrom(r.Context())
	want := defaults
	if check != nil {
		want = check.Want
	}
	var (
		res TokenResult
		err error
	)
	if cache == nil {
		res, ok, err = verify(r.Context(), token, want)
	} else {
		res, ok, err = cache.Authenticate(token, want, func() (TokenResult, bool, error) {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), timeout)
			defer cancel()
			return verify(ctx, token, want)
		})
	}
	if err != nil || !ok {
		return nil, false, err
	}
	if check != nil {
		check.Matched = res.Matched
	}
	return res.User, true, nil
}

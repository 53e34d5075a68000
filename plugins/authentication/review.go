package authentication

import (
	"net/http"

	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/request"
)

var _ auth.Authenticator = (*Stage)(nil)

// AuthenticateRequest implements auth.Authenticator for TokenReview: the
// stage's decision on r, system:authenticated included, without metrics.
func (s *Stage) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	u, err := s.authenticate(r)
	return u, u != nil, err
}

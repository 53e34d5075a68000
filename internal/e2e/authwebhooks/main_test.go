// Package authwebhooks holds the end-to-end tests of the authentication
// and authorization webhooks: a real HTTPS service on 127.0.0.1 answers
// TokenReviews and SubjectAccessReviews for a real server, reached with
// client-go and kubectl.
package authwebhooks

import (
	"testing"

	"github.com/kpipe/kpipe/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

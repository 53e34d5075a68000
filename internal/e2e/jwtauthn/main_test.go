// Package jwtauthn holds the end-to-end tests of the jwt authenticator:
// bearer JWTs of an OpenID Connect issuer running on 127.0.0.1 over TLS.
package jwtauthn

import (
	"testing"

	"github.com/kpipe/kpipe/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

// Package policy holds the end-to-end tests of ValidatingAdmissionPolicy:
// the whole server in-process, driven by client-go.
package policy

import (
	"testing"

	"github.com/kpipe/kpipe/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

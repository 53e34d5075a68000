// Package nodetokens holds the end-to-end tests of service account tokens
// bound to nodes (kube's ServiceAccountTokenNodeBinding and its
// validation), and of the node claims of pod-bound tokens, with the real
// kubectl and client-go.
package nodetokens

import (
	"testing"

	"github.com/kpipe/kpipe/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

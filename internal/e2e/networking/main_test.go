// Package networking holds the end-to-end tests of networking.k8s.io/v1:
// Ingresses (with /status), IngressClasses and NetworkPolicies through
// client-go and the real kubectl, kube's validation messages, and the
// DefaultIngressClass admission plugin.
package networking

import (
	"testing"

	"github.com/kpipe/kpipe/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

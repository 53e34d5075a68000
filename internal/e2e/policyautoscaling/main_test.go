// Package policyautoscaling holds the end-to-end tests of policy/v1
// PodDisruptionBudgets and autoscaling/v2 HorizontalPodAutoscalers: the
// whole server in-process with client-go and the real kubectl.
package policyautoscaling

import (
	"testing"

	"github.com/kpipe/kpipe/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

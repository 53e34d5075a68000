// Package revisions holds the end-to-end tests of apps/v1
// ControllerRevisions and core/v1 PodTemplates: the whole server
// in-process with client-go and the real kubectl.
package revisions

import (
	"testing"

	"github.com/kpipe/kpipe/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

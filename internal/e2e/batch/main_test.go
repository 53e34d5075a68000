// Package batch holds the end-to-end tests of batch/v1 Jobs and CronJobs:
// the whole server in-process with client-go and the real kubectl.
package batch

import (
	"testing"

	"github.com/kpipe/kpipe/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

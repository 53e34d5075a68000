package testserver

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var built struct {
	once sync.Once
	bin  string
	err  error
}

// Binary builds the real apiserver once per test binary and returns its
// path, for tests that run it as a process: to kill it with SIGKILL, to
// send it signals, or to run etcd members with `apiserver etcd`.
func Binary(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "kpipe-bin-")
		if err != nil {
			built.err = err
			return
		}
		built.bin = filepath.Join(dir, "apiserver")
		if out, err := exec.Command("go", "build", "-o", built.bin, "github.com/kpipe/kpipe/cmd/apiserver").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("building the apiserver: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

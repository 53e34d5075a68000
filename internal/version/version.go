// Package version is kpipe's build identity, set at link time.
package version

import (
	"fmt"
	"runtime"
	"strings"

	apiversion "k8s.io/apimachinery/pkg/version"
)

// Set with -ldflags "-X github.com/kpipe/kpipe/internal/version.gitVersion=...".
// gitVersion follows kube's form (v1.37.2-kpipe...) so clients that parse
// the server version as semver, and kubectl's skew check, read it correctly.
var (
	gitVersion   = "v1.37.2-kpipe.dev"
	gitCommit    = ""
	gitTreeState = ""
	buildDate    = "1970-01-01T00:00:00Z"
)

// Get returns kube's version.Info for /version and `apiserver version`.
func Get() apiversion.Info {
	major, minor := "", ""
	if v := strings.TrimPrefix(gitVersion, "v"); v != gitVersion {
		parts := strings.SplitN(v, ".", 3)
		if len(parts) >= 2 {
			major, minor = parts[0], parts[1]
		}
	}
	return apiversion.Info{
		Major:        major,
		Minor:        minor,
		GitVersion:   gitVersion,
		GitCommit:    gitCommit,
		GitTreeState: gitTreeState,
		BuildDate:    buildDate,
		GoVersion:    runtime.Version(),
		Compiler:     runtime.Compiler,
		Platform:     fmt.Sprintf("%s/%s", runtime.GOOS, runtime.GOARCH),
	}
}

package api

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kpipe/kpipe/internal/version"
)

// The lifecycle methods k8s.io/api generates for its types
// (zz_generated.prerelease-lifecycle.go, core/v1/lifecycle.go). kube reads
// the same ones, so a type served later brings its own warning.
type (
	lifecycleDeprecated interface {
		APILifecycleDeprecated() (major, minor int)
	}
	lifecycleRemoved interface {
		APILifecycleRemoved() (major, minor int)
	}
	lifecycleReplacement interface {
		APILifecycleReplacement() schema.GroupVersionKind
	}
)

// deprecationWarnings caches the warning of each kind ("" for none).
var deprecationWarnings sync.Map // schema.GroupVersionKind -> string

// DeprecationWarning is kube's warning for a request to the resource, or
// to its subresource sub, when the kind served there is deprecated in
// this release, as kube's installer attaches it to every route of the
// kind: "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1
// EndpointSlice". It is "" for a kind that is not, or an unknown
// subresource.
func (r *Resource) DeprecationWarning(sub string) string {
	gvk := r.GroupVersionKind()
	if sub != "" {
		s := r.Subresources[sub]
		if s == nil {
			return ""
		}
		if s.Kind != "" {
			gvk = s.GroupVersion.WithKind(s.Kind)
		}
	}
	if msg, ok := deprecationWarnings.Load(gvk); ok {
		return msg.(string)
	}
	msg := deprecationWarning(gvk, releaseMajorMinor())
	deprecationWarnings.Store(gvk, msg)
	return msg
}

// deprecationWarning words kube's warning for gvk in release major.minor.
func deprecationWarning(gvk schema.GroupVersionKind, release [2]int) string {
	obj, err := Scheme.New(gvk)
	if err != nil {
		return ""
	}
	d, ok := obj.(lifecycleDeprecated)
	if !ok {
		return ""
	}
	major, minor := d.APILifecycleDeprecated()
	if major == 0 && minor == 0 {
		return ""
	}
	// Deprecated in a later release than this one: not yet.
	if release != [2]int{} && (major > release[0] || major == release[0] && minor > release[1]) {
		return ""
	}
	msg := fmt.Sprintf("%s %s is deprecated in v%d.%d+", gvk.GroupVersion(), gvk.Kind, major, minor)
	if rm, ok := obj.(lifecycleRemoved); ok {
		if major, minor := rm.APILifecycleRemoved(); major != 0 || minor != 0 {
			msg += fmt.Sprintf(", unavailable in v%d.%d+", major, minor)
		}
	}
	if rp, ok := obj.(lifecycleReplacement); ok {
		if to := rp.APILifecycleReplacement(); !to.Empty() {
			msg += fmt.Sprintf("; use %s %s", to.GroupVersion(), to.Kind)
		}
	}
	return msg
}

// releaseMajorMinor is the server's release as numbers ("1", "37+" gives
// 1, 37: the minor's leading digits); zeros when it has none, which kube takes as "deprecated".
func releaseMajorMinor() [2]int {
	v := version.Get()
	major, err1 := strconv.Atoi(v.Major)
	digits := strings.IndexFunc(v.Minor, func(c rune) bool { return c < '0' || c > '9' })
	if digits < 0 {
		digits = len(v.Minor)
	}
	minor, err2 := strconv.Atoi(v.Minor[:digits])
	if err1 != nil || err2 != nil {
		return [2]int{}
	}
	return [2]int{major, minor}
}

// AddWarning sets msg as kube's Warning header (`299 - "msg"`), once: a
// warning already there is not repeated, as kube's recorder drops
// duplicates.
func AddWarning(h http.Header, msg string) {
	v := "299 - " + strconv.Quote(msg)
	if msg == "" || slices.Contains(h.Values("Warning"), v) {
		return
	}
	h.Add("Warning", v)
}

package api

import (
	"net/http"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// kube's warnings for the kinds kpipe serves that are deprecated in
// v1.37; every other served kind and subresource has none. A deprecated
// type served later fails here until its text is listed.
var servedDeprecated = map[schema.GroupVersionKind]string{
	{Version: "v1", Kind: "Endpoints"}:       "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice",
	{Version: "v1", Kind: "ComponentStatus"}: "v1 ComponentStatus is deprecated in v1.19+",
}

func TestDeprecationWarningOfServedResources(t *testing.T) {
	for _, res := range Resources(Options{}) {
		subs := []string{""}
		for name := range res.Subresources {
			subs = append(subs, name)
		}
		for _, sub := range subs {
			name := res.GroupVersion.String() + "/" + res.Name
			gvk := res.GroupVersionKind()
			if sub != "" {
				name += "/" + sub
				if s := res.Subresources[sub]; s.Kind != "" {
					gvk = s.GroupVersion.WithKind(s.Kind)
				}
			}
			t.Run(name, func(t *testing.T) {
				if got, want := res.DeprecationWarning(sub), servedDeprecated[gvk]; got != want {
					t.Errorf("warning %q, want %q", got, want)
				}
			})
		}
	}
	t.Run("unknown subresource", func(t *testing.T) {
		ep := &Resource{GroupVersion: coreV1, Name: "endpoints", Kind: "Endpoints"}
		if got := ep.DeprecationWarning("nope"); got != "" {
			t.Errorf("warning %q for an unknown subresource", got)
		}
	})
}

// The wording of kube's deprecation.WarningMessage, and its rule that a
// kind deprecated in a later release than the server's is not yet.
func TestDeprecationWarningWording(t *testing.T) {
	cronV1beta1 := schema.GroupVersionKind{Group: "batch", Version: "v1beta1", Kind: "CronJob"}
	cases := []struct {
		name    string
		gvk     schema.GroupVersionKind
		release [2]int
		want    string
	}{
		{"replacement", schema.GroupVersionKind{Version: "v1", Kind: "Endpoints"}, [2]int{1, 37},
			"v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"},
		{"removal and replacement", cronV1beta1, [2]int{1, 37},
			"batch/v1beta1 CronJob is deprecated in v1.21+, unavailable in v1.25+; use batch/v1 CronJob"},
		{"neither", schema.GroupVersionKind{Version: "v1", Kind: "ComponentStatus"}, [2]int{1, 37},
			"v1 ComponentStatus is deprecated in v1.19+"},
		{"in the release it is deprecated", schema.GroupVersionKind{Version: "v1", Kind: "Endpoints"}, [2]int{1, 33},
			"v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"},
		{"before it is deprecated", schema.GroupVersionKind{Version: "v1", Kind: "Endpoints"}, [2]int{1, 32}, ""},
		{"no release known", cronV1beta1, [2]int{},
			"batch/v1beta1 CronJob is deprecated in v1.21+, unavailable in v1.25+; use batch/v1 CronJob"},
		{"not deprecated", schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, [2]int{1, 37}, ""},
		{"not in the scheme", schema.GroupVersionKind{Group: "x.io", Version: "v1", Kind: "X"}, [2]int{1, 37}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := deprecationWarning(c.gvk, c.release); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestAddWarningOnce(t *testing.T) {
	h := http.Header{}
	AddWarning(h, "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice")
	AddWarning(h, "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice")
	AddWarning(h, "")
	want := []string{`299 - "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"`}
	if got := h.Values("Warning"); len(got) != 1 || got[0] != want[0] {
		t.Errorf("Warning headers %q, want %q", got, want)
	}
}

package identitylease

import (
	"net"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/pipeline/pipelinetest"
)

func TestConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		raw     map[string]any
		wantKey string
	}{
		{"defaults", nil, ""},
		{"renew not shorter than the lease", map[string]any{"leaseDuration": "10s", "renewInterval": "10s"}, "renewInterval"},
		{"lease under a second", map[string]any{"leaseDuration": "100ms", "renewInterval": "10ms"}, "leaseDuration"},
		{"zero gc interval", map[string]any{"gcInterval": "0s"}, "gcInterval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := pipelinetest.Build(t, Register, pipeline.KindPostStartHook, Name, tc.raw)
			want := tc.wantKey
			if want != "" {
				want = "pipeline[0] (" + Name + ").config." + want
			}
			pipelinetest.WantFieldError(t, err, want)
		})
	}
}

func TestID(t *testing.T) {
	a := ID("host", net.ParseIP("127.0.0.2"), 6443)
	b := ID("host", net.ParseIP("127.0.0.3"), 6443)
	if a == b || !strings.HasPrefix(a, "apiserver-") || a != strings.ToLower(a) || a != ID("host", net.ParseIP("127.0.0.2"), 6443) {
		t.Errorf("ids %q %q: want stable, distinct, lower-case apiserver-<hash>", a, b)
	}
}

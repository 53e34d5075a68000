package bootstrap

import (
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
		{"none needs no TTL", map[string]any{"endpointReconcilerType": "none", "endpointReconcilerTTL": "0s"}, ""},
		{"unknown reconciler", map[string]any{"endpointReconcilerType": "master-count"}, "endpointReconcilerType"},
		{"lease TTL under a second", map[string]any{"endpointReconcilerTTL": "500ms"}, "endpointReconcilerTTL"},
		{"zero endpoint interval", map[string]any{"endpointInterval": "0s"}, "endpointInterval"},
		{"negative repair interval", map[string]any{"repairInterval": "-1s"}, "repairInterval"},
		{"unknown key", map[string]any{"masterCount": 3}, "masterCount"},
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

package serviceaccount

import (
	"testing"
	"time"

	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/pipeline/pipelinetest"
)

func TestConfigThroughBuilder(t *testing.T) {
	cases := []struct {
		name    string
		raw     map[string]any
		want    time.Duration
		wantKey string
	}{
		{name: "default is kube's", want: 10 * time.Second},
		{name: "set", raw: map[string]any{"cacheTTL": "30s"}, want: 30 * time.Second},
		{name: "off", raw: map[string]any{"cacheTTL": "0s"}, want: 0},
		{name: "negative", raw: map[string]any{"cacheTTL": "-1s"}, wantKey: "pipeline[0] (service-account).config.cacheTTL"},
		{name: "not a duration", raw: map[string]any{"cacheTTL": "soon"}, wantKey: "pipeline[0] (service-account).config.cacheTTL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, err := pipelinetest.Build(t, Register, pipeline.KindAuthenticator, Name, tc.raw)
			if tc.wantKey != "" {
				pipelinetest.WantFieldError(t, err, tc.wantKey)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := in.Value.(*Authenticator).ttl; got != tc.want {
				t.Errorf("ttl = %v, want %v", got, tc.want)
			}
		})
	}
}

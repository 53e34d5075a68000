package anonymous

import (
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/pipeline/pipelinetest"
	"github.com/kpipe/kpipe/internal/request"
)

func TestAuthenticateRequest(t *testing.T) {
	tests := []struct {
		name   string
		config map[string]any
		header string
		wantOK bool
	}{
		{name: "no credentials", wantOK: true},
		{name: "explicitly enabled", config: map[string]any{"enabled": true}, wantOK: true},
		{name: "bearer token", header: "Bearer x"},
		{name: "empty bearer token", header: "Bearer "},
		{name: "basic auth", header: "Basic YTpi"},
		{name: "disabled", config: map[string]any{"enabled": false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := pipelinetest.Build(t, Register, pipeline.KindAuthenticator, Name, tt.config)
			pipelinetest.WantFieldError(t, err, "")
			a := in.Value.(*Authenticator)
			r := httptest.NewRequest("GET", "/readyz", nil)
			if tt.header != "" {
				r.Header.Set("Authorization", tt.header)
			}
			u, ok, err := a.AuthenticateRequest(r)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			want := &request.User{Name: request.Anonymous, Groups: []string{request.AllUnauthenticated}}
			if ok && !reflect.DeepEqual(u, want) {
				t.Errorf("user = %+v, want %+v", u, want)
			}
		})
	}
}

func TestConfig(t *testing.T) {
	_, err := pipelinetest.Build(t, Register, pipeline.KindAuthenticator, Name, map[string]any{"enabled": "maybe"})
	if err == nil {
		t.Fatal("enabled: maybe was accepted")
	}
	_, err = pipelinetest.Build(t, Register, pipeline.KindAuthenticator, Name, map[string]any{"allowedPaths": []any{"/healthz"}})
	pipelinetest.WantFieldError(t, err, "pipeline[0] (anonymous).config.allowedPaths")
}

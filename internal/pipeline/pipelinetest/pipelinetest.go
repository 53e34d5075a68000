// Package pipelinetest helps plugin tests build their plugin the way the
// server does and check config errors.
package pipelinetest

import (
	"errors"
	"testing"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Build registers a plugin with register and builds one entry of it, as
// the builder does for `pipeline:` (index 0) or a nested list of kind.
func Build(t testing.TB, register func(*pipeline.Registry), kind pipeline.Kind, name string, raw map[string]any) (*pipeline.Instance, error) {
	t.Helper()
	reg := pipeline.NewRegistry()
	register(reg)
	ins, err := reg.BuildList(kind, "pipeline", []config.Entry{{Name: name, Config: raw}})
	if err != nil {
		return nil, err
	}
	if len(ins) != 1 {
		t.Fatalf("built %d instances, want 1", len(ins))
	}
	return ins[0], nil
}

// WantFieldError fails t unless err is a *config.FieldError for key with a
// message. An empty key wants no error.
func WantFieldError(t testing.TB, err error, key string) {
	t.Helper()
	if key == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	var fe *config.FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("error = %v (%T), want a *config.FieldError", err, err)
	}
	if fe.Key != key || fe.Msg == "" {
		t.Errorf("got key %q msg %q, want key %q", fe.Key, fe.Msg, key)
	}
}

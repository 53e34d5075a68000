package pipeline

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/kpipe/kpipe/config"
)

// slowCloser is a stage whose Close waits for release, as an audit
// backend sending what it buffered.
type slowCloser struct {
	closing chan struct{}
	release chan struct{}
}

func (s *slowCloser) Middleware(next http.Handler) http.Handler { return next }

func (s *slowCloser) Close() error {
	s.closing <- struct{}{}
	<-s.release
	return nil
}

// A Close that takes its time holds up neither a reload nor requests.
func TestSlowCloseBlocksNothing(t *testing.T) {
	h := newHarness(t)
	closing, release := make(chan struct{}, 10), make(chan struct{})
	defer close(release)
	h.r.MustRegister(Plugin{Name: "slow", Kind: KindStage, Config: func() any { return &testConfig{} },
		New: func(any) (any, error) { return &slowCloser{closing: closing, release: release}, nil }})
	slow := func(header string) config.Entry { return withConfig("slow", map[string]any{"header": header}) }
	h.apply(t, slow("1"), config.Entry{Name: "end"})
	h.apply(t, slow("2"), config.Entry{Name: "end"})
	select {
	case <-closing:
	case <-time.After(5 * time.Second):
		t.Fatal("the replaced stage was never closed")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.apply(t, slow("3"), config.Entry{Name: "end"})
		h.get(t).Body.Close()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a reload waited for another instance's Close")
	}
}

// Close waits for the instances a reload retired to finish closing, so
// what they hold (buffered audit events) is not lost at shutdown.
func TestCloseWaitsForRetiredInstances(t *testing.T) {
	h := newHarness(t)
	closing, release := make(chan struct{}, 10), make(chan struct{})
	h.r.MustRegister(Plugin{Name: "slow", Kind: KindStage, Config: func() any { return &testConfig{} },
		New: func(any) (any, error) { return &slowCloser{closing: closing, release: release}, nil }})
	h.apply(t, withConfig("slow", map[string]any{"header": "1"}), config.Entry{Name: "end"})
	h.apply(t, withConfig("a", nil), config.Entry{Name: "end"})
	<-closing // the retired stage is closing
	closed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		closed <- h.e.Close(ctx)
	}()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a retired instance was still closing", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}

// A reload that comes once Close has begun is refused, so nothing is
// started that Close would not close (or wait for).
func TestApplyAfterCloseRefused(t *testing.T) {
	h := newHarness(t)
	h.apply(t, withConfig("a", nil), config.Entry{Name: "end"})
	if err := h.e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{Pipeline: []config.Entry{withConfig("a", nil), {Name: "end"}}}
	plan, err := h.r.Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.e.Apply(plan, cfg); !errors.Is(err, errEngineClosed) {
		t.Fatalf("Apply after Close: %v, want %v", err, errEngineClosed)
	}
}

package server

import (
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/knadh/koanf/providers/file"
	"go.uber.org/zap"

	"github.com/kpipe/kpipe/config"
)

// reloader rebuilds the pipeline from a freshly read config and swaps it
// in. Everything outside the pipeline needs a restart; changes there are
// reported, not applied halfway.
type reloader struct {
	s  *Server
	mu sync.Mutex
	// started is the config the process started with. Everything outside
	// the pipeline still runs as it says until a restart, so that is what
	// a reload's settings are compared with: a change stays reported on
	// every reload until it is reverted or the server restarts.
	started *config.Config
}

func newReloader(s *Server) *reloader { return &reloader{s: s} }

// markLoaded records l as the config the process started with.
func (r *reloader) markLoaded(l *config.Loaded) {
	r.mu.Lock()
	r.started = l.Config
	r.mu.Unlock()
	r.s.engine.RecordReload(true)
}

// Reload re-reads the configuration and applies its pipeline. On any error
// the running pipeline keeps serving.
func (s *Server) Reload() error {
	r := s.reloader
	if r == nil || s.o.Reload == nil {
		return fmt.Errorf("reload is not available")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.reload()
	s.engine.RecordReload(err == nil)
	if err != nil {
		s.log.Error("config reload failed; the running pipeline keeps serving", zap.Error(err))
	}
	return err
}

func (r *reloader) reload() error {
	s := r.s
	next, err := s.o.Reload()
	if err != nil {
		return err
	}
	plan, err := s.o.Plugins.Plan(next.Config)
	if err != nil {
		return next.Attribute(err)
	}
	if ignored := restartOnly(r.started, next.Config); len(ignored) > 0 {
		s.log.Warn("changed settings are ignored until restart", zap.Strings("keys", ignored))
	}
	// The pipeline runs with the settings the process started with; only
	// the pipeline itself comes from the new file.
	applied := *s.cfg
	applied.Pipeline = next.Config.Pipeline
	if err := s.engine.Apply(plan, &applied); err != nil {
		return err
	}
	s.log.Info("config reloaded", zap.Int64("generation", s.engine.Generation()))
	return nil
}

// restartOnly lists the keys, outside the pipeline, whose values in next
// differ from those the server runs with (old).
func restartOnly(old, next *config.Config) []string {
	o, n := *old, *next
	o.Pipeline, n.Pipeline = nil, nil
	var changed []string
	nv := map[string]any{}
	for _, kv := range config.Keys(&n) {
		nv[kv.Key] = kv.Value
	}
	for _, kv := range config.Keys(&o) {
		if !reflect.DeepEqual(kv.Value, nv[kv.Key]) {
			changed = append(changed, kv.Key)
		}
	}
	return changed
}

// watchConfigFile reloads when the file changes on disk. Editors write in
// bursts, so changes within a short window make one reload.
func (s *Server) watchConfigFile(path string) error {
	const settle = 200 * time.Millisecond
	var mu sync.Mutex
	var timer *time.Timer
	fp := file.Provider(path)
	err := fp.Watch(func(_ any, err error) {
		if err != nil {
			s.log.Warn("config file watch", zap.String("file", path), zap.Error(err))
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if timer != nil {
			timer.Stop()
		}
		timer = time.AfterFunc(settle, func() { _ = s.Reload() })
	})
	if err != nil {
		return fmt.Errorf("watching %s: %w", path, err)
	}
	go func() {
		<-s.ctx.Done()
		_ = fp.Unwatch()
	}()
	return nil
}

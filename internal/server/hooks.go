package server

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/server/healthz"
)

// hook is one post-start hook from apiserver.yaml's postStartHooks list.
type hook struct {
	name string
	run  pipeline.PostStartHook
	done atomic.Bool
	err  atomic.Pointer[error]
}

var errHookRunning = errors.New("not finished")

// check is /readyz/poststarthook/<name>: failing until the hook returns nil.
func (h *hook) check() healthz.Check {
	return healthz.NamedCheck("poststarthook/"+h.name, func(*http.Request) error {
		if h.done.Load() {
			return nil
		}
		if e := h.err.Load(); e != nil {
			return *e
		}
		return errHookRunning
	})
}

// startHooks provisions the configured post-start hooks and runs each in
// its own goroutine; the listener is already serving, so hooks may use the
// loopback client.
func (s *Server) startHooks(context.Context) error {
	for _, in := range s.hookPlan {
		inst, err := s.engine.ProvisionStandalone(in, s.cfg)
		if err != nil {
			return err
		}
		h := &hook{name: inst.Plugin.Name, run: inst.Value.(pipeline.PostStartHook)}
		s.hooks = append(s.hooks, h)
		s.standalone = append(s.standalone, inst)
	}
	env := &pipeline.HookEnv{Loopback: s.Loopback()}
	for _, h := range s.hooks {
		s.goBackground(func(ctx context.Context) {
			if err := h.run.Run(ctx, env); err != nil {
				if ctx.Err() == nil {
					s.log.Error("post-start hook failed", zap.String("hook", h.name), zap.Error(err))
				}
				h.err.Store(&err)
				return
			}
			h.done.Store(true)
			s.log.Info("post-start hook done", zap.String("hook", h.name))
		})
	}
	return nil
}

// runPreShutdownHooks gives hooks their turn before the listener closes.
func (s *Server) runPreShutdownHooks(ctx context.Context) {
	for _, in := range s.standalone {
		if ps, ok := in.Value.(pipeline.PreShutdownHook); ok {
			if err := ps.PreShutdown(ctx); err != nil {
				s.log.Warn("pre-shutdown hook failed", zap.String("hook", in.Plugin.Name), zap.Error(err))
			}
		}
	}
}

package server

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/server/healthz"
)

// hook is one post-start hook: from apiserver.yaml's postStartHooks list,
// or offered by a pipeline instance (pipeline.HookProvider).
type hook struct {
	name  string
	run   pipeline.PostStartHook
	owner *pipeline.Instance // its context ends the hook
	done  atomic.Bool
	err   atomic.Pointer[error]
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

// onProvision collects the hooks a new pipeline instance offers. Before the
// listener serves they wait for startHooks; after, they start at once.
func (s *Server) onProvision(in *pipeline.Instance) {
	hp, ok := in.Value.(pipeline.HookProvider)
	if !ok {
		return
	}
	s.hooksMu.Lock()
	defer s.hooksMu.Unlock()
	for _, nh := range hp.PostStartHooks() {
		h := &hook{name: nh.Name, run: nh.Hook, owner: in}
		s.hooks = append(s.hooks, h)
		if s.hooksStarted {
			s.runHook(h)
		}
	}
}

// onClose drops the hooks of an instance a reload retired; its context has
// ended, which stops them.
func (s *Server) onClose(in *pipeline.Instance) {
	s.hooksMu.Lock()
	defer s.hooksMu.Unlock()
	kept := s.hooks[:0]
	for _, h := range s.hooks {
		if h.owner != in {
			kept = append(kept, h)
		}
	}
	s.hooks = kept
}

// hookChecks are the readiness checks of every live hook.
func (s *Server) hookChecks() []healthz.Check {
	s.hooksMu.Lock()
	defer s.hooksMu.Unlock()
	out := make([]healthz.Check, len(s.hooks))
	for i, h := range s.hooks {
		out[i] = h.check()
	}
	return out
}

// startHooks provisions the configured post-start hooks and runs every
// hook in its own goroutine; the listener already serves, so hooks may use
// the loopback client.
func (s *Server) startHooks(context.Context) error {
	for _, in := range s.hookPlan {
		inst, err := s.engine.ProvisionStandalone(in, s.cfg)
		if err != nil {
			return err
		}
		s.standalone = append(s.standalone, inst)
	}
	s.hooksMu.Lock()
	defer s.hooksMu.Unlock()
	for _, inst := range s.standalone {
		s.hooks = append(s.hooks, &hook{name: inst.Plugin.Name, run: inst.Value.(pipeline.PostStartHook), owner: inst})
	}
	for _, h := range s.hooks {
		s.runHook(h)
	}
	s.hooksStarted = true
	return nil
}

// runHook starts h in its own goroutine. s.hooksMu is held.
func (s *Server) runHook(h *hook) {
	if s.hooksCtx.Err() != nil {
		return // shutting down: a reload's new hook does not start
	}
	env := &pipeline.HookEnv{Loopback: s.Loopback(), AdvertiseAddress: s.advertise, SecurePort: s.securePort()}
	// The hook, and what it leaves running when it returns, ends with its
	// instance (a reload retired it) or when shutdown stops hooks,
	// whichever is first.
	ctx, cancel := context.WithCancel(h.owner.Context())
	context.AfterFunc(s.hooksCtx, cancel)
	s.hooksRunning.Add(1)
	go func() {
		defer s.hooksRunning.Done()
		if err := h.run.Run(ctx, env); err != nil {
			if ctx.Err() == nil {
				s.log.Error("post-start hook failed", zap.String("hook", h.name), zap.Error(err))
			}
			h.err.Store(&err)
			return
		}
		h.done.Store(true)
		s.log.Info("post-start hook done", zap.String("hook", h.name))
	}()
}

// hooksStopTimeout bounds the wait for post-start hooks to return once
// stopped; one that does not is left to end with the process.
const hooksStopTimeout = 5 * time.Second

// stopPostStartHooks ends every post-start hook and waits, a bounded
// while, for them to return.
func (s *Server) stopPostStartHooks() {
	// Under the lock runHook holds: no hook starts after this.
	s.hooksMu.Lock()
	s.stopHooks()
	s.hooksMu.Unlock()
	done := make(chan struct{})
	go func() {
		s.hooksRunning.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(hooksStopTimeout):
		s.log.Warn("post-start hooks still running after being stopped", zap.Duration("waited", hooksStopTimeout))
	}
}

// runPreShutdownHooks gives hooks their turn before the listener closes.
func (s *Server) runPreShutdownHooks(ctx context.Context) {
	ins := append([]*pipeline.Instance(nil), s.standalone...)
	if s.engine != nil {
		ins = append(ins, s.engine.Instances()...)
	}
	for _, in := range ins {
		if ps, ok := in.Value.(pipeline.PreShutdownHook); ok {
			if err := ps.PreShutdown(ctx); err != nil {
				s.log.Warn("pre-shutdown hook failed", zap.String("plugin", in.Label), zap.Error(err))
			}
		}
	}
}

package server

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"
)

// Shutdown stops the server in kube-apiserver's order: /readyz turns red
// at once, pre-shutdown hooks run, post-start hooks stop, the configured
// delay passes so load balancers notice, the listener closes and
// in-flight requests drain within the shutdown timeout, then the pipeline
// and storage close. It is safe to call more than once: later calls wait
// for the first and return its result.
func (s *Server) Shutdown() error {
	s.shutdownOnce.Do(func() { s.shutdownErr = s.shutdownSequence(true) })
	return s.shutdownErr
}

// Abort stops the server the way a killed process stops as far as the
// cluster can tell: no pre-shutdown hook runs, so what they would clean up
// (this server's endpoint) is left to expire. Tests use it for kill -9.
func (s *Server) Abort() error {
	s.shutdownOnce.Do(func() { s.shutdownErr = s.shutdownSequence(false) })
	return s.shutdownErr
}

func (s *Server) shutdownSequence(preShutdown bool) error {
	start := time.Now()
	s.log.Info("shutting down")
	s.shutdown.Begin()

	if preShutdown {
		hookCtx, cancel := context.WithTimeout(context.Background(), s.cfg.Server.ShutdownTimeout)
		s.runPreShutdownHooks(hookCtx)
		cancel()
	}
	// Before the delay: a loop left running could undo what a pre-shutdown
	// hook did (the endpoint it removed), and after the listener closes
	// it would only log connection errors.
	s.stopPostStartHooks()

	if d := s.cfg.Server.ShutdownDelayDuration; d > 0 {
		s.log.Info("waiting before closing the listener", zap.Duration("shutdownDelayDuration", d))
		time.Sleep(d)
	}

	drainCtx, cancel := context.WithTimeout(context.Background(), s.cfg.Server.ShutdownTimeout)
	defer cancel()
	var errs []error
	if s.http != nil {
		// Long-running requests (watches) end when they see stopping.
		close(s.stopping)
		if err := s.http.Shutdown(drainCtx); err != nil {
			errs = append(errs, err)
			s.http.Close()
		}
	}
	if s.engine != nil {
		if err := s.engine.Close(drainCtx); err != nil {
			errs = append(errs, err)
		}
	}
	if s.tracer != nil {
		// Flush the spans of the last requests.
		if err := s.tracer.Shutdown(drainCtx); err != nil {
			s.log.Warn("tracing shutdown", zap.Error(err))
		}
	}
	s.cancel()
	s.bg.Wait()
	if s.engine != nil {
		s.engine.CloseStandalone(s.standalone)
	}
	s.closeStorage()
	s.log.Info("shut down", zap.Duration("took", time.Since(start)))
	return errors.Join(errs...)
}

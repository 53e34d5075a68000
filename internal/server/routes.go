package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/api/openapi"
	"github.com/kpipe/kpipe/internal/api/status"
	"github.com/kpipe/kpipe/internal/server/healthz"
	"github.com/kpipe/kpipe/internal/version"
)

// routes serves the non-resource endpoints, behind the whole pipeline (the
// terminal stage passes them on), so they are authenticated and
// authorized like everything else.
func (s *Server) routes() (http.Handler, error) {
	r := chi.NewRouter()
	log := healthz.WithLogger(s.log.Named("healthz"))
	healthz.Install(r, "healthz", s.checks(true, false), log)
	healthz.Install(r, "livez", s.checks(false, false), log)
	healthz.Install(r, "readyz", s.checks(true, true), log)

	r.Get("/version", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, version.Get())
	})
	r.Handle("/metrics", promhttp.HandlerFor(s.metrics, promhttp.HandlerOpts{
		ErrorLog: zap.NewStdLog(s.log.Named("metrics")),
	}))
	if s.resources != nil {
		s.discovery = api.NewDiscovery(s.resources, "")
		s.discovery.Install(r)
		if err := openapi.Install(r, s.resources.OpenAPIResources()); err != nil {
			return nil, fmt.Errorf("openapi: %w", err)
		}
	}
	r.Get("/debug/pipeline", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, s.engine.Describe())
	})
	if s.cfg.Server.Profiling {
		installProfiling(r)
	}
	r.NotFound(func(w http.ResponseWriter, _ *http.Request) {
		status.Write(w, apierrors.NewGenericServerResponse(http.StatusNotFound, "", schema.GroupResource{}, "", "", 0, false))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		status.Write(w, apierrors.NewMethodNotSupported(schema.GroupResource{}, r.Method))
	})
	return r, nil
}

// checks lists the health checks of an endpoint. livez leaves out etcd: a
// lost etcd makes the server unready, not dead, so it is not restarted
// while etcd recovers.
func (s *Server) checks(withEtcd, withShutdown bool) func() []healthz.Check {
	etcd := healthz.NamedCheck("etcd", func(r *http.Request) error {
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.Storage.Etcd.HealthTimeout)
		defer cancel()
		return s.backend.Check(ctx)
	})
	return func() []healthz.Check {
		out := []healthz.Check{healthz.PingCheck}
		if withEtcd {
			out = append(out, etcd)
		}
		out = append(out, s.engine.HealthChecks()...)
		out = append(out, s.hookChecks()...)
		if withShutdown {
			out = append(out, s.shutdown)
		}
		return out
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		status.Write(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

package requestinfo

import (
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kpipe/kpipe/internal/api/status"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
)

// Stage is the stage instance.
type Stage struct {
	resolver *request.Resolver
}

var _ pipeline.Stage = (*Stage)(nil)

func newStage() *Stage { return &Stage{resolver: request.NewResolver()} }

// Middleware implements pipeline.Stage.
func (s *Stage) Middleware(next http.Handler) http.Handler {
	resolver := s.resolver
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, err := resolver.Resolve(r)
		if err != nil {
			// The resolver only fails on malformed URLs, which are the
			// client's mistake (kube answers 500 here).
			status.Write(w, apierrors.NewBadRequest(err.Error()))
			return
		}
		// The info goes on the engine's scope, not a new context, so outer
		// stages and the metrics see it after the inner stages return.
		if !request.SetInfo(r.Context(), info) {
			status.Write(w, apierrors.NewInternalError(errors.New("no request scope in context, handler chain must be wrong")))
			return
		}
		next.ServeHTTP(w, r)
	})
}

package server

import (
	"net/http"
	"net/http/pprof"

	"github.com/go-chi/chi/v5"
)

// installProfiling serves Go's pprof handlers where kube-apiserver serves
// them. They sit behind the pipeline like every non-resource path, so only
// system:masters or an RBAC rule on the nonResourceURL /debug/pprof/* reach
// them: a profile exposes memory contents and costs CPU.
func installProfiling(r chi.Router) {
	r.Get("/debug/pprof", func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, "/debug/pprof/", http.StatusFound)
	})
	// Index also serves the named profiles (heap, allocs, goroutine, ...).
	r.Get("/debug/pprof/*", pprof.Index)
	r.Get("/debug/pprof/profile", pprof.Profile)
	r.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	r.Get("/debug/pprof/trace", pprof.Trace)
}

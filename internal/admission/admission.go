// Package admission is the contract of admission plugins: the ordered
// lists the mutating-admission and validating-admission stages hold.
package admission

import (
	"context"
	"net/http"

	"github.com/kpipe/kpipe/internal/api/status"
	"github.com/kpipe/kpipe/internal/request"
)

// Operation names as admission sees them (admission.k8s.io's values).
const (
	Create  = "CREATE"
	Update  = "UPDATE"
	Delete  = "DELETE"
	Connect = "CONNECT"
)

// Attributes are what a plugin decides on.
type Attributes struct {
	// Operation is CREATE, UPDATE, DELETE or CONNECT.
	Operation string
	Info      *request.RequestInfo
	// Op holds the object (Op.Object), the live object (Op.Old), the
	// resource and the options. Mutating plugins may change Op.Object.
	Op *request.Operation
}

// Mutator is a plugin of the mutating-admission stage.
type Mutator interface {
	Admit(ctx context.Context, a *Attributes) error
}

// Validator is a plugin of the validating-admission stage. It may only
// accept or reject.
type Validator interface {
	Validate(ctx context.Context, a *Attributes) error
}

// OperationOf maps a request verb to its admission operation, "" for
// reads, which admission does not see.
func OperationOf(verb string) string {
	switch verb {
	case "create":
		return Create
	case "update", "patch":
		return Update
	case "delete", "deletecollection":
		return Delete
	}
	return ""
}

// Handler runs plugins in order on every write that has an Operation; the
// first error answers as a Status. It is the whole of both admission
// stages, which differ only in what they call.
func Handler[P any](plugins []P, call func(p P, ctx context.Context, a *Attributes) error, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op, ok := request.OperationFrom(r.Context())
		info, _ := request.InfoFrom(r.Context())
		if !ok || info == nil || len(plugins) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		a := &Attributes{Operation: OperationOf(info.Verb), Info: info, Op: op}
		for _, p := range plugins {
			if err := call(p, r.Context(), a); err != nil {
				status.Write(w, err)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// Package admission is the contract of admission plugins: the ordered
// lists the mutating-admission and validating-admission stages hold.
package admission

import (
	"context"

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

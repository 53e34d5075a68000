// Package admission is the contract of admission plugins: the ordered
// lists the mutating-admission and validating-admission stages hold, and
// the runner both stages share, which times every plugin with kube's
// admission metrics.
package admission

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

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

// Step types, the `type` label of kube's admission metrics.
const (
	TypeAdmit    = "admit"
	TypeValidate = "validate"
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

// Warn adds a warning for the response's Warning headers; it goes out
// with a rejection as well, as kube's do.
func (a *Attributes) Warn(msg string) { a.Op.Warn(msg) }

// AddAnnotation records an audit annotation for the request's audit
// event. As in kube, setting a key again to another value is an error.
func (a *Attributes) AddAnnotation(key, value string) error {
	return a.Op.AddAuditAnnotation(key, value)
}

// DryRun reports a dry-run request: plugins with side effects skip them.
func (a *Attributes) DryRun() bool { return a.Op.DryRun }

// Mutator is a plugin of the mutating-admission stage.
type Mutator interface {
	Admit(ctx context.Context, a *Attributes) error
}

// Validator is a plugin of the validating-admission stage. It may only
// accept or reject.
type Validator interface {
	Validate(ctx context.Context, a *Attributes) error
}

// Handles is implemented by plugins that see only some operations; the
// runner neither calls nor times them for the others, as kube's chain.
type Handles interface {
	Handles(operation string) bool
}

// Named is a plugin with its name from apiserver.yaml, the `name` label
// of its metrics.
type Named[P any] struct {
	Name   string
	Plugin P
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
// stages, which differ only in the step type and what they call. m may be
// nil (tests without metrics).
func Handler[P any](typ string, plugins []Named[P], call func(p P, ctx context.Context, a *Attributes) error, m *Metrics, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op, ok := request.OperationFrom(r.Context())
		info, _ := request.InfoFrom(r.Context())
		if !ok || info == nil || len(plugins) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		a := &Attributes{Operation: OperationOf(info.Verb), Info: info, Op: op}
		err := Run(r.Context(), typ, plugins, call, m, a)
		// The plugins' annotations go to the request's audit event, the
		// rejected request's too (kube audits why it was refused). A key
		// already there keeps its value, so the second stage and a retry
		// passing the same ones again change nothing.
		for k, v := range op.AuditAnnotations {
			request.AddAuditAnnotation(r.Context(), k, v)
		}
		if err != nil {
			for _, msg := range op.Warnings {
				w.Header().Add("Warning", "299 - "+strconv.Quote(msg))
			}
			op.Warnings = nil // written; the terminal stage does not run
			status.Write(w, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Run calls each plugin that handles a.Operation in order, timing each and
// the whole step, and returns the first rejection as an API error.
func Run[P any](ctx context.Context, typ string, plugins []Named[P], call func(p P, ctx context.Context, a *Attributes) error, m *Metrics, a *Attributes) error {
	stepStart := time.Now()
	var rejected error
	for _, p := range plugins {
		if h, ok := any(p.Plugin).(Handles); ok && !h.Handles(a.Operation) {
			continue
		}
		start := time.Now()
		err := call(p.Plugin, ctx, a)
		m.observePlugin(p.Name, typ, a.Operation, err != nil, time.Since(start))
		if err != nil {
			rejected = asAPIError(p.Name, a, err)
			break
		}
	}
	m.observeStep(typ, a.Operation, rejected != nil, time.Since(stepStart))
	return rejected
}

// asAPIError keeps a plugin's API error (kube's plugins answer with their
// own Status and message); any other error becomes 403 Forbidden naming
// the plugin.
func asAPIError(plugin string, a *Attributes, err error) error {
	if _, ok := err.(apierrors.APIStatus); ok {
		return err
	}
	return apierrors.NewForbidden(a.Op.Resource.GroupResource(), a.Name(), fmt.Errorf("%s: %w", plugin, err))
}

// NewForbidden is kube's admission.NewForbidden: 403 naming the object,
// `<resource> "<name>" is forbidden: <err>`, unless err already is one.
func NewForbidden(a *Attributes, err error) error {
	if apierrors.IsForbidden(err) {
		return err
	}
	return apierrors.NewForbidden(a.Op.Resource.GroupResource(), a.Name(), err)
}

// Name is the object's name: from the path, else from the object (a
// create names it in the body).
func (a *Attributes) Name() string {
	if a.Op.Name != "" {
		return a.Op.Name
	}
	if m, err := meta.Accessor(a.Op.Object); err == nil && a.Op.Object != nil {
		return m.GetName()
	}
	return a.Info.Name
}

// Is reports a request on group/resource itself (no subresource).
func (a *Attributes) Is(group, resource string) bool {
	return a.Op.Subresource == "" && a.Op.Resource.Name == resource && a.Op.Resource.GroupVersion.Group == group
}

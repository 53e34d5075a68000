package request

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kpipe/kpipe/internal/api"
)

// Operation is one write as the object stages see it: decode makes it,
// the stages after it read and change it, and only the terminal stage
// stores it and answers.
type Operation struct {
	Resource    *api.Resource
	Subresource string
	Namespace   string
	Name        string

	// Object is what is being written: the decoded body for create and
	// update, the patched live object for a patch. For an apply it is nil
	// until the field-manager stage merges the applied configuration.
	// Stages may replace or change it.
	Object runtime.Object
	// Old is the live object for update, patch and delete; nil on create.
	Old runtime.Object

	// PatchType is the Content-Type of a patch, "" for other writes.
	PatchType types.PatchType
	// PatchBytes is the patch as sent (YAML for an apply).
	PatchBytes []byte
	// Force is PatchOptions.force: an apply takes over conflicting fields.
	Force bool

	DryRun          bool
	FieldManager    string
	FieldValidation string
	// DeleteOptions of a delete or deletecollection.
	DeleteOptions *metav1.DeleteOptions

	// Warnings go out as Warning headers with the response.
	Warnings []string
	// AuditAnnotations are what admission plugins add to the request's
	// audit event.
	AuditAnnotations map[string]string
	// WriteChecked is set once the resource's WriteCheck (RBAC escalation)
	// passed on this object, before validation as in kube, so the terminal
	// stage need not run it again.
	WriteChecked bool
	// Created is set when an update created the object (PUT on a missing
	// object where the type allows it, or an apply to a missing object).
	Created bool
	// Unconditional marks an update whose body had no resourceVersion:
	// it applies to whatever is live, and a race retries it rather than
	// failing with a conflict.
	Unconditional bool
	// Retry is set by the terminal stage when the live object changed under
	// a write that had no resourceVersion precondition: decode then runs
	// the stages again on the fresh live object, as kube's GuaranteedUpdate
	// retries its update function.
	Retry bool
}

// Warn records a warning for the response.
func (op *Operation) Warn(msg string) { op.Warnings = append(op.Warnings, msg) }

// AddAuditAnnotation records an audit annotation. As in kube, setting a
// key again to another value is an error.
func (op *Operation) AddAuditAnnotation(key, value string) error {
	if old, ok := op.AuditAnnotations[key]; ok && old != value {
		return fmt.Errorf("admission annotations are not allowed to be overwritten, key:%q, old value: %q, current value: %q", key, old, value)
	}
	if op.AuditAnnotations == nil {
		op.AuditAnnotations = map[string]string{}
	}
	op.AuditAnnotations[key] = value
	return nil
}

// OperationFrom returns the request's operation, made by the decode stage.
func OperationFrom(ctx context.Context) (*Operation, bool) {
	if s := ScopeFrom(ctx); s != nil && s.Op != nil {
		return s.Op, true
	}
	return nil, false
}

// SetOperation records op on the request's scope.
func SetOperation(ctx context.Context, op *Operation) bool {
	s := ScopeFrom(ctx)
	if s == nil {
		return false
	}
	s.Op = op
	if s.Audit != nil {
		s.Audit.RecordOperation(op)
	}
	return true
}

package auth

import (
	"net/http"
	"sync/atomic"
)

// FailureAuditor records requests that failed authentication, as kube's
// WithFailedAuthenticationAudit does. The audit stage runs after the
// authentication stage, so it offers this instead through FailureHook.
type FailureAuditor interface {
	// AuditFailure returns the writer the 401 goes to: the event is
	// written when the answer starts.
	AuditFailure(w http.ResponseWriter, r *http.Request) http.ResponseWriter
}

// FailureHook carries the current FailureAuditor from the audit stage to
// the authentication stage. The pipeline engine sets it when a generation
// starts serving, and empties it when that generation audits nothing.
type FailureHook struct {
	a atomic.Pointer[failureBox]
}

type failureBox struct{ FailureAuditor }

// Set makes a the current auditor; nil empties the hook.
func (h *FailureHook) Set(a FailureAuditor) {
	if h == nil {
		return
	}
	if a == nil {
		h.a.Store(nil)
		return
	}
	h.a.Store(&failureBox{a})
}

// Wrap returns w, or the writer of the current auditor.
func (h *FailureHook) Wrap(w http.ResponseWriter, r *http.Request) http.ResponseWriter {
	if h == nil {
		return w
	}
	if b := h.a.Load(); b != nil {
		return b.AuditFailure(w, r)
	}
	return w
}

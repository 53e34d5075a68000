package request

import "context"

// AuditRecorder is what the audit stage offers the stages after it, on the
// request's scope.
type AuditRecorder interface {
	// AddAnnotation adds an annotation to the request's audit event; the
	// first value set for a key stays, as in kube.
	AddAnnotation(key, value string)
	// RecordOperation learns the decoded write (its object or patch),
	// logged at the Request level. SetOperation calls it.
	RecordOperation(op *Operation)
}

// AddAuditAnnotation annotates the request's audit event, if it is
// audited (kube's audit.AddAuditAnnotation).
func AddAuditAnnotation(ctx context.Context, key, value string) {
	if s := ScopeFrom(ctx); s != nil && s.Audit != nil {
		s.Audit.AddAnnotation(key, value)
	}
}

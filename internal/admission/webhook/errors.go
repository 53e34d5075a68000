package webhook

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CallError is a failure to get an answer from a webhook (it is down,
// slow, or answered garbage), not a denial: failurePolicy decides.
// Status is what the metrics count as the code.
type CallError struct {
	Webhook string
	Reason  error
	Status  *apierrors.StatusError
}

func (e *CallError) Error() string {
	if e.Reason != nil {
		return fmt.Sprintf("failed calling webhook %q: %v", e.Webhook, e.Reason)
	}
	return fmt.Sprintf("failed calling webhook %q; no further details available", e.Webhook)
}

func (e *CallError) Unwrap() error { return e.Reason }

// Rejection is a webhook's denial.
type Rejection struct {
	Status *apierrors.StatusError
}

func (e *Rejection) Error() string { return e.Status.Error() }

// Denied is kube's answer for a webhook's denial: the webhook's Status
// with at least code 400 and status Failure, the message prefixed with
// `admission webhook "<name>" denied the request`.
func Denied(webhook string, result *metav1.Status) *apierrors.StatusError {
	prefix := fmt.Sprintf("admission webhook %q denied the request", webhook)
	s := metav1.Status{Status: metav1.StatusFailure}
	if result != nil {
		s = *result.DeepCopy()
	}
	if s.Code < http.StatusBadRequest {
		s.Code = http.StatusBadRequest
	}
	if s.Status == "" || s.Status == metav1.StatusSuccess {
		s.Status = metav1.StatusFailure
	}
	switch {
	case s.Message != "":
		s.Message = prefix + ": " + s.Message
	case s.Reason != "":
		s.Message = prefix + ": " + string(s.Reason)
	default:
		s.Message = prefix + " without explanation"
	}
	return &apierrors.StatusError{ErrStatus: s}
}

// DryRunUnsupported is kube's 400 for a dry-run request that reaches a
// webhook with side effects.
func DryRunUnsupported(webhook string) *apierrors.StatusError {
	return apierrors.NewBadRequest(fmt.Sprintf("admission webhook %q does not support dry run", webhook))
}

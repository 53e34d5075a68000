package store

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Messages as kube-apiserver words them (k8s.io/apiserver storage/etcd3
// errors.go and registry/generic/registry store.go); clients match on them.
const (
	optimisticLockMsg = "the object has been modified; please apply your changes to the latest version and try again"
	listExpiredMsg    = "The resourceVersion for the provided list is too old."
	watchExpiredMsg   = "The resourceVersion for the provided watch is too old."
	continueExpired   = "The provided continue parameter is too old " +
		"to display a consistent list result. You can start a new list without " +
		"the continue parameter."
	inconsistentContinue = "The provided continue parameter is too old " +
		"to display a consistent list result. You can start a new list without " +
		"the continue parameter, or use the continue token in this response to " +
		"retrieve the remainder of the results. Continuing with the provided " +
		"token results in an inconsistent list - objects that were created, " +
		"modified, or deleted between the time the first chunk was returned " +
		"and now may show up in the list."
)

// retryAfterSeconds is what kube's storeerr suggests for unreachable etcd.
const retryAfterSeconds = 2

// toAPIError maps an etcd client error to the API error kube returns:
// an expired context (the caller's deadline, or a cancelled request) is a
// 504 Timeout as kube's request finisher reports it; an etcd that cannot
// answer (no leader, unavailable, its own request timeout) is kube's
// storeerr ServerTimeout with Retry-After; anything else is internal.
func (s *Store) toAPIError(err error, op string) error {
	if err == nil {
		return nil
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return err
	}
	if isTooLarge(err) {
		// kube passes this etcd error through unchanged, so clients see a
		// 500 with etcd's message (used here for the gRPC limit too);
		// IsRequestTooLarge lets a caller retry without managedFields as
		// kube's create and patch handlers do.
		return unknownError(requestTooLargeMsg)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return apierrors.NewTimeoutError(fmt.Sprintf("request did not complete within requested timeout - %v", err), 0)
	}
	switch errCode(err) {
	case codes.DeadlineExceeded, codes.Canceled:
		return apierrors.NewTimeoutError(fmt.Sprintf("request did not complete within requested timeout - %v", err), 0)
	case codes.Unavailable:
		return apierrors.NewServerTimeout(s.gr, op, retryAfterSeconds)
	}
	return apierrors.NewInternalError(err)
}

// requestTooLargeMsg is etcd's message for a value over its request limit.
const requestTooLargeMsg = "etcdserver: request is too large"

// isTooLarge matches what kube's handlers treat as too large: etcd's own
// limit, or the client's gRPC send limit.
func isTooLarge(err error) bool {
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) && ee.Code() == codes.InvalidArgument && ee.Error() == requestTooLargeMsg {
		return true
	}
	if st, ok := status.FromError(err); ok && st.Code() == codes.ResourceExhausted &&
		strings.Contains(st.Message(), "trying to send message larger than max") {
		return true
	}
	return false
}

// IsRequestTooLarge reports whether err says the object was too large for
// etcd, so a caller can drop managedFields and retry, as kube does.
func IsRequestTooLarge(err error) bool {
	var se *apierrors.StatusError
	return errors.As(err, &se) && se.ErrStatus.Code == http.StatusInternalServerError &&
		se.ErrStatus.Reason == metav1.StatusReasonUnknown && se.ErrStatus.Message == requestTooLargeMsg
}

// errCode is the gRPC code of an etcd client error.
func errCode(err error) codes.Code {
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		return ee.Code()
	}
	if st, ok := status.FromError(err); ok {
		return st.Code()
	}
	return codes.Unknown
}

// isCancel reports errors that only mean the watcher's ctx ended.
func isCancel(err error) bool {
	if errors.Is(err, context.Canceled) {
		return true
	}
	return errCode(err) == codes.Canceled
}

// invalidObjError reproduces the text of kube's storage.StorageError for
// ErrCodeInvalidObj, which kube's storeerr wraps verbatim into a Conflict.
func invalidObjError(key, msg string) error {
	return invalidObjErr{key: key, msg: msg}
}

type invalidObjErr struct{ key, msg string }

func (e invalidObjErr) Error() string {
	return fmt.Sprintf("StorageError: invalid object, Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: %s", e.key, e.msg)
}

// invalidRVError is kube's versioner error for an unparsable
// resourceVersion: a field.Invalid on "resourceVersion".
type invalidRVError struct {
	rv  string
	err error
}

func (e invalidRVError) fieldErrors() field.ErrorList {
	return field.ErrorList{field.Invalid(field.NewPath("resourceVersion"), e.rv, e.err.Error())}
}

func (e invalidRVError) Error() string { return e.fieldErrors().ToAggregate().Error() }

// tooLargeRV is kube's storage.NewTooLargeResourceVersionError: a 504 with
// a ResourceVersionTooLarge cause that clients retry on.
func tooLargeRV(minimum, current int64, retrySeconds int) error {
	err := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", minimum, current), retrySeconds)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type:    metav1.CauseTypeResourceVersionTooLarge,
		Message: "Too large resource version",
	}}
	return err
}

// unknownError is how kube renders a plain (non-Status) storage error: 500
// with no reason and the error text as message.
func unknownError(msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusInternalServerError,
		Reason:  metav1.StatusReasonUnknown,
		Message: msg,
	}}
}

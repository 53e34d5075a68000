// Package status writes errors as metav1.Status, the way kube-apiserver
// answers them. Clients branch on the reason and code, so every error
// response in kpipe goes through here.
package status

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// FromError converts err to a Status. Errors that are not API errors become
// 500 InternalError, as kube's ErrorToAPIStatus does.
func FromError(err error) *metav1.Status {
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		st := s.Status()
		st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
		if st.Status == "" {
			st.Status = metav1.StatusFailure
		}
		if st.Code == 0 {
			st.Code = http.StatusInternalServerError
		}
		return &st
	}
	st := apierrors.NewInternalError(err).Status()
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	return &st
}

// Write answers the request with err as a Status and returns the code.
func Write(w http.ResponseWriter, err error) int {
	st := FromError(err)
	if st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(st.Details.RetryAfterSeconds)))
	}
	code := int(st.Code)
	body, mErr := json.Marshal(st)
	if mErr != nil {
		utilruntime.HandleError(mErr)
		http.Error(w, st.Message, code)
		return code
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(append(body, '\n'))
	return code
}

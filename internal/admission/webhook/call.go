package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
)

// maxResponseBytes bounds what is read from a webhook's answer.
const maxResponseBytes = 3 << 20

// Call sends req to h and returns its checked answer; an answer that
// denies is returned as is (Allowed false). Errors are a *CallError for
// a webhook that could not be asked or answered garbage, and kube's 400
// for a dry-run request to a webhook with side effects. gen is the
// generation of the configurations h was read from.
func Call(ctx context.Context, clients *Clients, gen uint64, h *Hook, req *Request, mutating bool) (*Response, error) {
	if req.Attributes.DryRun() {
		if h.SideEffects == nil {
			return nil, &CallError{Webhook: h.Name, Reason: errors.New("Webhook SideEffects is nil"), Status: apierrors.NewBadRequest("Webhook SideEffects is nil")}
		}
		if se := *h.SideEffects; se != admissionregistrationv1.SideEffectClassNone && se != admissionregistrationv1.SideEffectClassNoneOnDryRun {
			return nil, DryRunUnsupported(h.Name)
		}
	}
	// The first version the webhook lists that kube speaks; v1beta1's
	// review has v1's shape under another apiVersion.
	version := ""
	for _, v := range h.AdmissionReviewVersions {
		if v == "v1" || v == "v1beta1" {
			version = v
			break
		}
	}
	if version == "" {
		return nil, &CallError{Webhook: h.Name,
			Reason: errors.New("could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)"),
			Status: apierrors.NewBadRequest("error creating admission objects")}
	}
	uid := uuid.NewUUID()
	review, err := req.Review(uid)
	if err != nil {
		return nil, &CallError{Webhook: h.Name, Reason: fmt.Errorf("could not create admission objects: %w", err), Status: apierrors.NewBadRequest("error creating admission objects")}
	}
	review.APIVersion = "admission.k8s.io/" + version
	body, err := json.Marshal(review)
	if err != nil {
		return nil, &CallError{Webhook: h.Name, Reason: fmt.Errorf("could not create admission objects: %w", err), Status: apierrors.NewBadRequest("error creating admission objects")}
	}
	target, err := clients.For(gen, h.Name, h.ClientConfig)
	if err != nil {
		var ce *CallError
		if errors.As(err, &ce) && ce.Status == nil {
			ce.Status = apierrors.NewInternalError(err)
		}
		return nil, err
	}

	ctx, cancel := context.WithTimeout(ctx, time.Duration(h.TimeoutSeconds)*time.Second)
	defer cancel()
	u := *target.URL
	if deadline, ok := ctx.Deadline(); ok {
		// kube's rest client tells the webhook its timeout, in whole
		// seconds rounded up.
		if left := time.Until(deadline); left > 0 {
			if t := left.Truncate(time.Second); t != left {
				left = t + time.Second
			}
			q := u.Query()
			q.Set("timeout", left.String())
			u.RawQuery = q.Encode()
		}
	}
	answer, err := post(ctx, target.Client, u.String(), body)
	if err != nil {
		var status *apierrors.StatusError
		if !errors.As(err, &status) {
			status = apierrors.NewServiceUnavailable("error calling webhook")
		}
		return nil, &CallError{Webhook: h.Name, Reason: fmt.Errorf("failed to call webhook: %w", err), Status: status}
	}
	verify := Verify
	if version == "v1beta1" {
		verify = verifyV1beta1
	}
	resp, err := verify(uid, mutating, answer)
	if err != nil {
		return nil, &CallError{Webhook: h.Name, Reason: fmt.Errorf("received invalid webhook response: %w", err), Status: apierrors.NewServiceUnavailable("error validating webhook response")}
	}
	return resp, nil
}

// post sends the review and decodes the answer. A non-2xx answer is an
// API error: the Status the webhook sent, or a generic one.
func post(ctx context.Context, client *http.Client, url string, body []byte) (*admissionv1.AdmissionReview, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, */*")
	res, err := client.Do(hr)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxResponseBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxResponseBytes {
		return nil, fmt.Errorf("webhook response is larger than %d bytes", maxResponseBytes)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		s := &metav1.Status{}
		if json.Unmarshal(data, s) == nil && s.Kind == "Status" && s.Status == metav1.StatusFailure {
			if s.Code == 0 {
				s.Code = int32(res.StatusCode)
			}
			return nil, &apierrors.StatusError{ErrStatus: *s}
		}
		msg := strings.TrimSpace(string(data))
		if len(msg) > 256 {
			msg = msg[:256]
		}
		return nil, apierrors.NewGenericServerResponse(res.StatusCode, "POST", schema.GroupResource{}, "", msg, 0, true)
	}
	review := &admissionv1.AdmissionReview{}
	if err := json.Unmarshal(data, review); err != nil {
		return nil, fmt.Errorf("decoding the webhook's AdmissionReview: %w", err)
	}
	return review, nil
}

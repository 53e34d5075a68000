package decode

import (
	"mime"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// inputSerializer is kube's NegotiateInputSerializer: no Content-Type is
// the first served type (JSON); one that mime.ParseMediaType refuses
// (`application/json;;`, a parameter without a value, a parameter named
// twice) or that names no served type is its 415. Case, spaces and
// parameters otherwise do not matter.
func inputSerializer(contentType string, served []runtime.SerializerInfo) (runtime.SerializerInfo, error) {
	if contentType == "" {
		contentType = served[0].MediaType
	}
	if mt, _, err := mime.ParseMediaType(contentType); err == nil {
		if info, ok := runtime.SerializerInfoForMediaType(served, mt); ok {
			return info, nil
		}
	}
	accepted := make([]string, len(served))
	for i, info := range served {
		accepted[i] = info.MediaType
	}
	return runtime.SerializerInfo{}, unsupportedMediaType(accepted)
}

// unsupportedMediaType is kube's 415, naming what it accepts.
func unsupportedMediaType(accepted []string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: "the body of the request was in an unknown format - accepted media types include: " + strings.Join(accepted, ", "),
	}}
}

package decode

import (
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/request"
)

// kube's 415 for a body it cannot read, with the media types served (CBOR
// is behind a gate kube leaves off).
const unknownFormat = "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"

// TestCreateContentType: a create or update body's Content-Type is read
// with mime.ParseMediaType, as kube's NegotiateInputSerializer does.
func TestCreateContentType(t *testing.T) {
	const cm = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`
	cases := []struct {
		name, contentType string
		ok                bool
	}{
		{"none", "", true},
		{"json", "application/json", true},
		{"json with a charset", "application/json; charset=utf-8", true},
		{"json with an unknown parameter", "application/json;foo=bar", true},
		{"json with a trailing semicolon", "application/json;", true},
		{"json in capitals", "Application/JSON", true},
		{"json with spaces", "  application/json  ", true},
		{"yaml", "application/yaml", true},
		{"three semicolons", "application/json;;;", false},
		{"two semicolons", "application/json;;", false},
		{"parameter without a value", "application/json; charset", false},
		{"parameter without a name", "application/json;=x", false},
		{"parameter named twice", "application/json; a=1; a=2", false},
		{"unterminated quote", `application/json; a="x`, false},
		{"text", "text/plain", false},
		{"cbor", "application/cbor", false},
		{"a patch type", "application/merge-patch+json", false},
	}
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/api/v1/namespaces/default/configmaps", nil)
			if tc.contentType != "" {
				r.Header.Set("Content-Type", tc.contentType)
			}
			_, _, err := decodeBody(r, []byte(cm), defaultMaxBody, gvk, &corev1.ConfigMap{}, "")
			if tc.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !apierrors.IsUnsupportedMediaType(err) || err.Error() != unknownFormat {
				t.Fatalf("got %v, want kube's 415 %q", err, unknownFormat)
			}
		})
	}
}

// TestDeleteBody: a delete's DeleteOptions body is read by its
// Content-Type as kube does, and a deletecollection's list options are
// checked (kube's ValidateListOptions) before its DeleteOptions.
func TestDeleteBody(t *testing.T) {
	reg := api.NewRegistry(api.Resources(api.Options{}))
	cms, ok := reg.Lookup("", "v1", "configmaps")
	if !ok {
		t.Fatal("no configmaps resource")
	}
	d := newDecoder(defaultConfig())
	const opts = `{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":3}`
	cases := []struct {
		name, query, contentType, body string
		code                           int32
		msg                            string
	}{
		{name: "json body", contentType: "application/json", body: opts},
		{name: "no content type", body: opts},
		{name: "yaml body", contentType: "application/yaml", body: "kind: DeleteOptions\napiVersion: v1\ngracePeriodSeconds: 3\n"},
		{name: "malformed content type", contentType: "application/json;;;", body: opts, code: 415, msg: unknownFormat},
		{name: "text body", contentType: "text/plain", body: opts, code: 415, msg: unknownFormat},
		{name: "match without a resourceVersion", query: "resourceVersionMatch=NotOlderThan", body: opts, code: 422,
			msg: `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided`},
		{name: "exact from 0", query: "resourceVersion=0&resourceVersionMatch=Exact", code: 422,
			msg: `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"`},
		{name: "sendInitialEvents", query: "sendInitialEvents=true", code: 422,
			msg: `ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list`},
		{name: "bogus match", query: "resourceVersion=1&resourceVersionMatch=Bogus", code: 422,
			msg: `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""`},
		{name: "list options before delete options", query: "sendInitialEvents=true", contentType: "text/plain", body: opts, code: 422},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("DELETE", "/api/v1/namespaces/default/configmaps?"+tc.query, strings.NewReader(tc.body))
			if tc.contentType != "" {
				r.Header.Set("Content-Type", tc.contentType)
			}
			info := &request.RequestInfo{IsResourceRequest: true, Verb: "deletecollection", APIVersion: "v1", Resource: "configmaps", Namespace: "default"}
			op, err := d.delete(r, info, cms, []byte(tc.body))
			if tc.code == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if tc.body != "" && (op.DeleteOptions.GracePeriodSeconds == nil || *op.DeleteOptions.GracePeriodSeconds != 3) {
					t.Errorf("delete options %+v", op.DeleteOptions)
				}
				return
			}
			st, ok := err.(apierrors.APIStatus)
			if !ok || st.Status().Code != tc.code || tc.msg != "" && st.Status().Message != tc.msg {
				t.Fatalf("got %v, want %d %q", err, tc.code, tc.msg)
			}
			if tc.code == 422 && (st.Status().Reason != metav1.StatusReasonInvalid || st.Status().Details.Kind != "ListOptions") {
				t.Errorf("status %+v", st.Status())
			}
		})
	}
}

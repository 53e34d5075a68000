package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
)

// Hostile requests each get kube's 4xx Status, store nothing and leave the
// server healthy. The expected codes, reasons and messages are kube-apiserver's
// (k8s.io/apiserver endpoints/handlers and storage).
func TestHostileRequests(t *testing.T) {
	ts, cs := e2eutil.APIServer(t)
	ctx := context.Background()
	const ns = "hostile"
	e2eutil.Namespace(t, cs, ns)
	// One object for the requests that need a target.
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "target"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := ts.HTTPClient(t)
	base := ts.URL() + "/api/v1/namespaces/" + ns + "/configmaps"

	cm := func(name string) string {
		b, _ := json.Marshal(name)
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":` + string(b) + `},"data":{"k":"v"}}`
	}
	nested := func(depth int) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"data":{"k":` +
			strings.Repeat(`{"a":`, depth) + `1` + strings.Repeat(`}`, depth) + `}}`
	}
	// kube's body limit is 3 MiB; one byte more is refused before decoding.
	big := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"k":"`
	big += strings.Repeat("x", 3<<20+1-len(big)-len(`"}}`)) + `"}}`
	if len(big) != 3<<20+1 {
		t.Fatalf("big body is %d bytes", len(big))
	}

	// Bodies for the input checks: a ConfigMap, 40 KiB aliased 100 times (4
	// MiB as JSON from a 41 KiB body), and 1 KiB aliased ten times over six
	// levels (1 GiB from 1.6 KiB).
	const (
		invalid     = `ListOptions.meta.k8s.io "" is invalid: `
		unknownType = "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"
		expanded    = "Request entity too large: limit is 3145728 for the YAML body with its aliases expanded"
	)
	made := cm("made")
	aliased := func(head string) string {
		var b strings.Builder
		b.WriteString(head + "data:\n  k0: &s " + strings.Repeat("x", 40<<10) + "\n")
		for i := 1; i <= 100; i++ {
			fmt.Fprintf(&b, "  k%d: *s\n", i)
		}
		return b.String()
	}
	var laughs strings.Builder
	laughs.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: made}\nbomb:\n  l0: &l0 " + strings.Repeat("x", 1024) + "\n")
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&laughs, "  l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", i-1), 10), ","))
	}
	// The pods' kubelet subresources, on a pod that does not exist.
	pod := "/api/v1/namespaces/" + ns + "/pods/nope"
	const noMethod = "the server does not allow this method on the requested resource"

	tests := []struct {
		name        string
		method      string
		path        string // after base, or from /api; may carry a query
		contentType string
		body        string
		code        int
		reason      metav1.StatusReason
		msg         string // a part of kube's message
	}{
		{"malformed JSON", "POST", "", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":`, 400, metav1.StatusReasonBadRequest, ""},
		{"not JSON at all", "POST", "", "application/json", "\x00\x01\x02", 400, metav1.StatusReasonBadRequest, "the object provided is unrecognized (must be of type ConfigMap)"},
		{"100 levels of nesting", "POST", "", "application/json", nested(100), 400, metav1.StatusReasonBadRequest, `ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal object into Go struct field ConfigMap.data of type string`},
		{"10001 levels of nesting", "POST", "", "application/json", nested(10001), 400, metav1.StatusReasonBadRequest, ""},
		{"deep nesting in YAML", "POST", "", "application/yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata: {k: " + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + "}\n", 400, metav1.StatusReasonBadRequest, ""},
		{"3 MiB + 1 byte body", "POST", "", "application/json", big, 413, metav1.StatusReasonRequestEntityTooLarge, "limit is 3145728"},
		{"NUL byte in a name", "POST", "", "application/json", cm("a\x00b"), 422, metav1.StatusReasonInvalid, "metadata.name: Invalid value"},
		{"invalid UTF-8 in a name", "POST", "", "application/json", strings.Replace(cm("aXb"), "X", "\xff\xfe", 1), 422, metav1.StatusReasonInvalid, "metadata.name: Invalid value"},
		{"254-character name", "POST", "", "application/json", cm(strings.Repeat("a", 254)), 422, metav1.StatusReasonInvalid, "must be no more than 253 characters"},
		// kube checks path names only for "/", "%", "." and "..": a NUL is just not found.
		{"NUL byte in a path name", "PUT", "/a%00b", "application/json", cm("a\x00b"), 404, metav1.StatusReasonNotFound, `configmaps "a\x00b" not found`},
		// %2F splits the path: name "a", subresource "b", which no route serves.
		{"slash in a path name", "GET", "/a%2Fb", "", "", 404, metav1.StatusReasonNotFound, "the server could not find the requested resource"},
		{"slash in a path name on delete", "DELETE", "/target%2Fb", "", "", 404, metav1.StatusReasonNotFound, "the server could not find the requested resource"},
		{"path name ..", "GET", "/..", "", "", 400, metav1.StatusReasonBadRequest, `Name parameter invalid: "..": may not be '..'`},
		{"path name .", "GET", "/.", "", "", 400, metav1.StatusReasonBadRequest, `Name parameter invalid: ".": may not be '.'`},
		{"path name %2e%2e", "GET", "/%2e%2e", "", "", 400, metav1.StatusReasonBadRequest, `Name parameter invalid: "..": may not be '..'`},
		{"percent in a path name", "GET", "/a%25b", "", "", 400, metav1.StatusReasonBadRequest, `Name parameter invalid: "a%b": may not contain '%'`},
		{"path name .. on update", "PUT", "/..", "application/json", cm(".."), 400, metav1.StatusReasonBadRequest, `Name parameter invalid: "..": may not be '..'`},
		{"path name . on patch", "PATCH", "/.", "application/merge-patch+json", `{"data":{"k":"w"}}`, 400, metav1.StatusReasonBadRequest, `Name parameter invalid: ".": may not be '.'`},
		{"percent in a path name on apply", "PATCH", "/a%25b?fieldManager=m", "application/apply-patch+yaml", cm("a%b"), 400, metav1.StatusReasonBadRequest, `Name parameter invalid: "a%b": may not contain '%'`},
		{"path name .. on delete", "DELETE", "/..", "", "", 400, metav1.StatusReasonBadRequest, `Name parameter invalid: "..": may not be '..'`},
		{"body name .. on create", "POST", "", "application/json", cm(".."), 422, metav1.StatusReasonInvalid, `metadata.name: Invalid value: ".."`},
		{"unknown kind", "POST", "", "application/json", `{"apiVersion":"v1","kind":"Bogus","metadata":{"name":"k"}}`, 400, metav1.StatusReasonBadRequest, `Bogus in version "v1" cannot be handled as a ConfigMap: no kind "Bogus" is registered for version "v1"`},
		{"wrong apiVersion", "POST", "", "application/json", `{"apiVersion":"apps/v1","kind":"ConfigMap","metadata":{"name":"k"}}`, 400, metav1.StatusReasonBadRequest, ""},
		{"unknown apiVersion", "POST", "", "application/json", `{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"k"}}`, 400, metav1.StatusReasonBadRequest, ""},
		{"another kind's body", "POST", "", "application/json", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"k"}}`, 400, metav1.StatusReasonBadRequest, ""},
		{"namespace mismatch", "POST", "", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"k","namespace":"other"}}`, 400, metav1.StatusReasonBadRequest,
			"the namespace of the provided object does not match the namespace sent on the request"},
		{"name mismatch on update", "PUT", "/target", "application/json", cm("other"), 400, metav1.StatusReasonBadRequest,
			"the name of the object (other) does not match the name on the URL (target)"},
		{"huge limit", "GET", "?limit=99999999999999999999", "", "", 400, metav1.StatusReasonBadRequest, ""},
		{"limit not a number", "GET", "?limit=ten", "", "", 400, metav1.StatusReasonBadRequest, ""},
		{"bogus continue token", "GET", "?limit=1&continue=bogus%21", "", "", 400, metav1.StatusReasonBadRequest, "continue key is not valid"},
		{"resourceVersion not a number", "GET", "?resourceVersion=abc", "", "", 400, metav1.StatusReasonBadRequest, ""},
		{"resourceVersion not a number on get", "GET", "/target?resourceVersion=abc", "", "", 400, metav1.StatusReasonBadRequest, ""},
		{"unsupported patch type", "PATCH", "/target", "application/xml", `<x/>`, 415, metav1.StatusReasonUnsupportedMediaType, "the body of the request was in an unknown format"},
		{"JSON patch on a missing path", "PATCH", "/target", "application/json-patch+json", `[{"op":"replace","path":"/data/missing/deeper","value":"x"}]`, 422, metav1.StatusReasonInvalid, ""},
		{"duplicate field under Strict", "POST", "?fieldValidation=Strict", "application/json",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup","name":"dup2"}}`, 400, metav1.StatusReasonBadRequest,
			`ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "metadata.name"`},
		{"unknown field under Strict", "POST", "?fieldValidation=Strict", "application/json",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"unk"},"datum":{}}`, 400, metav1.StatusReasonBadRequest,
			`ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "datum"`},
		{"bad fieldValidation", "POST", "?fieldValidation=Loud", "application/json", cm("fv"), 422, metav1.StatusReasonInvalid, `fieldValidation: Unsupported value: "Loud"`},
		{"list: match without resourceVersion", "GET", "?resourceVersionMatch=NotOlderThan", "", "", 422, metav1.StatusReasonInvalid,
			invalid + "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"},
		{"list: Exact from 0", "GET", "?resourceVersion=0&resourceVersionMatch=Exact", "", "", 422, metav1.StatusReasonInvalid,
			invalid + `resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"`},
		{"list: sendInitialEvents", "GET", "?sendInitialEvents=true", "", "", 422, metav1.StatusReasonInvalid,
			invalid + "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"},
		{"list: bogus match", "GET", "?resourceVersion=1&resourceVersionMatch=Bogus", "", "", 422, metav1.StatusReasonInvalid,
			invalid + `resourceVersionMatch: Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""`},
		{"list: match with continue", "GET", "?resourceVersion=1&resourceVersionMatch=Exact&continue=x", "", "", 422, metav1.StatusReasonInvalid,
			invalid + "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided"},
		{"watch: initial events without match", "GET", "?watch=true&sendInitialEvents=true", "", "", 422, metav1.StatusReasonInvalid,
			invalid + "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"},
		{"watch: match without initial events", "GET", "?watch=true&resourceVersionMatch=NotOlderThan", "", "", 422, metav1.StatusReasonInvalid,
			invalid + "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"},
		{"deletecollection: match without resourceVersion", "DELETE", "?resourceVersionMatch=NotOlderThan", "", "", 422, metav1.StatusReasonInvalid,
			invalid + "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"},
		{"deletecollection: Exact from 0", "DELETE", "?resourceVersion=0&resourceVersionMatch=Exact", "", "", 422, metav1.StatusReasonInvalid,
			invalid + `resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"`},
		{"deletecollection: sendInitialEvents", "DELETE", "?sendInitialEvents=true", "", "", 422, metav1.StatusReasonInvalid,
			invalid + "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"},
		{"deletecollection: bogus match", "DELETE", "?resourceVersion=1&resourceVersionMatch=Bogus", "", "", 422, metav1.StatusReasonInvalid,
			invalid + `resourceVersionMatch: Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""`},
		{"create: three semicolons", "POST", "", "application/json;;;", made, 415, metav1.StatusReasonUnsupportedMediaType, unknownType},
		{"create: parameter without value", "POST", "", "application/json; charset", made, 415, metav1.StatusReasonUnsupportedMediaType, unknownType},
		{"create: parameter named twice", "POST", "", "application/json; a=1; a=2", made, 415, metav1.StatusReasonUnsupportedMediaType, unknownType},
		{"update: two semicolons", "PUT", "/target", "application/json;;", cm("target"), 415, metav1.StatusReasonUnsupportedMediaType, unknownType},
		{"delete: body of an unknown type", "DELETE", "/target", "text/plain", `{"kind":"DeleteOptions","apiVersion":"v1"}`, 415, metav1.StatusReasonUnsupportedMediaType, unknownType},
		{"delete: malformed type", "DELETE", "/target", "application/json;;", `{"kind":"DeleteOptions","apiVersion":"v1"}`, 415, metav1.StatusReasonUnsupportedMediaType, unknownType},
		{"create: YAML string aliased past the limit", "POST", "", "application/yaml", aliased("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: made}\n"), 413,
			metav1.StatusReasonRequestEntityTooLarge, expanded},
		{"create: YAML billion laughs", "POST", "", "application/yaml", laughs.String(), 413, metav1.StatusReasonRequestEntityTooLarge, expanded},
		{"update: YAML aliased past the limit", "PUT", "/target", "application/yaml", aliased("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: target}\n"), 413,
			metav1.StatusReasonRequestEntityTooLarge, expanded},
		{"apply: aliased past the limit", "PATCH", "/target?fieldManager=t", "application/apply-patch+yaml", aliased("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: target}\n"), 413,
			metav1.StatusReasonRequestEntityTooLarge, expanded},
		{"apply: billion laughs", "PATCH", "/target?fieldManager=t", "application/apply-patch+yaml", strings.Replace(laughs.String(), "made", "target", 1), 413,
			metav1.StatusReasonRequestEntityTooLarge, expanded},
		{"log of a missing pod", "GET", pod + "/log", "", "", 404, metav1.StatusReasonNotFound, `pods "nope" not found`},
		{"log by POST", "POST", pod + "/log", "", "", 405, metav1.StatusReasonMethodNotAllowed, noMethod},
		{"exec by PUT", "PUT", pod + "/exec", "", "", 405, metav1.StatusReasonMethodNotAllowed, noMethod},
		{"log tailLines not a number", "GET", pod + "/log?tailLines=x", "", "", 400, metav1.StatusReasonBadRequest, `strconv.ParseInt: parsing "x": invalid syntax`},
		{"log tailLines negative", "GET", pod + "/log?tailLines=-1", "", "", 422, metav1.StatusReasonInvalid,
			`PodLogOptions "nope" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0`},
		{"portforward to a named port", "POST", pod + "/portforward?ports=http", "", "", 400, metav1.StatusReasonBadRequest,
			`cannot convert to []int32: strconv.ParseUint: parsing "http": invalid syntax`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := base + tc.path
			if strings.HasPrefix(tc.path, "/api/") {
				url = ts.URL() + tc.path
			}
			req, err := http.NewRequest(tc.method, url, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var st metav1.Status
			if err := json.Unmarshal(raw, &st); err != nil || st.Kind != "Status" {
				t.Fatalf("%d, not a Status: %.300s", resp.StatusCode, raw)
			}
			if resp.StatusCode != tc.code || int(st.Code) != tc.code || st.Reason != tc.reason || !strings.Contains(st.Message, tc.msg) {
				t.Errorf("got %d %d %s %.300q\nwant %d %s containing %q", resp.StatusCode, st.Code, st.Reason, st.Message, tc.code, tc.reason, tc.msg)
			}
			if strings.HasPrefix(tc.msg, invalid) && (st.Details == nil || st.Details.Kind != "ListOptions" || st.Details.Group != "meta.k8s.io" || len(st.Details.Causes) == 0) {
				t.Errorf("details %+v", st.Details)
			}
			t.Logf("%d %s %.200s", st.Code, st.Reason, st.Message)
			if code, body := e2eutil.Get(t, e2eutil.MustLoopbackClient(t, ts), ts.URL()+"/readyz"); code != http.StatusOK {
				t.Errorf("/readyz after the request: %d %s", code, body)
			}
		})
	}

	// Kube treats a negative limit as no limit: a full list, not an error.
	t.Run("negative limit", func(t *testing.T) {
		code, body := e2eutil.Get(t, c, base+"?limit=-1")
		var l corev1.ConfigMapList
		if code != 200 || json.Unmarshal([]byte(body), &l) != nil || len(l.Items) != 1 || l.Continue != "" {
			t.Errorf("limit=-1: %d %.300s", code, body)
		}
	})

	// Nothing was stored: the namespace holds only the target, unchanged.
	list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "target" || len(list.Items[0].Data) != 1 || list.Items[0].Data["k"] != "v" {
		t.Errorf("hostile requests stored something: %+v", list.Items)
	}
	// And the server still serves ordinary writes.
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("create after the hostile requests: %v", err)
	}
}

// A body one byte over kube's 3 MiB limit is refused on every write verb,
// including over a chunked body whose length is not announced.
func TestBodyLimitOnEveryWrite(t *testing.T) {
	ts, cs := e2eutil.APIServer(t)
	e2eutil.Namespace(t, cs, "bodylimit")
	c := ts.HTTPClient(t)
	base := ts.URL() + "/api/v1/namespaces/bodylimit/configmaps"
	body := bytes.Repeat([]byte("x"), 3<<20+1)
	for _, tc := range []struct{ method, path, ct string }{
		{"POST", "", "application/json"},
		{"PUT", "/x", "application/json"},
		{"PATCH", "/x", "application/merge-patch+json"},
		{"PATCH", "/x?fieldManager=m", "application/apply-patch+yaml"},
		{"DELETE", "/x", "application/json"},
	} {
		t.Run(tc.method+tc.path, func(t *testing.T) {
			// io.MultiReader hides the length, so the body goes chunked.
			req, _ := http.NewRequest(tc.method, base+tc.path, io.MultiReader(bytes.NewReader(body)))
			req.Header.Set("Content-Type", tc.ct)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 413 || !bytes.Contains(raw, []byte(`"reason":"RequestEntityTooLarge"`)) {
				t.Errorf("%d %.300s", resp.StatusCode, raw)
			}
		})
	}
}

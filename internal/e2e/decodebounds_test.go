package e2e

import (
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

// TestRequestInputChecks: list options kube's ValidateListOptions refuses
// (list, watch, deletecollection), Content-Types mime.ParseMediaType
// refuses, and YAML bodies whose aliases expand past the body limit each
// get their Status and change nothing; ordinary YAML with anchors still
// works.
func TestRequestInputChecks(t *testing.T) {
	ts, cs := e2eutil.APIServer(t)
	ctx := context.Background()
	const ns = "inputchecks"
	e2eutil.Namespace(t, cs, ns)
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "target"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := ts.HTTPClient(t)
	base := ts.URL() + "/api/v1/namespaces/" + ns + "/configmaps"
	const (
		invalid     = `ListOptions.meta.k8s.io "" is invalid: `
		unknownType = "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"
		expanded    = "Request entity too large: limit is 3145728 for the YAML body with its aliases expanded"
	)
	cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"made"}}`
	// 40 KiB aliased 100 times: 4 MiB as JSON from a 41 KiB body.
	aliased := func(head string) string {
		var b strings.Builder
		b.WriteString(head + "data:\n  k0: &s " + strings.Repeat("x", 40<<10) + "\n")
		for i := 1; i <= 100; i++ {
			fmt.Fprintf(&b, "  k%d: *s\n", i)
		}
		return b.String()
	}
	// 1 KiB aliased ten times over six levels: 1 GiB from 1.6 KiB.
	var laughs strings.Builder
	laughs.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: made}\nbomb:\n  l0: &l0 " + strings.Repeat("x", 1024) + "\n")
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&laughs, "  l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", i-1), 10), ","))
	}

	tests := []struct {
		name        string
		method      string
		path        string // after base; may carry a query
		contentType string
		body        string
		code        int
		reason      metav1.StatusReason
		msg         string // the whole message
	}{
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
		{"create: three semicolons", "POST", "", "application/json;;;", cm, 415, metav1.StatusReasonUnsupportedMediaType, unknownType},
		{"create: parameter without value", "POST", "", "application/json; charset", cm, 415, metav1.StatusReasonUnsupportedMediaType, unknownType},
		{"create: parameter named twice", "POST", "", "application/json; a=1; a=2", cm, 415, metav1.StatusReasonUnsupportedMediaType, unknownType},
		{"update: two semicolons", "PUT", "/target", "application/json;;", strings.Replace(cm, "made", "target", 1), 415, metav1.StatusReasonUnsupportedMediaType, unknownType},
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
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
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
			if resp.StatusCode != tc.code || int(st.Code) != tc.code || st.Reason != tc.reason || st.Message != tc.msg {
				t.Errorf("got %d %d %s %.300q\nwant %d %s %q", resp.StatusCode, st.Code, st.Reason, st.Message, tc.code, tc.reason, tc.msg)
			}
			if tc.code == 422 && (st.Details == nil || st.Details.Kind != "ListOptions" || st.Details.Group != "meta.k8s.io" || len(st.Details.Causes) == 0) {
				t.Errorf("details %+v", st.Details)
			}
		})
	}

	// Nothing was stored, changed or deleted.
	list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "target" || len(list.Items[0].Data) != 1 || list.Items[0].Data["k"] != "v" {
		t.Errorf("refused requests changed something: %+v", list.Items)
	}

	// Ordinary YAML with anchors, and an apply with them, still work, as
	// does a patch Content-Type with stray semicolons, which kube cuts at
	// the first one.
	for _, tc := range []struct {
		name, method, path, contentType, body string
		code                                  int
	}{
		{"create YAML with anchors", "POST", "", "application/yaml",
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: anchored\n  labels: &l {app: web}\n  annotations: *l\ndata:\n  a: &v hello\n  b: *v\n", 201},
		{"apply with anchors", "PATCH", "/applied?fieldManager=t", "application/apply-patch+yaml",
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  a: &v hello\n  b: *v\n", 201},
		{"merge patch with semicolons", "PATCH", "/target", "application/merge-patch+json;;;", `{"data":{"m":"n"}}`, 200},
		{"create JSON in capitals with a charset", "POST", "", "Application/JSON; charset=utf-8", cm, 201},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", tc.contentType)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.code {
				t.Fatalf("got %d %.300s, want %d", resp.StatusCode, raw, tc.code)
			}
		})
	}
	got, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "anchored", metav1.GetOptions{})
	if err != nil || got.Labels["app"] != "web" || got.Annotations["app"] != "web" || got.Data["b"] != "hello" {
		t.Errorf("anchored: %+v, %v", got, err)
	}
}

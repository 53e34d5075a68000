package revisions

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

// Hostile bodies for the two resources get kube's Status: rows for the
// coordinator's TestHostileRequests table.
func TestHostileRevisionBodies(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	cs, _ := clients(t, ts)
	e2eutil.Namespace(t, cs, "rev-bad")
	c := ts.HTTPClient(t)
	const revs = "/apis/apps/v1/namespaces/rev-bad/controllerrevisions"
	for _, tc := range []struct {
		name, path, body string
		code             int32
		reason           metav1.StatusReason
		msg              string
	}{
		{"data a string", revs, `{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"a"},"data":"x","revision":1}`,
			422, metav1.StatusReasonInvalid, `ControllerRevision.apps "a" is invalid: data: Required value: data must be a valid JSON object`},
		{"data null", revs, `{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"a"},"data":null}`,
			422, metav1.StatusReasonInvalid, `ControllerRevision.apps "a" is invalid: data: Required value: data is mandatory`},
		{"negative revision", revs, `{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"a"},"data":{},"revision":-3}`,
			422, metav1.StatusReasonInvalid, `ControllerRevision.apps "a" is invalid: revision: Invalid value: -3: must be greater than or equal to 0`},
		{"pod template with ephemeral containers", "/api/v1/namespaces/rev-bad/podtemplates",
			`{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"a"},"template":{"spec":{"containers":[{"name":"c","image":"i"}],"ephemeralContainers":[{"name":"e","image":"i"}]}}}`,
			422, metav1.StatusReasonInvalid, `PodTemplate "a" is invalid: template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, ts.URL()+tc.path, bytes.NewBufferString(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			var st metav1.Status
			if err := json.Unmarshal(b, &st); err != nil {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			if int32(resp.StatusCode) != tc.code || st.Code != tc.code || st.Reason != tc.reason || st.Message != tc.msg {
				t.Errorf("got %d %s %q\nwant %d %s %q", resp.StatusCode, st.Reason, st.Message, tc.code, tc.reason, tc.msg)
			}
		})
	}
}

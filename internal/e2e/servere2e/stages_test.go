package servere2e

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

// The request stages answer through the whole server with kube's Status.
func TestRequestStagesThroughTheServer(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{Configure: func(c *config.Config) {
		for i, e := range c.Pipeline {
			if e.Name == "timeout" {
				c.Pipeline[i].Config = map[string]any{"requestTimeout": "30s"}
			}
		}
	}})
	c := ts.HTTPClient(t)
	cases := []struct {
		name   string
		method string
		path   string
		body   []byte
		code   int
		want   []string
	}{
		{name: "body over the limit", method: "POST", path: "/api/v1/namespaces/default/configmaps",
			body: bytes.Repeat([]byte("x"), 3145728+1), code: 413,
			want: []string{`"reason":"RequestEntityTooLarge"`, "limit is 3145728"}},
		{name: "bad timeout parameter", method: "GET", path: "/api/v1/namespaces/default/configmaps?timeout=soon", code: 400,
			want: []string{`"reason":"BadRequest"`, "invalid timeout specified in the request URL"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, ts.URL()+tc.path, bytes.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var buf bytes.Buffer
			buf.ReadFrom(resp.Body)
			if resp.StatusCode != tc.code {
				t.Fatalf("code %d, want %d: %s", resp.StatusCode, tc.code, buf.String())
			}
			e2eutil.MustContain(t, tc.name, buf.String(), append(tc.want, `"kind":"Status"`)...)
		})
	}
	_, m := e2eutil.Get(t, c, ts.URL()+"/metrics")
	e2eutil.MustContain(t, "/metrics", m, `apiserver_pipeline_stage_rejections_total{code="413",stage="decode"} 1`,
		`apiserver_pipeline_stage_rejections_total{code="400",stage="timeout"} 1`)
}

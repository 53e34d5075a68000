package webhook

import (
	"context"
	"net/http"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
)

// BenchmarkDispatch measures a webhook plugin's cost per request: with no
// webhook to call, and with one HTTPS webhook on 127.0.0.1 (a kept-alive
// connection) that allows, or patches a label in.
func BenchmarkDispatch(b *testing.B) {
	jsonPatch := admissionv1.PatchTypeJSONPatch
	srv, ca := hookServer(b, func(w http.ResponseWriter, r *http.Request, review *admissionv1.AdmissionReview) {
		resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		if r.URL.Path == "/label" {
			resp.Patch, resp.PatchType = []byte(`[{"op":"add","path":"/metadata/labels","value":{"added":"yes"}}]`), &jsonPatch
		}
		respond(w, resp)
	})
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		hooks []Hook
		admit bool
	}{
		{"none", nil, false},
		{"validating-allow", []Hook{testHook(srv.URL+"/allow", ca)}, false},
		{"mutating-patch", []Hook{testHook(srv.URL+"/label", ca)}, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			d := &Dispatcher{Source: staticSource(c.hooks), Match: allMatch{}, Clients: &Clients{}, Key: "m"}
			defer d.Clients.Close()
			b.ReportAllocs()
			for b.Loop() {
				a := attrs("create", cm("c", nil), nil, false)
				var err error
				if c.admit {
					err = d.Admit(ctx, a)
				} else {
					err = d.Validate(ctx, a)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

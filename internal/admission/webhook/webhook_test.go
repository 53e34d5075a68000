package webhook

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/kpipe/kpipe/internal/admission"
	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/request"
)

var configMaps = &api.Resource{GroupVersion: schema.GroupVersion{Version: "v1"}, Name: "configmaps", Kind: "ConfigMap", Namespaced: true}

func attrs(verb string, obj, old *corev1.ConfigMap, dryRun bool) *admission.Attributes {
	op := &request.Operation{Resource: configMaps, Namespace: "ns", DryRun: dryRun, FieldManager: "kubectl"}
	if obj != nil {
		op.Object = obj
	}
	if old != nil {
		op.Old = old
		op.Name = old.Name
	}
	if verb == "delete" {
		op.DeleteOptions = &metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}
	}
	return &admission.Attributes{Operation: admission.OperationOf(verb), Info: &request.RequestInfo{Verb: verb, Namespace: "ns", Resource: "configmaps"}, Op: op}
}

func cm(name string, labels map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: labels}, Data: map[string]string{"k": "v"}}
}

func TestReview(t *testing.T) {
	user := &request.User{Name: "alice", UID: "u1", Groups: []string{"devs", "system:authenticated"}, Extra: map[string][]string{"scopes": {"a"}}}
	for _, c := range []struct {
		name        string
		verb        string
		obj, old    *corev1.ConfigMap
		dryRun      bool
		wantOp      admissionv1.Operation
		wantOptions string
		wantName    string
	}{
		{"create", "create", cm("c", nil), nil, false, admissionv1.Create, "CreateOptions", "c"},
		{"update", "update", cm("c", map[string]string{"x": "y"}), cm("c", nil), false, admissionv1.Update, "UpdateOptions", "c"},
		{"patch", "patch", cm("c", nil), cm("c", nil), true, admissionv1.Update, "PatchOptions", "c"},
		{"delete", "delete", nil, cm("c", nil), false, admissionv1.Delete, "DeleteOptions", "c"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &Request{Attributes: attrs(c.verb, c.obj, c.old, c.dryRun), User: user}
			review, err := r.Review("the-uid")
			if err != nil {
				t.Fatal(err)
			}
			// It goes out as JSON and must read back whole.
			b, err := json.Marshal(review)
			if err != nil {
				t.Fatal(err)
			}
			back := &admissionv1.AdmissionReview{}
			if err := json.Unmarshal(b, back); err != nil {
				t.Fatal(err)
			}
			req := back.Request
			if back.Kind != "AdmissionReview" || back.APIVersion != "admission.k8s.io/v1" || req.UID != "the-uid" {
				t.Fatalf("review %s", b)
			}
			if req.Operation != c.wantOp || req.Name != c.wantName || req.Namespace != "ns" ||
				req.Kind != (metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}) ||
				req.Resource != (metav1.GroupVersionResource{Version: "v1", Resource: "configmaps"}) ||
				*req.RequestKind != req.Kind || *req.RequestResource != req.Resource {
				t.Fatalf("request %+v", req)
			}
			if *req.DryRun != c.dryRun {
				t.Fatalf("dryRun %v", *req.DryRun)
			}
			if req.UserInfo.Username != "alice" || req.UserInfo.UID != "u1" || len(req.UserInfo.Groups) != 2 || req.UserInfo.Extra["scopes"][0] != "a" {
				t.Fatalf("userInfo %+v", req.UserInfo)
			}
			var opts metav1.TypeMeta
			if err := json.Unmarshal(req.Options.Raw, &opts); err != nil || opts.Kind != c.wantOptions || opts.APIVersion != "meta.k8s.io/v1" {
				t.Fatalf("options %s: %v", req.Options.Raw, err)
			}
			if c.dryRun && !strings.Contains(string(req.Options.Raw), `"dryRun":["All"]`) {
				t.Fatalf("dry-run options %s", req.Options.Raw)
			}
			hasObj, hasOld := len(req.Object.Raw) > 0 && string(req.Object.Raw) != "null", len(req.OldObject.Raw) > 0 && string(req.OldObject.Raw) != "null"
			if hasObj != (c.obj != nil) || hasOld != (c.old != nil) {
				t.Fatalf("object %s old %s", req.Object.Raw, req.OldObject.Raw)
			}
			if hasObj && !strings.Contains(string(req.Object.Raw), `"kind":"ConfigMap","apiVersion":"v1"`) {
				t.Fatalf("object without its kind: %s", req.Object.Raw)
			}
		})
	}
}

func TestVerify(t *testing.T) {
	jsonPatch := admissionv1.PatchTypeJSONPatch
	empty := admissionv1.PatchType("")
	tm := metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}
	for _, c := range []struct {
		name     string
		review   admissionv1.AdmissionReview
		mutating bool
		wantErr  string
	}{
		{"allowed", admissionv1.AdmissionReview{TypeMeta: tm, Response: &admissionv1.AdmissionResponse{UID: "u", Allowed: true}}, false, ""},
		{"no response", admissionv1.AdmissionReview{TypeMeta: tm}, false, "webhook response was absent"},
		{"other uid", admissionv1.AdmissionReview{TypeMeta: tm, Response: &admissionv1.AdmissionResponse{UID: "x"}}, false, `expected response.uid="u", got "x"`},
		{"no kind", admissionv1.AdmissionReview{Response: &admissionv1.AdmissionResponse{UID: "u"}}, false, "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got /, Kind="},
		{"patch", admissionv1.AdmissionReview{TypeMeta: tm, Response: &admissionv1.AdmissionResponse{UID: "u", Allowed: true, Patch: []byte("[]"), PatchType: &jsonPatch}}, true, ""},
		{"patch without type", admissionv1.AdmissionReview{TypeMeta: tm, Response: &admissionv1.AdmissionResponse{UID: "u", Patch: []byte("[]")}}, true, "webhook returned response.patch but not response.patchType"},
		{"type without patch", admissionv1.AdmissionReview{TypeMeta: tm, Response: &admissionv1.AdmissionResponse{UID: "u", PatchType: &jsonPatch}}, true, "webhook returned response.patchType but not response.patch"},
		{"empty type", admissionv1.AdmissionReview{TypeMeta: tm, Response: &admissionv1.AdmissionResponse{UID: "u", Patch: []byte("[]"), PatchType: &empty}}, true, `webhook returned invalid response.patchType of ""`},
		{"validating patch", admissionv1.AdmissionReview{TypeMeta: tm, Response: &admissionv1.AdmissionResponse{UID: "u", Patch: []byte("[]")}}, false, "validating webhook may not return response.patch"},
		{"validating patch type", admissionv1.AdmissionReview{TypeMeta: tm, Response: &admissionv1.AdmissionResponse{UID: "u", PatchType: &jsonPatch}}, false, "validating webhook may not return response.patchType"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Verify("u", c.mutating, &c.review)
			if got := errString(err); got != c.wantErr {
				t.Fatalf("got %q, want %q", got, c.wantErr)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestDenied(t *testing.T) {
	for _, c := range []struct {
		name     string
		result   *metav1.Status
		wantCode int32
		wantMsg  string
	}{
		{"no result", nil, 400, `admission webhook "w" denied the request without explanation`},
		{"message", &metav1.Status{Message: "no"}, 400, `admission webhook "w" denied the request: no`},
		{"reason", &metav1.Status{Reason: "Because"}, 400, `admission webhook "w" denied the request: Because`},
		{"code kept", &metav1.Status{Code: 422, Message: "bad"}, 422, `admission webhook "w" denied the request: bad`},
		{"success code raised", &metav1.Status{Code: 200, Status: metav1.StatusSuccess, Message: "m"}, 400, `admission webhook "w" denied the request: m`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Denied("w", c.result)
			if err.ErrStatus.Code != c.wantCode || err.Error() != c.wantMsg || err.ErrStatus.Status != metav1.StatusFailure {
				t.Fatalf("got %d %q %q", err.ErrStatus.Code, err.Error(), err.ErrStatus.Status)
			}
		})
	}
}

// hookServer is an HTTPS webhook on 127.0.0.1 answering with answer.
func hookServer(t testing.TB, answer func(w http.ResponseWriter, r *http.Request, review *admissionv1.AdmissionReview)) (*httptest.Server, []byte) {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		review := &admissionv1.AdmissionReview{}
		if err := json.NewDecoder(r.Body).Decode(review); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		answer(w, r, review)
	}))
	t.Cleanup(srv.Close)
	return srv, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

func respond(w http.ResponseWriter, resp *admissionv1.AdmissionResponse) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Response: resp})
}

func testHook(url string, ca []byte) Hook {
	none := admissionregistrationv1.SideEffectClassNone
	return Hook{UID: "c/w/0", Configuration: "c", Name: "w", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: ca},
		FailurePolicy: admissionregistrationv1.Fail, SideEffects: &none, TimeoutSeconds: 10, AdmissionReviewVersions: []string{"v1"}}
}

func TestCall(t *testing.T) {
	var slow atomic.Bool
	srv, ca := hookServer(t, func(w http.ResponseWriter, r *http.Request, review *admissionv1.AdmissionReview) {
		switch r.URL.Path {
		case "/allow":
			respond(w, &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true, Warnings: []string{"w1"}})
		case "/v1beta1":
			// An old webhook: it answers v1beta1 only, without the uid.
			if review.APIVersion != "admission.k8s.io/v1beta1" {
				http.Error(w, "want v1beta1, got "+review.APIVersion, 400)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","response":{"allowed":true}}`))
		case "/status":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			_ = json.NewEncoder(w).Encode(&metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Code: 429, Message: "slow down"})
		case "/garbage":
			_, _ = w.Write([]byte("<html>"))
		case "/slow":
			slow.Store(true)
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		}
	})
	clients := &Clients{}
	defer clients.Close()
	ctx := context.Background()
	req := &Request{Attributes: attrs("create", cm("c", nil), nil, false)}
	dry := &Request{Attributes: attrs("create", cm("c", nil), nil, true)}
	some := admissionregistrationv1.SideEffectClassSome
	for _, c := range []struct {
		name     string
		hook     func(h *Hook)
		req      *Request
		wantErr  string
		wantCode int32 // of the CallError's status, or of the API error
		call     bool  // a *CallError
	}{
		{"allowed", func(h *Hook) {}, req, "", 0, false},
		{"no such CA", func(h *Hook) { h.ClientConfig.CABundle = nil }, req, "tls: failed to verify certificate", 503, true},
		{"bad CA bundle", func(h *Hook) { h.ClientConfig.CABundle = []byte("nope") }, req, "unable to load root certificates", 500, true},
		{"status answer", func(h *Hook) { *h.ClientConfig.URL = srv.URL + "/status" }, req, "failed to call webhook: slow down", 429, true},
		{"garbage", func(h *Hook) { *h.ClientConfig.URL = srv.URL + "/garbage" }, req, `failed calling webhook "w": failed to call webhook: decoding`, 503, true},
		{"timeout", func(h *Hook) { *h.ClientConfig.URL = srv.URL + "/slow"; h.TimeoutSeconds = 1 }, req, "?timeout=1s\": context deadline exceeded", 503, true},
		{"dry run, side effects unset", func(h *Hook) { h.SideEffects = nil }, dry, "Webhook SideEffects is nil", 400, true},
		{"dry run, side effects", func(h *Hook) { h.SideEffects = &some }, dry, `admission webhook "w" does not support dry run`, 400, false},
		{"dry run, none", func(h *Hook) {}, dry, "", 0, false},
		{"no known review version", func(h *Hook) { h.AdmissionReviewVersions = []string{"v2"} }, req, "does not accept known AdmissionReview versions", 400, true},
		{"v1beta1 review", func(h *Hook) {
			h.AdmissionReviewVersions = []string{"v2", "v1beta1", "v1"}
			*h.ClientConfig.URL = srv.URL + "/v1beta1"
		}, req, "", 0, false},
		{"no url nor service", func(h *Hook) { h.ClientConfig.URL = nil }, req, "webhook configuration must have either service or URL", 500, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := testHook(srv.URL+"/allow", ca)
			c.hook(&h)
			start := time.Now()
			resp, err := Call(ctx, clients, 1, &h, c.req, false)
			if d := time.Since(start); d > 3*time.Second {
				t.Fatalf("took %v", d)
			}
			if c.wantErr == "" {
				if err != nil || !resp.Allowed {
					t.Fatalf("got %+v, %v", resp, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("got %v, want %q", err, c.wantErr)
			}
			var ce *CallError
			if errors.As(err, &ce) != c.call {
				t.Fatalf("%T, want a CallError %v", err, c.call)
			}
			code := int32(0)
			if ce != nil {
				code = ce.Status.ErrStatus.Code
			} else if s, ok := err.(apierrors.APIStatus); ok {
				code = s.Status().Code
			}
			if code != c.wantCode {
				t.Fatalf("code %d, want %d", code, c.wantCode)
			}
		})
	}
	if !slow.Load() {
		t.Fatal("the slow case never reached the webhook")
	}
}

func TestClientsCachedByGeneration(t *testing.T) {
	c := &Clients{}
	defer c.Close()
	cc := admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/x")}
	a, _ := c.For(1, "w", cc)
	b, _ := c.For(1, "w", cc)
	if a.Client != b.Client {
		t.Fatal("the same configuration generation built a second client")
	}
	d, _ := c.For(2, "w", cc)
	if d.Client == a.Client {
		t.Fatal("a new configuration generation kept the old client")
	}
	svc, err := c.For(2, "w", admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "ns", Name: "s", Path: ptr.To("/p")}})
	if err != nil || svc.URL.String() != "https://s.ns.svc:443/p" {
		t.Fatalf("service URL %v: %v", svc.URL, err)
	}
}

type staticSource []Hook

func (s staticSource) Hooks(context.Context) ([]Hook, uint64, error) { return s, 1, nil }

type allMatch struct{}

func (allMatch) Matches(context.Context, *Hook, *admission.Attributes) (bool, error) {
	return true, nil
}

func TestMutatingDispatch(t *testing.T) {
	jsonPatch := admissionv1.PatchTypeJSONPatch
	merge := admissionv1.PatchType("MergePatch")
	srv, ca := hookServer(t, func(w http.ResponseWriter, r *http.Request, review *admissionv1.AdmissionReview) {
		resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		switch r.URL.Path {
		case "/label":
			resp.Patch, resp.PatchType = []byte(`[{"op":"add","path":"/metadata/labels","value":{"added":"yes"}}]`), &jsonPatch
		case "/merge":
			resp.Patch, resp.PatchType = []byte(`[{"op":"add","path":"/metadata/labels","value":{"added":"yes"}}]`), &merge
		case "/badpatch":
			resp.Patch, resp.PatchType = []byte(`{"not":"a patch"}`), &jsonPatch
		case "/deny":
			resp.Allowed = false
			resp.Result = &metav1.Status{Code: 403, Message: "no"}
		}
		respond(w, resp)
	})
	verb := "create"
	run := func(paths ...string) (*admission.Attributes, error) {
		var hooks []Hook
		for _, p := range paths {
			h := testHook(srv.URL+p, ca)
			h.Name = strings.TrimPrefix(p, "/")
			hooks = append(hooks, h)
		}
		d := &Dispatcher{Source: staticSource(hooks), Match: allMatch{}, Clients: &Clients{}, Key: "m"}
		a := attrs(verb, cm("c", nil), nil, false)
		if verb == "delete" {
			a = attrs(verb, nil, cm("c", nil), false)
		}
		return a, d.Admit(context.Background(), a)
	}
	a, err := run("/label")
	if err != nil || a.Op.Object.(*corev1.ConfigMap).Labels["added"] != "yes" {
		t.Fatalf("patched %v: %v", a.Op.Object, err)
	}
	if !a.Reinvocation.IsReinvoke() && a.Op.AuditAnnotations["mutation.webhook.admission.k8s.io/round_0_index_0"] != `{"configuration":"c","webhook":"label","mutated":true}` {
		t.Fatalf("annotations %v", a.Op.AuditAnnotations)
	}
	if _, err := run("/merge"); err == nil || !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), `unsupported patch type "MergePatch"`) {
		t.Fatalf("merge patch: %v", err)
	}
	if _, err := run("/badpatch"); err == nil || !strings.Contains(err.Error(), "received undecodable patch in webhook response") {
		t.Fatalf("bad patch: %v", err)
	}
	if _, err := run("/label", "/deny"); !apierrors.IsForbidden(err) || err.Error() != `admission webhook "deny" denied the request: no` {
		t.Fatalf("deny: %v", err)
	}
	verb = "delete"
	if _, err := run("/label"); !apierrors.IsInternalError(err) ||
		!strings.Contains(err.Error(), `admission webhook "label" attempted to modify the object, which is not supported for this operation`) {
		t.Fatalf("a patch on delete: %v", err)
	}
}

func TestValidatingRunsInParallel(t *testing.T) {
	srv, ca := hookServer(t, func(w http.ResponseWriter, r *http.Request, review *admissionv1.AdmissionReview) {
		time.Sleep(time.Second)
		respond(w, &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: r.URL.Path != "/deny", Warnings: []string{r.URL.Path}})
	})
	var hooks []Hook
	for _, p := range []string{"/a", "/b", "/c", "/deny"} {
		h := testHook(srv.URL+p, ca)
		h.Name = p
		hooks = append(hooks, h)
	}
	d := &Dispatcher{Source: staticSource(hooks), Match: allMatch{}, Clients: &Clients{}}
	a := attrs("create", cm("c", nil), nil, false)
	start := time.Now()
	err := d.Validate(context.Background(), a)
	// In turn they would take 4 s; the margin is for loaded machines.
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("four 1 s webhooks took %v: not in parallel", d)
	}
	if err == nil || !strings.Contains(err.Error(), `admission webhook "/deny" denied the request`) {
		t.Fatalf("got %v", err)
	}
	if len(a.Op.Warnings) != 4 {
		t.Fatalf("warnings %v", a.Op.Warnings)
	}
}

package requestinfo

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
)

// router runs the stage as the engine does, on a real chi router. withScope
// false leaves the engine's scope out. seen gets the scope after the stage.
func router(withScope bool, seen func(*request.Scope)) http.Handler {
	r := chi.NewRouter()
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if !withScope {
				next.ServeHTTP(w, req)
				return
			}
			sc := &request.Scope{}
			next.ServeHTTP(w, req.WithContext(request.WithScope(req.Context(), sc)))
			seen(sc)
		})
	})
	r.Use(newStage().Middleware)
	r.Handle("/*", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		info, ok := request.InfoFrom(req.Context())
		if !ok {
			http.Error(w, "no info", http.StatusTeapot)
			return
		}
		w.Header().Set("X-Verb", info.Verb)
	}))
	return r
}

func TestResolves(t *testing.T) {
	cases := []struct {
		name, method, target string
		want                 request.RequestInfo
	}{
		{
			name: "namespaced get", method: http.MethodGet, target: "/api/v1/namespaces/default/pods/web",
			want: request.RequestInfo{IsResourceRequest: true, Verb: "get", APIPrefix: "api", APIVersion: "v1", Namespace: "default", Resource: "pods", Name: "web"},
		},
		{
			name: "group list", method: http.MethodGet, target: "/apis/apps/v1/deployments",
			want: request.RequestInfo{IsResourceRequest: true, Verb: "list", APIPrefix: "apis", APIGroup: "apps", APIVersion: "v1", Resource: "deployments"},
		},
		{
			name: "watch", method: http.MethodGet, target: "/api/v1/configmaps?watch=true",
			want: request.RequestInfo{IsResourceRequest: true, Verb: "watch", APIPrefix: "api", APIVersion: "v1", Resource: "configmaps"},
		},
		{
			name: "bad fieldSelector is a plain list", method: http.MethodGet, target: "/api/v1/configmaps?fieldSelector=%3D%3D%3D",
			want: request.RequestInfo{IsResourceRequest: true, Verb: "list", APIPrefix: "api", APIVersion: "v1", Resource: "configmaps", FieldSelector: "==="},
		},
		{
			name: "create", method: http.MethodPost, target: "/api/v1/namespaces/ns/secrets",
			want: request.RequestInfo{IsResourceRequest: true, Verb: "create", APIPrefix: "api", APIVersion: "v1", Namespace: "ns", Resource: "secrets"},
		},
		{
			name: "non-resource", method: http.MethodGet, target: "/healthz",
			want: request.RequestInfo{Verb: "get"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got *request.RequestInfo
			rec := httptest.NewRecorder()
			router(true, func(sc *request.Scope) { got = sc.Info }).
				ServeHTTP(rec, httptest.NewRequest(tc.method, tc.target, nil))
			if rec.Code != http.StatusOK {
				t.Fatalf("code = %d: %s", rec.Code, rec.Body)
			}
			if got == nil {
				t.Fatal("the scope holds no RequestInfo after the stage")
			}
			if rec.Header().Get("X-Verb") != tc.want.Verb {
				t.Errorf("inner handler saw verb %q, want %q", rec.Header().Get("X-Verb"), tc.want.Verb)
			}
			// Path and Parts follow from the target; compare the rest.
			g := *got
			g.Path, g.Parts = "", nil
			if !reflect.DeepEqual(g, tc.want) {
				t.Errorf("info = %+v\nwant   %+v", g, tc.want)
			}
		})
	}
}

func TestRejects(t *testing.T) {
	cases := []struct {
		name       string
		target     string
		withScope  bool
		wantCode   int32
		wantReason metav1.StatusReason
		wantMsg    string
	}{
		{name: "watch prefix without resource", target: "/api/v1/watch", withScope: true,
			wantCode: 400, wantReason: metav1.StatusReasonBadRequest, wantMsg: "unable to determine kind and namespace"},
		{name: "empty path segment", target: "/api/v1/namespaces//pods", withScope: true,
			wantCode: 400, wantReason: metav1.StatusReasonBadRequest, wantMsg: "empty path segment"},
		{name: "no scope in context", target: "/api/v1/pods", withScope: false,
			wantCode: 500, wantReason: metav1.StatusReasonInternalError, wantMsg: "no request scope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			router(tc.withScope, func(*request.Scope) {}).
				ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.target, nil))
			var st metav1.Status
			if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
				t.Fatalf("body is not a Status: %v: %s", err, rec.Body)
			}
			if rec.Code != int(tc.wantCode) || st.Code != tc.wantCode || st.Reason != tc.wantReason {
				t.Errorf("got %d %+v, want %d %s", rec.Code, st, tc.wantCode, tc.wantReason)
			}
			if !strings.Contains(st.Message, tc.wantMsg) {
				t.Errorf("message = %q, want it to contain %q", st.Message, tc.wantMsg)
			}
		})
	}
}

func TestRegister(t *testing.T) {
	r := pipeline.NewRegistry()
	Register(r)
	pl, ok := r.Lookup(pipeline.KindStage, Name)
	if !ok {
		t.Fatal("not registered")
	}
	if pl.Config != nil || len(pl.Requires) != 0 {
		t.Errorf("request-info takes no config and requires nothing: %+v", pl)
	}
	v, err := pl.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := v.(pipeline.Stage); !ok {
		t.Fatalf("New built a %T, not a Stage", v)
	}
}

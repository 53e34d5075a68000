package authorization

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/plugins/authorization/alwaysallow"
	"github.com/kpipe/kpipe/plugins/authorization/alwaysdeny"
)

func TestForbiddenMessage(t *testing.T) {
	alice := &request.User{Name: "alice"}
	for _, tc := range []struct {
		name   string
		a      auth.Attributes
		reason string
		want   string
		kind   string
		object string
	}{
		{
			name: "namespaced list",
			a:    auth.Attributes{User: alice, Verb: "list", Namespace: "team-b", Resource: "configmaps", ResourceRequest: true},
			want: `configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "team-b"`,
			kind: "configmaps",
		},
		{
			name:   "named object",
			a:      auth.Attributes{User: alice, Verb: "get", Namespace: "team-b", Resource: "configmaps", Name: "x", ResourceRequest: true},
			want:   `configmaps "x" is forbidden: User "alice" cannot get resource "configmaps" in API group "" in the namespace "team-b"`,
			kind:   "configmaps",
			object: "x",
		},
		{
			name: "cluster scope with group",
			a:    auth.Attributes{User: alice, Verb: "list", APIGroup: "rbac.authorization.k8s.io", Resource: "clusterroles", ResourceRequest: true},
			want: `clusterroles.rbac.authorization.k8s.io is forbidden: User "alice" cannot list resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope`,
			kind: "clusterroles",
		},
		{
			name:   "subresource",
			a:      auth.Attributes{User: alice, Verb: "update", APIGroup: "apps", Namespace: "a", Resource: "deployments", Subresource: "scale", Name: "web", ResourceRequest: true},
			want:   `deployments.apps "web" is forbidden: User "alice" cannot update resource "deployments/scale" in API group "apps" in the namespace "a"`,
			kind:   "deployments",
			object: "web",
		},
		{
			name: "non-resource",
			a:    auth.Attributes{User: &request.User{Name: "system:anonymous"}, Verb: "get", Path: "/api/v1/pods"},
			want: `forbidden: User "system:anonymous" cannot get path "/api/v1/pods"`,
		},
		{
			name:   "reason appended",
			a:      auth.Attributes{User: alice, Verb: "get", Path: "/metrics"},
			reason: alwaysdeny.Reason,
			want:   `forbidden: User "alice" cannot get path "/metrics": Everything is forbidden.`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Forbidden(&tc.a, tc.reason)
			st := err.(apierrors.APIStatus).Status()
			if st.Message != tc.want {
				t.Fatalf("message\n got %q\nwant %q", st.Message, tc.want)
			}
			if st.Reason != metav1.StatusReasonForbidden || st.Code != http.StatusForbidden {
				t.Fatalf("reason %s code %d", st.Reason, st.Code)
			}
			if st.Details.Kind != tc.kind || st.Details.Name != tc.object || st.Details.Group != tc.a.APIGroup {
				t.Fatalf("details %+v", st.Details)
			}
		})
	}
}

type fixed struct {
	d      auth.Decision
	reason string
	err    error
	calls  *int
}

func (f fixed) Authorize(context.Context, *auth.Attributes) (auth.Decision, string, error) {
	if f.calls != nil {
		*f.calls++
	}
	return f.d, f.reason, f.err
}

func TestUnion(t *testing.T) {
	user := &request.User{Name: "u", Groups: []string{request.AllAuthenticated}}
	masters := &request.User{Name: "root", Groups: []string{request.SystemPrivileged}}
	boom := errors.New("boom")
	for _, tc := range []struct {
		name       string
		user       *request.User
		list       []auth.Authorizer
		want       auth.Decision
		wantReason string
		wantErr    bool
		laterCalls int
	}{
		{name: "empty list refuses", user: user, want: auth.NoOpinion},
		{name: "system:masters always", user: masters, list: []auth.Authorizer{alwaysdeny.Authorizer{}}, want: auth.Allow},
		{name: "allow passes", user: user, list: []auth.Authorizer{alwaysallow.Authorizer{}}, want: auth.Allow},
		{name: "deny stops the list", user: user, list: []auth.Authorizer{fixed{d: auth.Deny, reason: "no"}}, want: auth.Deny, wantReason: "no"},
		{name: "no opinion asks the next", user: user, list: []auth.Authorizer{alwaysdeny.Authorizer{}, alwaysallow.Authorizer{}}, want: auth.Allow},
		{name: "reasons joined after their authorizer's name, as kube's union", user: user, list: []auth.Authorizer{fixed{reason: "a"}, fixed{reason: "b"}}, want: auth.NoOpinion, wantReason: "x: a\nx: b"},
		{name: "errors kept", user: user, list: []auth.Authorizer{fixed{err: boom}}, want: auth.NoOpinion, wantErr: true},
		{name: "stops at deny", user: user, list: []auth.Authorizer{fixed{d: auth.Deny}}, want: auth.Deny, laterCalls: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Stage{log: zap.NewNop()}
			calls := 0
			for _, a := range append(tc.list, fixed{d: auth.Allow, calls: &calls}) {
				s.authorizers = append(s.authorizers, newNamed("x", a))
			}
			if len(tc.list) == 0 {
				s.authorizers = nil
			}
			d, reason, err := s.Authorize(context.Background(), &auth.Attributes{User: tc.user, Verb: "get", Path: "/"})
			if d != tc.want && !(tc.want == auth.NoOpinion && len(tc.list) > 0) {
				t.Fatalf("decision %v, want %v", d, tc.want)
			}
			if tc.want == auth.NoOpinion && len(tc.list) > 0 {
				// the trailing Allow answers after the no-opinions
				if d != auth.Allow {
					t.Fatalf("decision %v, want the trailing allow", d)
				}
				s.authorizers = s.authorizers[:len(tc.list)]
				d, reason, err = s.Authorize(context.Background(), &auth.Attributes{User: tc.user, Verb: "get", Path: "/"})
				if d != auth.NoOpinion {
					t.Fatalf("decision %v", d)
				}
			}
			if reason != tc.wantReason {
				t.Fatalf("reason %q, want %q", reason, tc.wantReason)
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v", err)
			}
			if tc.want == auth.Deny && calls != tc.laterCalls {
				t.Fatalf("authorizer after a deny was asked %d times", calls)
			}
		})
	}
}

func TestMiddleware(t *testing.T) {
	info := &request.RequestInfo{IsResourceRequest: true, Verb: "list", APIVersion: "v1", Namespace: "team-b", Resource: "pods", Path: "/api/v1/namespaces/team-b/pods"}
	for _, tc := range []struct {
		name     string
		user     *request.User
		list     []auth.Authorizer
		wantCode int
		wantMsg  string
		wantText string
	}{
		{name: "allowed", user: &request.User{Name: "alice"}, list: []auth.Authorizer{alwaysallow.Authorizer{}}, wantCode: http.StatusOK},
		{name: "forbidden", user: &request.User{Name: "alice"}, list: []auth.Authorizer{alwaysdeny.Authorizer{}}, wantCode: http.StatusForbidden,
			wantMsg: `pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-b": alwaysdeny: Everything is forbidden.`},
		{name: "authorizer error is 500", user: &request.User{Name: "alice"}, list: []auth.Authorizer{fixed{err: errors.New("boom")}}, wantCode: http.StatusInternalServerError},
		{name: "authorizer error is kube's plain-text 500", user: &request.User{Name: "alice"}, list: []auth.Authorizer{fixed{err: errors.New("dial <x> & y")}}, wantCode: http.StatusInternalServerError,
			wantText: "Internal Server Error: \"/api/v1/namespaces/team-b/pods\": dial &lt;x&gt; &amp; y\n"},
		{name: "no user is 500", wantCode: http.StatusInternalServerError, wantMsg: "Internal error occurred: no user found for request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Stage{log: zap.NewNop()}
			for _, a := range tc.list {
				s.authorizers = append(s.authorizers, newNamed("x", a))
			}
			h := s.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
			r := httptest.NewRequest(http.MethodGet, info.Path, nil)
			r = r.WithContext(request.WithScope(r.Context(), &request.Scope{Info: info, User: tc.user}))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.wantCode {
				t.Fatalf("code %d, want %d: %s", w.Code, tc.wantCode, w.Body)
			}
			if tc.wantText != "" {
				if got := w.Body.String(); got != tc.wantText || w.Header().Get("Content-Type") != "text/plain; charset=utf-8" {
					t.Fatalf("body %q (%s), want %q", got, w.Header().Get("Content-Type"), tc.wantText)
				}
			}
			if tc.wantMsg != "" {
				var st metav1.Status
				if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil {
					t.Fatal(err)
				}
				if st.Message != tc.wantMsg {
					t.Fatalf("message\n got %q\nwant %q", st.Message, tc.wantMsg)
				}
			}
		})
	}
}

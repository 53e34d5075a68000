package impersonation_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/plugins/impersonation"
)

// allowList allows impersonate on the "resource/name" keys it holds, and
// records what it was asked.
type allowList struct {
	allow map[string]bool
	asked []auth.Attributes
}

func (a *allowList) Authorize(_ context.Context, at *auth.Attributes) (auth.Decision, string, error) {
	a.asked = append(a.asked, *at)
	key := at.Resource
	if at.Subresource != "" {
		key += "/" + at.Subresource
	}
	if at.Verb == "impersonate" && a.allow[key+"/"+at.Name] {
		return auth.Allow, "", nil
	}
	return auth.NoOpinion, "", nil
}

func stage(t *testing.T, holder *auth.Holder) pipeline.Stage {
	t.Helper()
	reg := pipeline.NewRegistry()
	impersonation.Register(reg)
	ins, err := reg.BuildList(pipeline.KindStage, "pipeline", []config.Entry{{Name: impersonation.Name}})
	if err != nil {
		t.Fatal(err)
	}
	e := pipeline.NewEngine(pipeline.Options{Registry: reg, Metrics: prometheus.NewRegistry(), Shared: &pipeline.Shared{Authorizer: holder}})
	in, err := e.ProvisionStandalone(ins[0], &config.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return in.Value.(pipeline.Stage)
}

type result struct {
	code         int
	status       metav1.Status
	user         *request.User
	impersonator *request.User
	headers      http.Header
}

func serve(t *testing.T, s pipeline.Stage, requestor *request.User, h http.Header) result {
	t.Helper()
	var res result
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res.user, _ = request.UserFrom(r.Context())
		res.impersonator = request.ScopeFrom(r.Context()).Impersonator
		res.headers = r.Header.Clone()
	})
	r := httptest.NewRequest("GET", "/api/v1/pods", nil)
	for k, v := range h {
		r.Header[k] = v
	}
	sc := &request.Scope{}
	r = r.WithContext(request.WithScope(r.Context(), sc))
	if requestor != nil {
		sc.User = requestor
	}
	w := httptest.NewRecorder()
	s.Middleware(next).ServeHTTP(w, r)
	res.code = w.Code
	if w.Code != http.StatusOK {
		if err := json.Unmarshal(w.Body.Bytes(), &res.status); err != nil {
			t.Fatalf("body %q: %v", w.Body, err)
		}
	}
	return res
}

func TestImpersonation(t *testing.T) {
	admin := &request.User{Name: "admin", Groups: []string{request.AllAuthenticated}}
	allow := map[string]bool{
		"users/alice": true, "users/system:anonymous": true, "groups/devs": true, "groups/system:unauthenticated": true,
		"serviceaccounts/robot": true, "uids/1234": true, "userextras/scopes/view": true, "userextras/scopes/edit": true,
	}
	tests := []struct {
		name      string
		headers   http.Header
		wantCode  int
		wantMsg   string
		wantUser  *request.User
		wantAsked int
	}{
		{name: "no headers pass through", headers: http.Header{}, wantCode: 200, wantUser: admin},
		{name: "user", headers: http.Header{"Impersonate-User": {"alice"}}, wantCode: 200,
			wantUser: &request.User{Name: "alice", Groups: []string{request.AllAuthenticated}}, wantAsked: 1},
		{name: "user and groups", headers: http.Header{"Impersonate-User": {"alice"}, "Impersonate-Group": {"devs"}}, wantCode: 200,
			wantUser: &request.User{Name: "alice", Groups: []string{"devs", request.AllAuthenticated}}, wantAsked: 2},
		{name: "uid and extras", headers: http.Header{"Impersonate-User": {"alice"}, "Impersonate-Uid": {"1234"}, "Impersonate-Extra-Scopes": {"view", "edit"}}, wantCode: 200,
			wantUser: &request.User{Name: "alice", UID: "1234", Groups: []string{request.AllAuthenticated}, Extra: map[string][]string{"scopes": {"view", "edit"}}}, wantAsked: 4},
		{name: "service account gets its groups", headers: http.Header{"Impersonate-User": {"system:serviceaccount:team-a:robot"}}, wantCode: 200,
			wantUser: &request.User{Name: "system:serviceaccount:team-a:robot", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:team-a", request.AllAuthenticated}}, wantAsked: 1},
		{name: "anonymous gets unauthenticated", headers: http.Header{"Impersonate-User": {"system:anonymous"}}, wantCode: 200,
			wantUser: &request.User{Name: "system:anonymous", Groups: []string{request.AllUnauthenticated}}, wantAsked: 1},
		{name: "unauthenticated group keeps authenticated out", headers: http.Header{"Impersonate-User": {"alice"}, "Impersonate-Group": {"system:unauthenticated"}}, wantCode: 200,
			wantUser: &request.User{Name: "alice", Groups: []string{request.AllUnauthenticated}}, wantAsked: 2},
		{name: "user refused", headers: http.Header{"Impersonate-User": {"bob"}}, wantCode: 403, wantAsked: 1,
			wantMsg: `users "bob" is forbidden: User "admin" cannot impersonate resource "users" in API group "" at the cluster scope`},
		{name: "group refused", headers: http.Header{"Impersonate-User": {"alice"}, "Impersonate-Group": {"system:masters"}}, wantCode: 403, wantAsked: 2,
			wantMsg: `groups "system:masters" is forbidden: User "admin" cannot impersonate resource "groups" in API group "" at the cluster scope`},
		{name: "service account refused", headers: http.Header{"Impersonate-User": {"system:serviceaccount:team-a:other"}}, wantCode: 403, wantAsked: 1,
			wantMsg: `serviceaccounts "other" is forbidden: User "admin" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "team-a"`},
		{name: "extra refused", headers: http.Header{"Impersonate-User": {"alice"}, "Impersonate-Extra-Scopes": {"root"}}, wantCode: 403, wantAsked: 2,
			wantMsg: `userextras.authentication.k8s.io "root" is forbidden: User "admin" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope`},
		{name: "uid refused", headers: http.Header{"Impersonate-User": {"alice"}, "Impersonate-Uid": {"9"}}, wantCode: 403, wantAsked: 2,
			wantMsg: `uids.authentication.k8s.io "9" is forbidden: User "admin" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope`},
		{name: "groups without user", headers: http.Header{"Impersonate-Group": {"devs"}}, wantCode: 400,
			wantMsg: `requested [{Group  devs    }] without impersonating a user`},
		{name: "uid without user", headers: http.Header{"Impersonate-Uid": {"1234"}}, wantCode: 400,
			wantMsg: `requested [{UID  1234  authentication.k8s.io/v1  }] without impersonating a user`},
		{name: "malformed service account is a user", headers: http.Header{"Impersonate-User": {"system:serviceaccount:a:b:c"}}, wantCode: 403, wantAsked: 1,
			wantMsg: `users "system:serviceaccount:a:b:c" is forbidden: User "admin" cannot impersonate resource "users" in API group "" at the cluster scope`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			az := &allowList{allow: allow}
			h := &auth.Holder{}
			h.Set(az)
			res := serve(t, stage(t, h), admin, tt.headers)
			if res.code != tt.wantCode {
				t.Fatalf("code = %d (%s), want %d", res.code, res.status.Message, tt.wantCode)
			}
			if len(az.asked) != tt.wantAsked {
				t.Errorf("authorizer asked %d times, want %d", len(az.asked), tt.wantAsked)
			}
			if tt.wantCode != 200 {
				if res.status.Message != tt.wantMsg {
					t.Errorf("message\n got %q\nwant %q", res.status.Message, tt.wantMsg)
				}
				return
			}
			if !reflect.DeepEqual(res.user, tt.wantUser) {
				t.Errorf("user = %+v, want %+v", res.user, tt.wantUser)
			}
			if tt.wantAsked > 0 && res.impersonator != admin {
				t.Errorf("impersonator = %+v, want the requestor", res.impersonator)
			}
			for k := range res.headers {
				if len(k) > 12 && k[:12] == "Impersonate-" {
					t.Errorf("header %s reached the next stage", k)
				}
			}
		})
	}
}

func TestReasonsAndFailClosed(t *testing.T) {
	admin := &request.User{Name: "admin"}
	t.Run("no authorizer is 403", func(t *testing.T) {
		res := serve(t, stage(t, &auth.Holder{}), admin, http.Header{"Impersonate-User": {"alice"}})
		if res.code != 403 || res.status.Reason != metav1.StatusReasonForbidden {
			t.Fatalf("got %d %+v, want 403 Forbidden", res.code, res.status)
		}
	})
	t.Run("no user is 500", func(t *testing.T) {
		h := &auth.Holder{}
		h.Set(&allowList{})
		res := serve(t, stage(t, h), nil, http.Header{"Impersonate-User": {"alice"}})
		if res.code != 500 {
			t.Fatalf("got %d, want 500", res.code)
		}
	})
	t.Run("attributes", func(t *testing.T) {
		az := &allowList{allow: map[string]bool{"userextras/scopes/x": true, "users/alice": true}}
		h := &auth.Holder{}
		h.Set(az)
		res := serve(t, stage(t, h), admin, http.Header{"Impersonate-User": {"alice"}, "Impersonate-Extra-Sco%2fpes": {"x"}})
		if res.code != 403 {
			t.Fatalf("code %d", res.code)
		}
		got := az.asked[1]
		want := auth.Attributes{User: admin, Verb: "impersonate", APIGroup: "authentication.k8s.io", APIVersion: "v1",
			Resource: "userextras", Subresource: "sco/pes", Name: "x", ResourceRequest: true}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("attributes = %+v, want %+v", got, want)
		}
	})
}

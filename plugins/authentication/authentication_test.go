package authentication_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/plugins/authentication"
	"github.com/kpipe/kpipe/plugins/authentication/anonymous"
	"github.com/kpipe/kpipe/plugins/authentication/serviceaccount"
	"github.com/kpipe/kpipe/plugins/authentication/x509"
)

const loopbackToken = "loopback-secret"

// fake recognises requests carrying its header: the value is the user
// name, "bad" an invalid credential.
type fake struct {
	Header string   `koanf:"header"`
	Groups []string `koanf:"groups"`
}

func (f *fake) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	v := r.Header.Get(f.Header)
	switch v {
	case "":
		return nil, false, nil
	case "bad":
		return nil, false, errors.New(f.Header + " is bad")
	}
	return &request.User{Name: v, Groups: f.Groups}, true, nil
}

func registry() *pipeline.Registry {
	reg := pipeline.NewRegistry()
	authentication.Register(reg)
	anonymous.Register(reg)
	x509.Register(reg)
	serviceaccount.Register(reg)
	for _, name := range []string{"fake-a", "fake-b"} {
		reg.MustRegister(pipeline.Plugin{
			Name: name, Kind: pipeline.KindAuthenticator,
			Config: func() any { return &fake{} },
			New:    func(cfg any) (any, error) { return cfg, nil },
		})
	}
	return reg
}

// stage builds and provisions the stage with raw as its config.
func stage(t *testing.T, raw map[string]any) (*pipeline.Instance, *prometheus.Registry) {
	t.Helper()
	reg := registry()
	ins, err := reg.BuildList(pipeline.KindStage, "pipeline", []config.Entry{{Name: authentication.Name, Config: raw}})
	if err != nil {
		t.Fatal(err)
	}
	metrics := prometheus.NewRegistry()
	e := pipeline.NewEngine(pipeline.Options{Registry: reg, Metrics: metrics, Shared: &pipeline.Shared{LoopbackToken: loopbackToken}})
	in, err := e.ProvisionStandalone(ins[0], &config.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.CloseStandalone([]*pipeline.Instance{in}) })
	return in, metrics
}

func list(names ...string) map[string]any {
	var l []any
	for _, n := range names {
		e := map[string]any{"name": n}
		if n == "fake-a" || n == "fake-b" {
			e["config"] = map[string]any{"header": "X-" + n, "groups": []any{"g-" + n}}
		}
		l = append(l, e)
	}
	return map[string]any{"authenticators": l}
}

// seen is what the next handler saw.
type seen struct {
	user          *request.User
	authorization string
	remoteUser    string
}

func serve(t *testing.T, in *pipeline.Instance, r *http.Request) (*httptest.ResponseRecorder, *seen) {
	t.Helper()
	var s *seen
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := request.UserFrom(r.Context())
		s = &seen{user: u, authorization: r.Header.Get("Authorization"), remoteUser: r.Header.Get("X-Remote-User")}
	})
	h := in.Value.(pipeline.Stage).Middleware(next)
	r = r.WithContext(request.WithScope(r.Context(), &request.Scope{}))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w, s
}

func TestAuthenticate(t *testing.T) {
	tests := []struct {
		name       string
		list       []string
		headers    map[string]string
		wantUser   string
		wantGroups []string
		wantResult string
	}{
		{name: "first wins", list: []string{"fake-a", "fake-b", "anonymous"},
			headers:  map[string]string{"X-fake-a": "alice", "X-fake-b": "bob"},
			wantUser: "alice", wantGroups: []string{"g-fake-a", request.AllAuthenticated}, wantResult: "success"},
		{name: "order: the next one is asked", list: []string{"fake-a", "fake-b", "anonymous"},
			headers:  map[string]string{"X-fake-b": "bob"},
			wantUser: "bob", wantGroups: []string{"g-fake-b", request.AllAuthenticated}, wantResult: "success"},
		{name: "listed order, not registration order", list: []string{"fake-b", "fake-a"},
			headers:  map[string]string{"X-fake-a": "alice", "X-fake-b": "bob"},
			wantUser: "bob", wantGroups: []string{"g-fake-b", request.AllAuthenticated}, wantResult: "success"},
		{name: "invalid credential then a valid one, as kube's union", list: []string{"fake-a", "fake-b", "anonymous"},
			headers:  map[string]string{"X-fake-a": "bad", "X-fake-b": "bob"},
			wantUser: "bob", wantGroups: []string{"g-fake-b", request.AllAuthenticated}, wantResult: "success"},
		{name: "invalid credential is 401, not anonymous", list: []string{"fake-a", "anonymous"},
			headers: map[string]string{"X-fake-a": "bad"}, wantResult: "error"},
		{name: "unrecognised bearer token is 401, not anonymous", list: []string{"fake-a", "anonymous"},
			headers: map[string]string{"Authorization": "Bearer nobody-knows"}, wantResult: "failure"},
		{name: "nothing to recognise without anonymous", list: []string{"fake-a"}, wantResult: "failure"},
		{name: "empty list", list: []string{}, wantResult: "failure"},
		{name: "anonymous", list: []string{"fake-a", "anonymous"},
			wantUser: request.Anonymous, wantGroups: []string{request.AllUnauthenticated}, wantResult: "success"},
		{name: "loopback token", list: []string{"fake-a", "anonymous"},
			headers:  map[string]string{"Authorization": "Bearer " + loopbackToken, "X-fake-a": "alice"},
			wantUser: request.APIServerUser, wantGroups: []string{request.SystemPrivileged, request.AllAuthenticated}, wantResult: "success"},
		{name: "loopback token with no authenticators", list: []string{},
			headers:  map[string]string{"Authorization": "bearer " + loopbackToken},
			wantUser: request.APIServerUser, wantGroups: []string{request.SystemPrivileged, request.AllAuthenticated}, wantResult: "success"},
		{name: "loopback token prefix is not the token", list: []string{"anonymous"},
			headers: map[string]string{"Authorization": "Bearer " + loopbackToken[:5]}, wantResult: "failure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, metrics := stage(t, list(tt.list...))
			r := httptest.NewRequest("GET", "/api/v1/pods", nil)
			for k, v := range tt.headers {
				r.Header.Set(k, v)
			}
			r.Header.Set("X-Remote-User", "spoofed")
			w, s := serve(t, in, r)

			attempts, err := metrics.Gather()
			if err != nil {
				t.Fatal(err)
			}
			if got := counter(attempts, "authentication_attempts", tt.wantResult); got != 1 {
				t.Errorf("authentication_attempts{result=%q} = %v, want 1", tt.wantResult, got)
			}
			if got := histogramCount(attempts, "authentication_duration_seconds", tt.wantResult); got != 1 {
				t.Errorf("authentication_duration_seconds{result=%q} count = %v, want 1", tt.wantResult, got)
			}

			if tt.wantUser == "" {
				if s != nil {
					t.Fatalf("request passed on as %+v, want 401", s.user)
				}
				wantUnauthorized(t, w)
				return
			}
			if s == nil {
				t.Fatalf("request refused with %d: %s", w.Code, w.Body)
			}
			if s.user == nil || s.user.Name != tt.wantUser || !reflect.DeepEqual(s.user.Groups, tt.wantGroups) {
				t.Errorf("user = %+v, want %q %v", s.user, tt.wantUser, tt.wantGroups)
			}
			if s.authorization != "" || s.remoteUser != "" {
				t.Errorf("next saw Authorization %q, X-Remote-User %q; want both stripped", s.authorization, s.remoteUser)
			}
		})
	}
}

func wantUnauthorized(t *testing.T, w *httptest.ResponseRecorder) {
	t.Helper()
	if w.Code != http.StatusUnauthorized {
		t.Fatalf("code = %d, want 401", w.Code)
	}
	var st metav1.Status
	if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil {
		t.Fatalf("body %q: %v", w.Body, err)
	}
	if st.Kind != "Status" || st.Reason != metav1.StatusReasonUnauthorized || st.Message != "Unauthorized" || st.Code != 401 {
		t.Errorf("status = %+v", st)
	}
}

func TestAuthenticatedGroup(t *testing.T) {
	tests := []struct {
		name       string
		groups     []any
		wantGroups []string
	}{
		{name: "added", groups: []any{"devs"}, wantGroups: []string{"devs", request.AllAuthenticated}},
		{name: "added to none", groups: []any{}, wantGroups: []string{request.AllAuthenticated}},
		{name: "not duplicated", groups: []any{request.AllAuthenticated, "devs"}, wantGroups: []string{request.AllAuthenticated, "devs"}},
		{name: "not added to unauthenticated", groups: []any{request.AllUnauthenticated}, wantGroups: []string{request.AllUnauthenticated}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, _ := stage(t, map[string]any{"authenticators": []any{
				map[string]any{"name": "fake-a", "config": map[string]any{"header": "X-A", "groups": tt.groups}},
			}})
			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set("X-A", "alice")
			_, s := serve(t, in, r)
			if s == nil || !reflect.DeepEqual(s.user.Groups, tt.wantGroups) {
				t.Fatalf("seen = %+v, want groups %v", s, tt.wantGroups)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	ins, err := registry().BuildList(pipeline.KindStage, "pipeline", []config.Entry{{Name: authentication.Name}})
	if err != nil {
		t.Fatal(err)
	}
	in := ins[0]
	var names []string
	for _, c := range in.Nested["authenticators"] {
		names = append(names, c.Plugin.Name)
	}
	if want := []string{"x509", "service-account", "anonymous"}; !reflect.DeepEqual(names, want) {
		t.Errorf("default authenticators = %v, want %v", names, want)
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		raw  map[string]any
	}{
		{name: "unknown authenticator", raw: map[string]any{"authenticators": []any{map[string]any{"name": "nope"}}}},
		{name: "duplicate", raw: map[string]any{"authenticators": []any{map[string]any{"name": "anonymous"}, map[string]any{"name": "anonymous"}}}},
		{name: "unknown key", raw: map[string]any{"authenticator": []any{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := registry().BuildList(pipeline.KindStage, "pipeline", []config.Entry{{Name: authentication.Name, Config: tt.raw}})
			var fe *config.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a FieldError", err)
			}
		})
	}
}

func counter(mfs []*dto.MetricFamily, name, result string) float64 {
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

func histogramCount(mfs []*dto.MetricFamily, name, result string) uint64 {
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					return m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return 0
}

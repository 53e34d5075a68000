package audit_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/plugins/audit"
)

func start(t *testing.T, hook *auth.FailureHook) (pipeline.Stage, string) {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "audit.log")
	reg := pipeline.NewRegistry()
	audit.Register(reg)
	ins, err := reg.BuildList(pipeline.KindStage, "pipeline", []config.Entry{{Name: audit.Name, Config: map[string]any{
		"logPath": logPath,
		"policy":  map[string]any{"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": []any{map[string]any{"level": "Metadata"}}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	e := pipeline.NewEngine(pipeline.Options{Registry: reg, Metrics: prometheus.NewRegistry(), Shared: &pipeline.Shared{AuthFailures: hook}})
	in, err := e.ProvisionStandalone(ins[0], &config.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.CloseStandalone([]*pipeline.Instance{in}) })
	// The engine publishes a serving generation's services; a standalone
	// instance is published here, as the engine would.
	var sv pipeline.Services
	in.Value.(pipeline.Publisher).Publish(&sv)
	hook.Set(sv.AuthFailures)
	return in.Value.(pipeline.Stage), logPath
}

func events(t *testing.T, path string) []audit.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []audit.Event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev audit.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

func request0(t *testing.T, path string) *http.Request {
	r := httptest.NewRequest("GET", path, nil)
	sc := &request.Scope{User: &request.User{Name: "alice"}, Info: &request.RequestInfo{Path: path, Verb: "get"}}
	return r.WithContext(request.WithScope(r.Context(), sc))
}

func TestPanicIsAuditedAndGoesOn(t *testing.T) {
	s, logPath := start(t, &auth.FailureHook{})
	h := s.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	func() {
		defer func() {
			if v := recover(); v != "boom" {
				t.Errorf("recovered %v, want the panic to go on", v)
			}
		}()
		h.ServeHTTP(httptest.NewRecorder(), request0(t, "/x"))
	}()
	evs := events(t, logPath)
	if len(evs) != 2 || evs[0].Stage != audit.StageRequestReceived || evs[1].Stage != audit.StagePanic {
		t.Fatalf("events = %+v", evs)
	}
	if st := evs[1].ResponseStatus; st == nil || st.Code != 500 || st.Message != "APIServer panic'd: boom" {
		t.Errorf("panic status = %+v", st)
	}
}

func TestFailureHook(t *testing.T) {
	hook := &auth.FailureHook{}
	_, logPath := start(t, hook)
	w := httptest.NewRecorder()
	r := request0(t, "/api")
	r.Header.Set("Authorization", "Bearer nope")
	aw := hook.Wrap(w, r)
	aw.WriteHeader(401)
	if w.Header().Get("Audit-Id") == "" {
		t.Error("no Audit-Id header")
	}
	evs := events(t, logPath)
	if len(evs) != 1 || evs[0].Stage != audit.StageResponseStarted || evs[0].ResponseStatus.Code != 401 ||
		evs[0].ResponseStatus.Message != "Authentication failed, attempted: bearer" {
		t.Fatalf("events = %+v", evs)
	}
}

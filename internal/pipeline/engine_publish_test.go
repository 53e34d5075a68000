package pipeline

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/request"
)

// offering is a stage that offers every service, each answering with its
// configured name.
type offering struct{ name string }

type offeringConfig struct {
	Name string `koanf:"name"`
}

func (o *offering) Middleware(next http.Handler) http.Handler { return next }
func (o *offering) Publish(sv *Services) {
	sv.Authorizer, sv.Authenticator, sv.AuthFailures = o, o, o
}
func (o *offering) Authorize(context.Context, *auth.Attributes) (auth.Decision, string, error) {
	return auth.Allow, o.name, nil
}
func (o *offering) AuthenticateRequest(*http.Request) (*request.User, bool, error) {
	return &request.User{Name: o.name}, true, nil
}
func (o *offering) AuditFailure(w http.ResponseWriter, _ *http.Request) http.ResponseWriter {
	w.Header().Set("X-Audited-By", o.name)
	return w
}

// failing fails at Provision.
type failing struct{}

func (failing) Middleware(next http.Handler) http.Handler { return next }
func (failing) Provision(*Env) error                      { return errors.New("no good") }

func publishRegistry() *Registry {
	r := NewRegistry()
	r.MustRegister(Plugin{Name: "offer", Kind: KindStage, Config: func() any { return &offeringConfig{} },
		New: func(c any) (any, error) { return &offering{name: c.(*offeringConfig).Name}, nil }})
	r.MustRegister(Plugin{Name: "fail", Kind: KindStage, New: func(any) (any, error) { return failing{}, nil }})
	r.MustRegister(Plugin{Name: "end", Kind: KindStage, Terminal: true, New: func(any) (any, error) { return PassThrough, nil }})
	return r
}

// servedBy says whose services the holders answer from: the name of the
// authorizer, the authenticator and the failure auditor, "" for none.
func servedBy(t *testing.T, sh *Shared) (authz, authn, audit string) {
	t.Helper()
	d, reason, err := sh.Authorizer.Authorize(context.Background(), &auth.Attributes{})
	switch {
	case err == nil && d == auth.Allow:
		authz = reason
	case !errors.Is(err, auth.ErrNoAuthorizer) || d != auth.NoOpinion:
		t.Errorf("empty authorizer answered %v %q %v, want NoOpinion with ErrNoAuthorizer", d, reason, err)
	}
	u, ok, err := sh.Authenticator.AuthenticateRequest(httptest.NewRequest("GET", "/", nil))
	switch {
	case err == nil && ok:
		authn = u.Name
	case !errors.Is(err, auth.ErrNoAuthenticator) || ok:
		t.Errorf("empty authenticator answered %v %v, want ErrNoAuthenticator", ok, err)
	}
	rec := httptest.NewRecorder()
	sh.AuthFailures.Wrap(rec, httptest.NewRequest("GET", "/", nil))
	audit = rec.Header().Get("X-Audited-By")
	return authz, authn, audit
}

// The shared services answer from the generation that serves: a reload
// swaps them, a failed one keeps the serving generation's, and one whose
// generation offers none withdraws them, as does Close.
func TestSharedServicesFollowTheServingGeneration(t *testing.T) {
	offer := func(name string) config.Entry {
		return config.Entry{Name: "offer", Config: map[string]any{"name": name}}
	}
	steps := []struct {
		name     string
		pipeline []config.Entry
		wantErr  bool
		want     string // every service answers from this instance; "" for none
	}{
		{name: "first build publishes", pipeline: entries(offer("one"), "end"), want: "one"},
		{name: "a reload swaps to the new instance", pipeline: entries(offer("two"), "end"), want: "two"},
		{name: "an unchanged reload keeps the instance", pipeline: entries(offer("two"), "end"), want: "two"},
		{name: "a reload failing at Provision keeps the serving instance", pipeline: entries(offer("three"), "fail", "end"), wantErr: true, want: "two"},
		{name: "a reload without the stage withdraws them", pipeline: entries("end"), want: ""},
		{name: "a failed reload keeps them withdrawn", pipeline: entries(offer("four"), "fail", "end"), wantErr: true, want: ""},
		{name: "a reload with the stage again publishes", pipeline: entries(offer("five"), "end"), want: "five"},
	}
	r := publishRegistry()
	sh := &Shared{Authorizer: &auth.Holder{}, Authenticator: &auth.AuthenticatorHolder{}, AuthFailures: &auth.FailureHook{}}
	e := NewEngine(Options{Registry: r, Metrics: prometheus.NewRegistry(), Shared: sh})
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			cfg := &config.Config{Pipeline: st.pipeline}
			plan, err := r.Plan(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Apply(plan, cfg); (err != nil) != st.wantErr {
				t.Fatalf("Apply: %v, want error %v", err, st.wantErr)
			}
			authz, authn, audit := servedBy(t, sh)
			if authz != st.want || authn != st.want || audit != st.want {
				t.Errorf("authorizer %q, authenticator %q, failure auditor %q; want all %q", authz, authn, audit, st.want)
			}
		})
	}
	t.Run("close withdraws them", func(t *testing.T) {
		if err := e.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if authz, authn, audit := servedBy(t, sh); authz != "" || authn != "" || audit != "" {
			t.Errorf("after Close: authorizer %q, authenticator %q, failure auditor %q", authz, authn, audit)
		}
	})
}

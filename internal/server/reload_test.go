package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// reloadOnly is a Server with just what Reload uses: the config it started
// with, a one-stage pipeline, and a file that each reload "reads" from next.
func reloadOnly(t *testing.T, started *config.Config, next **config.Config) (*Server, *observer.ObservedLogs) {
	t.Helper()
	reg := pipeline.NewRegistry()
	reg.MustRegister(pipeline.Plugin{Name: "end", Kind: pipeline.KindStage, Terminal: true,
		New: func(any) (any, error) { return pipeline.PassThrough, nil }})
	core, logs := observer.New(zapcore.InfoLevel)
	s := &Server{
		o: Options{Plugins: reg, Reload: func() (*config.Loaded, error) {
			c := **next
			return &config.Loaded{Config: &c}, nil
		}},
		cfg: started, log: zap.New(core),
		engine: pipeline.NewEngine(pipeline.Options{Registry: reg, Metrics: prometheus.NewRegistry()}),
	}
	s.reloader = newReloader(s)
	s.reloader.markLoaded(&config.Loaded{Config: started})
	t.Cleanup(func() { _ = s.engine.Close(t.Context()) })
	return s, logs
}

// Restart-only settings are compared with the config the server started
// with, not the previous reload's: a pending change is reported on every
// reload, and one reverted to the running value is not.
func TestRestartOnlyComparedWithStartedConfig(t *testing.T) {
	started := config.Default()
	started.Pipeline = []config.Entry{{Name: "end"}}
	started.PostStartHooks = nil // the registry here has none
	changed := *started
	changed.Server.ShutdownTimeout = started.Server.ShutdownTimeout + time.Second

	steps := []struct {
		name string
		file *config.Config
		want string // the keys warned about; "" for no warning
	}{
		{name: "unchanged", file: started, want: ""},
		{name: "changed", file: &changed, want: "[server.shutdownTimeout]"},
		{name: "still changed", file: &changed, want: "[server.shutdownTimeout]"},
		{name: "reverted to the running value", file: started, want: ""},
		{name: "changed again", file: &changed, want: "[server.shutdownTimeout]"},
	}
	var file *config.Config
	s, logs := reloadOnly(t, started, &file)
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			file = st.file
			logs.TakeAll()
			if err := s.Reload(); err != nil {
				t.Fatal(err)
			}
			got := ""
			for _, e := range logs.FilterMessage("changed settings are ignored until restart").All() {
				got = fmt.Sprint(e.ContextMap()["keys"])
			}
			if got != st.want {
				t.Errorf("warned about %q, want %q", got, st.want)
			}
			if s.cfg.Server.ShutdownTimeout != started.Server.ShutdownTimeout {
				t.Error("a restart-only setting was applied")
			}
		})
	}
}

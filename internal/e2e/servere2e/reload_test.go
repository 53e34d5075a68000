package servere2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"sigs.k8s.io/yaml"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/server/healthz"
	"github.com/kpipe/kpipe/internal/testserver"
)

type headerConfig struct {
	Value string `koanf:"value"`
}

// registerHeaderStage adds a stage that stamps X-Test on responses.
func registerHeaderStage(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name: "test-header", Kind: pipeline.KindStage,
		Config: func() any { return &headerConfig{Value: "default"} },
		New: func(c any) (any, error) {
			v := c.(*headerConfig).Value
			return pipeline.Middleware(func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("X-Test", v)
					next.ServeHTTP(w, r)
				})
			}), nil
		},
	})
}

// reloadable starts a server whose config file the test rewrites.
type reloadable struct {
	ts   *testserver.TestServer
	file string
	logs *observer.ObservedLogs
}

func startReloadable(t *testing.T, header string) *reloadable {
	rl := &reloadable{file: filepath.Join(t.TempDir(), "apiserver.yaml")}
	core, logs := observer.New(zapcore.InfoLevel)
	rl.logs = logs
	rl.ts = testserver.Start(t, testserver.Options{
		Log:      zap.New(core),
		Register: registerHeaderStage,
		Configure: func(c *config.Config) {
			c.Pipeline = append([]config.Entry{{Name: "test-header", Config: map[string]any{"value": header}}}, c.Pipeline...)
			rl.write(t, c.Pipeline, nil)
		},
		ConfigFile: rl.file,
		Reload: func() (*config.Loaded, error) {
			return config.Load(config.Options{File: rl.file, Environ: []string{}})
		},
	})
	return rl
}

// write renders the server's own settings with the given pipeline, and
// applies edit to the rendered map last.
func (rl *reloadable) write(t *testing.T, p []config.Entry, edit func(map[string]any)) {
	t.Helper()
	var cfg config.Config
	if rl.ts != nil {
		cfg = *rl.ts.Settings()
	} else {
		cfg = *config.Default()
	}
	cfg.Pipeline = p
	m := config.ToMap(&cfg).(map[string]any)
	if rl.ts == nil {
		// Before start the server's own config is not known yet; the first
		// write only has to exist.
		m = map[string]any{"pipeline": m["pipeline"]}
	}
	if edit != nil {
		edit(m)
	}
	b, err := yaml.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	tmp := rl.file + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, rl.file); err != nil {
		t.Fatal(err)
	}
}

func pipelineWith(header string, enabled bool) []config.Entry {
	p := []config.Entry{{Name: "test-header", Enabled: &enabled, Config: map[string]any{"value": header}}}
	for _, n := range config.DefaultPipeline {
		p = append(p, config.Entry{Name: n})
	}
	return p
}

func TestReloadTogglesStageWithoutFailingRequests(t *testing.T) {
	rl := startReloadable(t, "one")
	ts := rl.ts
	c := ts.HTTPClient(t)
	// Rewrite the file with the server's full settings, unchanged pipeline.
	rl.write(t, pipelineWith("one", true), nil)

	var failures, total atomic.Int64
	var seen sync.Map
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := c.Get(ts.URL() + "/healthz")
				total.Add(1)
				if err != nil || resp.StatusCode != 200 {
					failures.Add(1)
					if err == nil {
						resp.Body.Close()
					}
					continue
				}
				resp.Body.Close()
				seen.Store(resp.Header.Get("X-Test"), true)
			}
		}()
	}
	header := func() string {
		resp, err := c.Get(ts.URL() + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.Header.Get("X-Test")
	}
	steps := []struct {
		header  string
		enabled bool
		want    string
	}{
		{"two", true, "two"},
		{"two", false, ""},
		{"three", true, "three"},
	}
	for _, s := range steps {
		start := time.Now()
		rl.write(t, pipelineWith(s.header, s.enabled), nil)
		e2eutil.Eventually(t, 5*time.Second, "the file change to take effect", func() bool { return header() == s.want })
		t.Logf("change to %q visible after %v", s.want, time.Since(start))
		e2eutil.Eventually(t, 5*time.Second, "the load to see the change", func() bool { _, ok := seen.Load(s.want); return ok })
	}
	close(stop)
	wg.Wait()
	if failures.Load() != 0 {
		t.Fatalf("%d of %d requests failed across reloads", failures.Load(), total.Load())
	}
	for _, h := range []string{"one", "two", "", "three"} {
		if _, ok := seen.Load(h); !ok {
			t.Errorf("no request saw X-Test=%q", h)
		}
	}

	var d pipeline.Description
	_, body := e2eutil.Get(t, c, ts.URL()+"/debug/pipeline")
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatalf("/debug/pipeline: %v\n%s", err, body)
	}
	if d.Generation < 4 || d.Stages[0].Name != "test-header" || d.Stages[0].Config.(map[string]any)["value"] != "three" {
		t.Errorf("/debug/pipeline: %s", body)
	}
	_, metrics := e2eutil.Get(t, c, ts.URL()+"/metrics")
	e2eutil.MustContain(t, "/metrics", metrics, `apiserver_config_reloads_total{result="failure"} 0`, "apiserver_config_last_reload_success_timestamp_seconds")
}

func TestBadReloadKeepsOldPipeline(t *testing.T) {
	rl := startReloadable(t, "kept")
	ts := rl.ts
	c := ts.HTTPClient(t)
	p := pipelineWith("kept", true)
	p = append(p[:len(p)-1], config.Entry{Name: "no-such-stage"}, p[len(p)-1])
	rl.write(t, p, nil)
	e2eutil.Eventually(t, 5*time.Second, "the failed reload to be counted", func() bool {
		_, m := e2eutil.Get(t, c, ts.URL()+"/metrics")
		return strings.Contains(m, `apiserver_config_reloads_total{result="failure"} 1`)
	})
	resp, err := c.Get(ts.URL() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Test") != "kept" {
		t.Errorf("after a bad reload: %d X-Test=%q", resp.StatusCode, resp.Header.Get("X-Test"))
	}
	found := false
	for _, e := range rl.logs.FilterMessage("config reload failed; the running pipeline keeps serving").All() {
		for _, f := range e.Context {
			if f.Key == "error" && strings.Contains(f.Interface.(error).Error(), `pipeline[14] (no-such-stage): unknown stage plugin "no-such-stage"`) {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("the failed reload was not logged with the entry: %v", rl.logs.All())
	}
	// An explicit reload with a broken file says why, too.
	if err := ts.Reload(); err == nil || !strings.Contains(err.Error(), "apiserver.yaml: pipeline[14] (no-such-stage)") {
		t.Errorf("Reload() = %v", err)
	}
}

func TestRestartOnlySettingsAreReportedNotApplied(t *testing.T) {
	rl := startReloadable(t, "x")
	rl.write(t, pipelineWith("x", true), func(m map[string]any) {
		m["server"].(map[string]any)["shutdownTimeout"] = "5s"
	})
	e2eutil.Eventually(t, 5*time.Second, "the warning about restart-only settings", func() bool {
		for _, e := range rl.logs.FilterMessage("changed settings are ignored until restart").All() {
			if strings.Contains(fmt.Sprint(e.ContextMap()["keys"]), "server.shutdownTimeout") {
				return true
			}
		}
		return false
	})
	if rl.ts.Settings().Server.ShutdownTimeout == 5*time.Second {
		t.Error("a restart-only setting was applied")
	}
}

// hookedStage offers a health check and a post-start hook, as a stage
// with a cache would.
type hookedStage struct {
	ended chan struct{}
}

func (s *hookedStage) Middleware(next http.Handler) http.Handler { return next }

func (s *hookedStage) HealthChecks() []healthz.Check {
	return []healthz.Check{healthz.NamedCheck("test-hooked-cache", func(*http.Request) error { return nil })}
}

func (s *hookedStage) PostStartHooks() []pipeline.NamedHook {
	return []pipeline.NamedHook{{Name: "test-hooked-start", Hook: hookFunc(func(ctx context.Context) error {
		<-ctx.Done() // a long-lived controller: never "done", ends with the instance
		close(s.ended)
		return ctx.Err()
	})}}
}

type hookFunc func(ctx context.Context) error

func (f hookFunc) Run(ctx context.Context, _ *pipeline.HookEnv) error { return f(ctx) }

func TestStageChecksAndHooksFollowReloads(t *testing.T) {
	st := &hookedStage{ended: make(chan struct{})}
	file := filepath.Join(t.TempDir(), "apiserver.yaml")
	ts := testserver.Start(t, testserver.Options{
		NoWait:     true,
		ConfigFile: file,
		Register: func(r *pipeline.Registry) {
			r.MustRegister(pipeline.Plugin{Name: "test-hooked", Kind: pipeline.KindStage,
				New: func(any) (any, error) { return st, nil }})
		},
		Configure: func(c *config.Config) {
			c.Pipeline = append([]config.Entry{{Name: "test-hooked"}}, c.Pipeline...)
			b, _ := yaml.Marshal(config.ToMap(c))
			if err := os.WriteFile(file, b, 0o600); err != nil {
				t.Fatal(err)
			}
		},
		Reload: func() (*config.Loaded, error) {
			return config.Load(config.Options{File: file, Environ: []string{}})
		},
	})
	c := ts.HTTPClient(t)
	code, body := e2eutil.Get(t, c, ts.URL()+"/readyz?verbose")
	if code != http.StatusInternalServerError {
		t.Fatalf("/readyz %d while a stage's hook runs:\n%s", code, body)
	}
	e2eutil.MustContain(t, "/readyz", body, "[+]test-hooked-cache ok", "[-]poststarthook/test-hooked-start failed")

	// Drop the stage: its hook's context ends and its checks leave /readyz.
	cfg := *ts.Settings()
	cfg.Pipeline = cfg.Pipeline[1:]
	b, err := yaml.Marshal(config.ToMap(&cfg))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-st.ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the dropped stage's hook was not stopped")
	}
	e2eutil.Eventually(t, 5*time.Second, "/readyz without the dropped stage's checks", func() bool {
		code, body := e2eutil.Get(t, c, ts.URL()+"/readyz?verbose")
		return code == http.StatusOK && !strings.Contains(body, "test-hooked")
	})
}

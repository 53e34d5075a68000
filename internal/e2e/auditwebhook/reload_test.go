package auditwebhook

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
	"github.com/kpipe/kpipe/plugins/audit"
)

// writeConfig writes the server's settings (base) with the audit stage's
// config, for the hot reload to pick up.
func writeConfig(t *testing.T, file string, base *config.Config, auditConfig map[string]any) {
	t.Helper()
	cfg := *base
	cfg.Pipeline = nil
	for _, n := range config.DefaultPipeline {
		e := config.Entry{Name: n}
		if n == audit.Name {
			e.Config = auditConfig
		}
		cfg.Pipeline = append(cfg.Pipeline, e)
	}
	b, err := yaml.Marshal(config.ToMap(&cfg))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file+".tmp", b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(file+".tmp", file); err != nil {
		t.Fatal(err)
	}
}

// A reload that changes the audit stage's config replaces the stage; the
// events the old one buffered are sent when it is closed, once its
// requests are done.
func TestAuditWebhookReloadKeepsBufferedEvents(t *testing.T) {
	rc := newReceiver(t, 0)
	file := filepath.Join(t.TempDir(), "apiserver.yaml")
	slow := webhookConfig(t, rc, map[string]any{"batchMaxWait": "1h"})
	ts := testserver.Start(t, testserver.Options{
		Configure: func(c *config.Config) {
			for i, e := range c.Pipeline {
				if e.Name == audit.Name {
					c.Pipeline[i].Config = slow
				}
			}
			writeConfig(t, file, c, slow)
		},
		ConfigFile: file,
		Reload: func() (*config.Loaded, error) {
			return config.Load(config.Options{File: file, Environ: []string{}})
		},
	})
	before := createConfigMap(t, ts, "wh-before-reload")
	time.Sleep(200 * time.Millisecond)
	if posts, _ := rc.snapshot(); posts != 0 {
		t.Fatalf("receiver had %d POSTs before the batch was due", posts)
	}
	gen := ts.Engine().Generation()

	fast := map[string]any{"policyFile": slow["policyFile"], "webhook": map[string]any{
		"configFile": slow["webhook"].(map[string]any)["configFile"], "batchMaxWait": "100ms"}}
	writeConfig(t, file, ts.Settings(), fast)
	e2eutil.Eventually(t, 10*time.Second, "the reload", func() bool { return ts.Engine().Generation() > gen })

	rc.find(t, "the old stage's buffered events", byID(before), audit.StageRequestReceived, audit.StageResponseComplete)
	after := createConfigMap(t, ts, "wh-after-reload")
	rc.find(t, "the new stage's events", byID(after), audit.StageRequestReceived, audit.StageResponseComplete)
}

package e2eutil

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/plugins/audit"
)

// TokenFile writes kube's static token CSV, a "<user>-token,<user>,uid-<user>"
// line for each user, and returns its path.
func TokenFile(t *testing.T, users ...string) string {
	t.Helper()
	var b strings.Builder
	for _, u := range users {
		b.WriteString(u + "-token," + u + ",uid-" + u + "\n")
	}
	path := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// AuditEvents reads the audit log at path: every complete line must be an
// event; a last line still being written is left for the next read.
func AuditEvents(t *testing.T, path string) []audit.Event {
	t.Helper()
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(raw, []byte("\n"))
	var evs []audit.Event
	for _, line := range lines[:len(lines)-1] {
		var ev audit.Event
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

package tokenfile

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/pipeline/pipelinetest"
	"github.com/kpipe/kpipe/internal/request"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name         string
		in           string
		want         map[string]*request.User
		wantWarnings int
		wantErr      string
	}{
		{name: "kube's format",
			in:   "tok1,alice,uid-1,\"devs,ops\"\ntok2,bob,uid-2\n",
			want: map[string]*request.User{"tok1": {Name: "alice", UID: "uid-1", Groups: []string{"devs", "ops"}}, "tok2": {Name: "bob", UID: "uid-2"}}},
		{name: "comments and blank lines",
			in:   "# token,user,uid,groups\n\ntok1,alice,uid-1\n   \n#tok2,bob,uid-2\n",
			want: map[string]*request.User{"tok1": {Name: "alice", UID: "uid-1"}}},
		{name: "empty groups skipped",
			in:   "tok1,alice,uid-1,\n",
			want: map[string]*request.User{"tok1": {Name: "alice", UID: "uid-1"}}},
		{name: "extra columns ignored",
			in:   "tok1,alice,uid-1,devs,whatever\n",
			want: map[string]*request.User{"tok1": {Name: "alice", UID: "uid-1", Groups: []string{"devs"}}}},
		{name: "empty token warns", in: ",alice,uid-1\ntok2,bob,uid-2\n",
			want: map[string]*request.User{"tok2": {Name: "bob", UID: "uid-2"}}, wantWarnings: 1},
		{name: "duplicate token, last wins", in: "tok,alice,1\ntok,bob,2\n",
			want: map[string]*request.User{"tok": {Name: "bob", UID: "2"}}, wantWarnings: 1},
		{name: "empty file", in: "", want: map[string]*request.User{}},
		{name: "too few columns", in: "tok1,alice,uid-1\n\ntok2,bob\n", wantErr: "tokens.csv:3: must have at least 3 columns"},
		{name: "bad quoting", in: "tok1,alice,uid-1\ntok2,\"bob,uid-2\n", wantErr: "tokens.csv:"},
		{name: "empty user", in: "tok1,,uid-1\n", wantErr: "tokens.csv:1: empty user name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warnings, err := parse("tokens.csv", strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if len(warnings) != tt.wantWarnings {
				t.Errorf("warnings = %q, want %d", warnings, tt.wantWarnings)
			}
		})
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestAuthenticateRequest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.csv")
	writeFile(t, path, "good-token,alice,uid-1,devs\n")
	a, err := New(path)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		header string
		wantOK bool
	}{
		{name: "known token", header: "Bearer good-token", wantOK: true},
		{name: "scheme is case-insensitive", header: "bearer good-token", wantOK: true},
		{name: "unknown token", header: "Bearer nope"},
		{name: "no header"},
		{name: "basic auth", header: "Basic YWxpY2U6cHc="},
		{name: "empty token", header: "Bearer "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/version", nil)
			if tt.header != "" {
				r.Header.Set("Authorization", tt.header)
			}
			u, ok, err := a.AuthenticateRequest(r)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if ok && (u.Name != "alice" || u.UID != "uid-1" || !reflect.DeepEqual(u.Groups, []string{"devs"})) {
				t.Errorf("user = %+v", u)
			}
		})
	}
}

func TestConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.csv")
	writeFile(t, path, "tok,alice,1\n")
	bad := filepath.Join(t.TempDir(), "bad.csv")
	writeFile(t, bad, "tok,alice\n")
	tests := []struct {
		name    string
		raw     map[string]any
		wantKey string
	}{
		{name: "file", raw: map[string]any{"tokenAuthFile": path}},
		{name: "missing key", raw: nil, wantKey: "pipeline[0] (token-file).config.tokenAuthFile"},
		{name: "missing file", raw: map[string]any{"tokenAuthFile": path + ".nope"}, wantKey: "pipeline[0] (token-file)"},
		{name: "bad file", raw: map[string]any{"tokenAuthFile": bad}, wantKey: "pipeline[0] (token-file)"},
		{name: "unknown key", raw: map[string]any{"tokenAuthFile": path, "x": 1}, wantKey: "pipeline[0] (token-file).config.x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := pipelinetest.Build(t, Register, pipeline.KindAuthenticator, Name, tt.raw)
			pipelinetest.WantFieldError(t, err, tt.wantKey)
		})
	}
}

func TestReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.csv")
	writeFile(t, path, "old-token,alice,1\n")
	a, err := New(path)
	if err != nil {
		t.Fatal(err)
	}
	a.interval = 10 * time.Millisecond
	core, logs := observer.New(zap.InfoLevel)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := a.Provision(&pipeline.Env{Log: zap.New(core), Context: ctx}); err != nil {
		t.Fatal(err)
	}
	user := func(tok string) string {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		u, ok, _ := a.AuthenticateRequest(r)
		if !ok {
			return ""
		}
		return u.Name
	}
	eventually := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	t.Run("edit takes effect", func(t *testing.T) {
		writeFile(t, path, "new-token,bob,2\n")
		eventually("new token", func() bool { return user("new-token") == "bob" })
		if got := user("old-token"); got != "" {
			t.Errorf("old token still authenticates as %q", got)
		}
	})
	t.Run("bad edit keeps the old table", func(t *testing.T) {
		writeFile(t, path, "new-token,bob,2\nbroken\n")
		eventually("parse error logged", func() bool {
			return logs.FilterMessage("token file does not parse; keeping the tokens loaded").Len() > 0
		})
		if got := user("new-token"); got != "bob" {
			t.Errorf("new-token = %q after a bad edit, want bob", got)
		}
		time.Sleep(50 * time.Millisecond) // several polls of the same bad file
		if n := logs.FilterMessage("token file does not parse; keeping the tokens loaded").Len(); n != 1 {
			t.Errorf("parse error logged %d times, want once per change", n)
		}
	})
	t.Run("removed file keeps the old table", func(t *testing.T) {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		eventually("missing file logged", func() bool {
			return logs.FilterMessage("token file unreadable; keeping the tokens loaded").Len() > 0
		})
		if got := user("new-token"); got != "bob" {
			t.Errorf("new-token = %q after removal, want bob", got)
		}
	})
	t.Run("fixed file loads", func(t *testing.T) {
		writeFile(t, path, "third,carol,3,\"a,b\"\n")
		eventually("third token", func() bool { return user("third") == "carol" })
	})
}

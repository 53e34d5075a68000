package main

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/testserver"
)

// run executes the command in-process and returns stdout and the error.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kpipe.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func freePort(t *testing.T) (net.Listener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return ln, port
}

func TestServeRefusesBadInput(t *testing.T) {
	busy, busyPort := freePort(t)
	defer busy.Close()
	closed, closedPort := freePort(t)
	closed.Close()
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{name: "missing config file", args: []string{"--config", "/nonexistent/kpipe.yaml"},
			want: []string{"config file /nonexistent/kpipe.yaml: does not exist"}},
		{name: "invalid config", args: []string{"--config", writeConfig(t, "server:\n  securePort: 70000\n")},
			want: []string{"kpipe.yaml: server.securePort: 70000 is out of range"}},
		{name: "unknown stage", args: []string{"--config", writeConfig(t, "stateDir: "+t.TempDir()+"\npipeline:\n  - name: request-info\n  - name: authz\n  - name: etcd-writer\n")},
			want: []string{"kpipe.yaml: pipeline[1] (authz): unknown stage plugin \"authz\""}},
		{name: "port in use", args: []string{"--state-dir", t.TempDir(), "--bind-address", "127.0.0.1", "--secure-port", busyPort},
			want: []string{"cannot listen on 127.0.0.1:" + busyPort + ": the address is already in use"}},
		{name: "state dir not writable", args: []string{"--state-dir", filepath.Join(notADir, "state")},
			want: []string{"state directory " + filepath.Join(notADir, "state") + ": cannot be created: not a directory"}},
		{name: "unreadable cert file", args: []string{"--state-dir", t.TempDir(), "--tls-cert-file", "/nonexistent/tls.crt", "--tls-private-key-file", "/nonexistent/tls.key"},
			want: []string{"/nonexistent/tls.crt"}},
		{name: "unreachable etcd", env: map[string]string{"APISERVER_STORAGE_ETCD_DIALTIMEOUT": "1s"},
			args: []string{"--state-dir", t.TempDir(), "--etcd-servers", "http://127.0.0.1:" + closedPort},
			want: []string{"storage:", "http://127.0.0.1:" + closedPort}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			_, err := run(t, c.args...)
			if err == nil {
				t.Fatal("serve started; want an error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "goroutine ") {
				t.Errorf("error carries a stack trace: %v", err)
			}
		})
	}
}

func TestConfigValidateAndPrint(t *testing.T) {
	out, err := run(t, "config", "validate", "--config", "../../apiserver.yaml")
	if err != nil || !strings.Contains(out, "apiserver.yaml is valid") {
		t.Fatalf("validate shipped file: %v %s", err, out)
	}
	bad := writeConfig(t, "pipeline:\n  - name: request-info\n  - name: etcd-writer\n  - name: panic-recovery\n")
	if _, err := run(t, "config", "validate", "--config", bad); err == nil ||
		!strings.Contains(err.Error(), "pipeline[2] (panic-recovery): comes after the terminal stage etcd-writer") {
		t.Errorf("validate with a stage after the terminal one: %v", err)
	}
	bad = writeConfig(t, "pipeline:\n  - name: request-info\n  - name: max-inflight\n    config: {maxRequestsInflight: many}\n  - name: etcd-writer\n")
	if _, err := run(t, "config", "validate", "--config", bad); err == nil ||
		!strings.Contains(err.Error(), "kpipe.yaml: pipeline[1] (max-inflight).config.maxRequestsInflight") {
		t.Errorf("validate with a bad plugin config: %v", err)
	}
	out, err = run(t, "config", "print", "--config", writeConfig(t, "server:\n  securePort: 7443\n"), "--log-level", "debug")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"securePort: 7443", "level: debug", "clusterIPRange: 10.96.0.0/12", "shutdownTimeout: 1m0s", "name: etcd-writer"} {
		if !strings.Contains(out, want) {
			t.Errorf("config print lacks %q:\n%s", want, out)
		}
	}
}

func TestPluginsListing(t *testing.T) {
	out, err := run(t, "plugins")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"stage", "max-inflight", "maxRequestsInflight", "default: 400", "etcd-writer", "timeout", "requestTimeout"} {
		if !strings.Contains(out, want) {
			t.Errorf("plugins output lacks %q:\n%s", want, out)
		}
	}
}

func TestVersionCommand(t *testing.T) {
	out, err := run(t, "version", "-o", "json")
	if err != nil || !strings.Contains(out, `"gitVersion": "v1.37.2-kpipe`) {
		t.Fatalf("%v %s", err, out)
	}
}

// binary is the real apiserver, built once per test run.
func binary(t *testing.T) string { return testserver.Binary(t) }

// The real binary exits non-zero with one line on stderr and no stack.
func TestBinaryExitsCleanlyOnBadConfig(t *testing.T) {
	bin := binary(t)
	cmd := exec.Command(bin, "--config", writeConfig(t, "server:\n  shutdownTimeout: forever\n"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	exit, ok := err.(*exec.ExitError)
	if !ok || exit.ExitCode() == 0 {
		t.Fatalf("want a non-zero exit, got %v", err)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "server.shutdownTimeout: invalid duration \"forever\"") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}

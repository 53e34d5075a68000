package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad flags fail before any request, naming the flag.
func TestFlags(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	// A server nobody listens on: no case may get as far as dialing it.
	cfg := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n" +
		"users: [{name: u, user: {}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{name: "unknown workload", args: []string{"--workload", "create,scan"}, want: `--workload: unknown workload "scan"`},
		{name: "zero concurrency", args: []string{"--concurrency", "0"}, want: "--concurrency: 0 must be at least 1"},
		{name: "unknown flag", args: []string{"--bogus"}, want: "unknown flag: --bogus"},
		{name: "stray argument", args: []string{"create"}, want: "unexpected arguments"},
		{name: "missing kubeconfig", args: []string{"--kubeconfig", filepath.Join(t.TempDir(), "none")}, want: "--kubeconfig"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"--kubeconfig", kc}, c.args...)
			var out, errOut bytes.Buffer
			err := run(args, &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("run(%q) = %v, want %q", args, err, c.want)
			}
			if out.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", out.String())
			}
		})
	}
}

// --floor is a documented flag, off by default.
func TestFloorFlag(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run([]string{"--help"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(errOut.String(), "\n") {
		if strings.Contains(l, "--floor") {
			line = l
		}
	}
	if !strings.Contains(line, "no-op HTTP/2 server") || strings.Contains(line, "default") {
		t.Errorf("--floor's help = %q", line)
	}
}

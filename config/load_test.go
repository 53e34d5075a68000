package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "apiserver.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func flagsFor(t *testing.T, args ...string) Options {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	f := BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	var o Options
	f.Apply(&o)
	return o
}

func TestPrecedence(t *testing.T) {
	file := writeFile(t, "server:\n  securePort: 7000\n  bindAddress: 127.0.0.2\nlog:\n  level: warn\nstorage:\n  etcd:\n    endpoints: [http://a:2379]\n")
	cases := []struct {
		name    string
		env     []string
		args    []string
		port    int
		bind    string
		level   string
		eps     []string
		portSrc string
	}{
		{name: "file over defaults", port: 7000, bind: "127.0.0.2", level: "warn", eps: []string{"http://a:2379"}, portSrc: file},
		{name: "env over file", env: []string{"APISERVER_SERVER_SECUREPORT=7001", "APISERVER_STORAGE_ETCD_ENDPOINTS=http://b:2379,http://c:2379"},
			port: 7001, bind: "127.0.0.2", level: "warn", eps: []string{"http://b:2379", "http://c:2379"}, portSrc: "environment variable APISERVER_SERVER_SECUREPORT"},
		{name: "flags over env", env: []string{"APISERVER_SERVER_SECUREPORT=7001"}, args: []string{"--secure-port=7002", "--log-level=debug", "--etcd-servers=http://d:2379"},
			port: 7002, bind: "127.0.0.2", level: "debug", eps: []string{"http://d:2379"}, portSrc: "flag --secure-port"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := flagsFor(t, c.args...)
			o.File = file
			o.Environ = append([]string{"UNRELATED=1"}, c.env...)
			l, err := Load(o)
			if err != nil {
				t.Fatal(err)
			}
			if l.Server.SecurePort != c.port || l.Server.BindAddress != c.bind || l.Log.Level != c.level || !reflect.DeepEqual(l.Storage.Etcd.Endpoints, c.eps) {
				t.Errorf("got port %d bind %s level %s endpoints %v", l.Server.SecurePort, l.Server.BindAddress, l.Log.Level, l.Storage.Etcd.Endpoints)
			}
			if got := l.SourceOf("server.securePort"); got != c.portSrc {
				t.Errorf("source of server.securePort = %q, want %q", got, c.portSrc)
			}
			if got := l.SourceOf("tls.minVersion"); got != "default" {
				t.Errorf("source of tls.minVersion = %q, want default", got)
			}
			// Untouched keys keep their defaults.
			if l.Server.ShutdownTimeout != 60*time.Second || l.Services.ClusterIPRange != "10.96.0.0/12" {
				t.Errorf("defaults lost: %+v %+v", l.Server, l.Services)
			}
		})
	}
}

func TestRejections(t *testing.T) {
	cases := []struct {
		name string
		file string // empty: no file
		env  []string
		args []string
		want []string // substrings of the one error
	}{
		{name: "unknown key", file: "server:\n  securePort: 6443\n  bogus: 1\n", want: []string{"apiserver.yaml: server.bogus: unknown key"}},
		{name: "wrong case suggests", file: "server:\n  secureport: 6443\n", want: []string{"server.secureport: unknown key", `did you mean "securePort"`}},
		{name: "bad duration", file: "server:\n  shutdownTimeout: 10 parsecs\n", want: []string{"apiserver.yaml: server.shutdownTimeout: invalid duration"}},
		{name: "bare number duration", file: "storage:\n  eventTTL: 3600\n", want: []string{"storage.eventTTL: invalid duration 3600"}},
		{name: "bad CIDR", file: "services:\n  clusterIPRange: 10.96.0.0/33\n", want: []string{"apiserver.yaml: services.clusterIPRange:", "not a CIDR"}},
		{name: "CIDR not a network address", file: "services:\n  clusterIPRange: 10.96.0.1/12\n", want: []string{"services.clusterIPRange", "did you mean 10.96.0.0/12"}},
		{name: "port out of range", file: "server:\n  securePort: 70000\n", want: []string{"apiserver.yaml: server.securePort: 70000 is out of range"}},
		{name: "port zero", file: "server:\n  securePort: 0\n", want: []string{"server.securePort: 0 is out of range"}},
		{name: "port not a number", file: "server:\n  securePort: https\n", want: []string{"server.securePort: want an integer, got \"https\""}},
		{name: "port out of range from flag", args: []string{"--secure-port=99999"}, want: []string{"flag --secure-port: server.securePort: 99999 is out of range"}},
		{name: "port from env", env: []string{"APISERVER_SERVER_SECUREPORT=-1"}, want: []string{"environment variable APISERVER_SERVER_SECUREPORT: server.securePort"}},
		{name: "unknown env var", env: []string{"APISERVER_SERVER_SECURPORT=1"}, want: []string{"environment variable APISERVER_SERVER_SECURPORT: unknown key"}},
		{name: "bad bind address", file: "server:\n  bindAddress: localhost\n", want: []string{"server.bindAddress: \"localhost\" is not an IP address"}},
		{name: "tls 1.1 refused", file: "tls:\n  minVersion: VersionTLS11\n", want: []string{"tls.minVersion: VersionTLS11 is not allowed"}},
		{name: "unknown cipher", file: "tls:\n  cipherSuites: [TLS_RSA_WITH_RC4_128_SHA]\n", want: []string{"tls.cipherSuites", "not a supported secure cipher suite"}},
		{name: "cert without key", file: "tls:\n  certFile: /x.crt\n", want: []string{"tls.certFile and tls.privateKeyFile must be set together"}},
		{name: "bad etcd endpoint", file: "storage:\n  etcd:\n    endpoints: [localhost:2379]\n", want: []string{"storage.etcd.endpoints[0]: \"localhost:2379\" is not an http:// or https:// URL"}},
		{name: "bad node port range", file: "services:\n  nodePortRange: 32767-30000\n", want: []string{"services.nodePortRange"}},
		{name: "bad log level", file: "log:\n  level: loud\n", want: []string{"log.level: \"loud\" is not one of"}},
		{name: "mapping where scalar", file: "stateDir: {a: 1}\n", want: []string{"stateDir: want a string, got a mapping"}},
		{name: "list where mapping", file: "server: [1, 2]\n", want: []string{"server: want a mapping, got a list"}},
		{name: "pipeline entry unknown key", file: "pipeline:\n  - name: x\n    enable: false\n", want: []string{"pipeline[0].enable: unknown key"}},
		{name: "yaml syntax", file: "server:\n  securePort: [\n", want: []string{"config file", "apiserver.yaml"}},
		{name: "duplicate yaml key", file: "stateDir: a\nstateDir: b\n", want: []string{"apiserver.yaml", "already"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := flagsFor(t, c.args...)
			if c.file != "" {
				o.File = writeFile(t, c.file)
			} else {
				o.File = writeFile(t, "{}\n")
			}
			o.Environ = c.env
			if o.Environ == nil {
				o.Environ = []string{}
			}
			_, err := Load(o)
			if err == nil {
				t.Fatal("loaded; want an error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestMissingAndUnreadableFile(t *testing.T) {
	_, err := Load(Options{File: filepath.Join(t.TempDir(), "nope.yaml"), Environ: []string{}})
	if err == nil || !strings.Contains(err.Error(), "nope.yaml: does not exist") {
		t.Fatalf("got %v", err)
	}
	dir := t.TempDir()
	_, err = Load(Options{File: dir, Environ: []string{}})
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("directory as config: got %v", err)
	}
}

// The shipped apiserver.yaml must load, and declare the same pipeline
// the defaults do, so running without a file behaves the same.
func TestShippedFileMatchesDefaults(t *testing.T) {
	l, err := Load(Options{File: "../apiserver.yaml", Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range l.Pipeline {
		names = append(names, e.Name)
	}
	if !reflect.DeepEqual(names, DefaultPipeline) {
		t.Errorf("apiserver.yaml pipeline %v != DefaultPipeline %v", names, DefaultPipeline)
	}
	var hooks []string
	for _, e := range l.PostStartHooks {
		hooks = append(hooks, e.Name)
	}
	if !reflect.DeepEqual(hooks, DefaultPostStartHooks) {
		t.Errorf("apiserver.yaml postStartHooks %v != DefaultPostStartHooks %v", hooks, DefaultPostStartHooks)
	}
	d := Default()
	l.Pipeline, d.Pipeline = nil, nil
	l.PostStartHooks, d.PostStartHooks = nil, nil
	a, _ := yaml.Marshal(ToMap(l.Config))
	b, _ := yaml.Marshal(ToMap(d))
	if string(a) != string(b) {
		t.Errorf("apiserver.yaml differs from Default():\n%s\nvs\n%s", a, b)
	}
}

func TestEnvKeysCoverScalars(t *testing.T) {
	keys := EnvKeys()
	for env, key := range map[string]string{
		"APISERVER_STATEDIR":               "stateDir",
		"APISERVER_SERVER_SECUREPORT":      "server.securePort",
		"APISERVER_STORAGE_ETCD_ENDPOINTS": "storage.etcd.endpoints",
		"APISERVER_TLS_CLIENTCAFILE":       "tls.clientCAFile",
	} {
		if keys[env] != key {
			t.Errorf("%s maps to %q, want %q", env, keys[env], key)
		}
	}
	if _, ok := keys["APISERVER_PIPELINE"]; ok {
		t.Error("the pipeline list must not come from the environment")
	}
}

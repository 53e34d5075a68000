package servere2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

// The acceptance line: stock kubectl reads readyz, version and
// metrics with full TLS verification and the admin kubeconfig.
func TestKubectlRawEndpoints(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	cases := []struct {
		path string
		want []string
	}{
		{"/readyz?verbose", []string{"[+]ping ok", "[+]etcd ok", "[+]shutdown ok", "readyz check passed"}},
		{"/livez?verbose", []string{"[+]ping ok", "livez check passed"}},
		{"/version", []string{`"gitVersion": "v1.37.2-kpipe`, `"goVersion": "go1.`, `"platform": "linux/`}},
		{"/metrics", []string{"apiserver_startup_stage_duration_seconds{stage=\"pki\"}", "go_goroutines", "process_resident_memory_bytes", "apiserver_pipeline_stage_duration_seconds"}},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			out, err := e2eutil.Kubectl(t, ts, "get", "--raw", c.path)
			if err != nil {
				t.Fatalf("kubectl get --raw %s: %v\n%s", c.path, err, out)
			}
			e2eutil.MustContain(t, c.path, out, c.want...)
		})
	}
	// kubectl's own view of the server version parses.
	out, err := e2eutil.Kubectl(t, ts, "version", "-o", "json")
	if err != nil {
		t.Fatalf("kubectl version: %v\n%s", err, out)
	}
	e2eutil.MustContain(t, "kubectl version", out, `"serverVersion"`, `"minor": "37"`)
}

func TestVersionWithClientGo(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	cs := kubernetes.NewForConfigOrDie(ts.Config)
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.Major != "1" || v.Minor != "37" || !strings.HasPrefix(v.GitVersion, "v1.37.2-kpipe") {
		t.Errorf("version %+v", v)
	}
	var raw apiversion.Info
	_, body := e2eutil.Get(t, ts.HTTPClient(t), ts.URL()+"/version")
	if err := json.Unmarshal([]byte(body), &raw); err != nil || raw.GoVersion == "" || raw.BuildDate == "" {
		t.Errorf("/version body %s: %v", body, err)
	}
}

func TestHTTP2Negotiated(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	caPEM, err := os.ReadFile(filepath.Join(ts.StateDir, "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	conn, err := tls.Dial("tcp", strings.TrimPrefix(ts.URL(), "https://"), &tls.Config{
		RootCAs: pool, ServerName: "localhost", NextProtos: []string{"h2", "http/1.1"},
	})
	if err != nil {
		t.Fatalf("TLS with full verification against the generated CA: %v", err)
	}
	defer conn.Close()
	if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Errorf("ALPN negotiated %q, want h2", p)
	}
	resp, err := ts.HTTPClient(t).Get(ts.URL() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Proto != "HTTP/2.0" {
		t.Errorf("client-go spoke %s, want HTTP/2.0", resp.Proto)
	}
}

func TestTLSVersionsBelow12Refused(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	for _, v := range []uint16{tls.VersionTLS10, tls.VersionTLS11} {
		conn, err := tls.Dial("tcp", strings.TrimPrefix(ts.URL(), "https://"), &tls.Config{
			InsecureSkipVerify: true, // only the version is under test
			MinVersion:         v, MaxVersion: v,
		})
		if err == nil {
			conn.Close()
			t.Errorf("TLS version %x was accepted", v)
		}
	}
}

func TestHealthEndpoints(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	c := ts.HTTPClient(t)
	cases := []struct {
		path string
		code int
		want []string
		not  []string
	}{
		{"/readyz", 200, []string{"ok"}, []string{"[+]"}},
		{"/readyz?verbose", 200, []string{"[+]ping ok\n", "[+]etcd ok\n", "[+]shutdown ok\n", "readyz check passed\n"}, nil},
		{"/readyz?verbose&exclude=etcd", 200, []string{"[+]etcd excluded: ok\n"}, []string{"[+]etcd ok"}},
		{"/readyz?verbose&exclude=nope", 200, []string{`warn: some health checks cannot be excluded: no matches for "nope"`}, nil},
		{"/livez?verbose", 200, []string{"[+]ping ok\n", "livez check passed\n"}, []string{"etcd", "shutdown"}},
		{"/healthz?verbose", 200, []string{"[+]etcd ok\n", "healthz check passed\n"}, nil},
		{"/readyz/etcd", 200, []string{"ok"}, nil},
		{"/livez/ping", 200, []string{"ok"}, nil},
		{"/readyz/nope", 404, nil, nil},
	}
	for _, cs := range cases {
		t.Run(cs.path, func(t *testing.T) {
			code, body := e2eutil.Get(t, c, ts.URL()+cs.path)
			if code != cs.code {
				t.Fatalf("code %d, want %d: %s", code, cs.code, body)
			}
			e2eutil.MustContain(t, cs.path, body, cs.want...)
			for _, n := range cs.not {
				if strings.Contains(body, n) {
					t.Errorf("%s contains %q:\n%s", cs.path, n, body)
				}
			}
		})
	}
}

func TestUnknownPathIsNotFoundStatus(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	code, body := e2eutil.Get(t, ts.HTTPClient(t), ts.URL()+"/no/such/thing")
	if code != http.StatusNotFound {
		t.Fatalf("code %d", code)
	}
	e2eutil.MustContain(t, "404 body", body, `"kind":"Status"`, `"reason":"NotFound"`, `"code":404`, "the server could not find the requested resource")
}

func TestAdminKubeconfigIsPrivate(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	for _, f := range []string{"admin.kubeconfig", "pki/ca.key", "pki/client-ca.key", "pki/apiserver.key", "pki/admin.key"} {
		st, err := os.Stat(filepath.Join(ts.StateDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", f, st.Mode().Perm())
		}
	}
}

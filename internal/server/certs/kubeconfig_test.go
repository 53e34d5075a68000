package certs

import (
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func TestWriteKubeconfig(t *testing.T) {
	a := newCA(t)
	certPEM, keyPEM, err := a.IssueClient("admin", []string{"system:masters"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		caPEM  []byte
		exists bool // a world-readable file is already there
	}{
		{"with CA", a.CertPEM, false},
		{"without CA", nil, false},
		{"replaces existing file", a.CertPEM, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sub", "kubeconfig")
			if tc.exists {
				os.MkdirAll(filepath.Dir(path), 0o700)
				if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := WriteKubeconfig(path, "https://127.0.0.1:6443", "kpipe", tc.caPEM, certPEM, keyPEM); err != nil {
				t.Fatal(err)
			}
			wantMode(t, path, 0o600)
			cfg, err := clientcmd.LoadFromFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.CurrentContext != "kpipe" || len(cfg.Contexts) != 1 || len(cfg.Clusters) != 1 || len(cfg.AuthInfos) != 1 {
				t.Fatalf("unexpected shape: %+v", cfg)
			}
			ctx := cfg.Contexts["kpipe"]
			if ctx == nil || ctx.Cluster != "kpipe" || ctx.AuthInfo != "kpipe" {
				t.Fatalf("context %+v", ctx)
			}
			cl, user := cfg.Clusters["kpipe"], cfg.AuthInfos["kpipe"]
			if cl.Server != "https://127.0.0.1:6443" || string(cl.CertificateAuthorityData) != string(tc.caPEM) {
				t.Errorf("cluster %+v", cl)
			}
			if string(user.ClientCertificateData) != string(certPEM) || string(user.ClientKeyData) != string(keyPEM) {
				t.Error("client credentials not embedded verbatim")
			}
			if m, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*")); len(m) != 0 {
				t.Errorf("temporary files left: %v", m)
			}
		})
	}
}

// TestKubeconfigAgainstServer ties the pieces together: a client built from
// the kubeconfig completes mutual TLS with a server using the reloadable
// serving pair and client CA pool.
func TestKubeconfigAgainstServer(t *testing.T) {
	dir := t.TempDir()
	a, err := LoadOrCreateCA(dir, "ca", "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, _, err := a.EnsureServing(dir, "serving", HostsFor("", nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	serving, err := NewFileCertificate(certFile, keyFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	clientCAs, err := NewFileCAPool(filepath.Join(dir, "ca.crt"), nil)
	if err != nil {
		t.Fatal(err)
	}
	// A real listener rather than httptest's, which would serve its own
	// certificate to clients that send no SNI.
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		GetCertificate: serving.GetCertificate,
		ClientCAs:      clientCAs.Pool(),
		ClientAuth:     tls.RequireAndVerifyClientCert,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.TLS.PeerCertificates[0].Subject.CommonName)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	url := "https://" + ln.Addr().String()

	clientCert, clientKey, err := a.EnsureClientFiles(dir, "admin", "admin", []string{"system:masters"})
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "admin.kubeconfig")
	if err := WriteKubeconfig(kubeconfig, url, "kpipe", a.CertPEM, must(os.ReadFile(clientCert)), must(os.ReadFile(clientKey))); err != nil {
		t.Fatal(err)
	}
	restCfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	hc, err := rest.HTTPClientFor(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if body := must(io.ReadAll(resp.Body)); string(body) != "admin" {
		t.Errorf("server saw client %q", body)
	}
}

package e2eutil

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kpipe/kpipe/internal/testserver"
)

// TokenConfig talks to ts with a bearer token and no client certificate.
func TokenConfig(ts *testserver.TestServer, token string) *rest.Config {
	return &rest.Config{Host: ts.Config.Host, BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{CAData: ts.Config.CAData, CAFile: ts.Config.CAFile, ServerName: ts.Config.ServerName}}
}

// TokenKubeconfig writes a kubeconfig holding only token, for kubectl.
func TokenKubeconfig(t *testing.T, ts *testserver.TestServer, token string) string {
	t.Helper()
	admin, err := clientcmd.LoadFromFile(ts.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kpipe"] = admin.Clusters[admin.Contexts[admin.CurrentContext].Cluster]
	cfg.AuthInfos["token"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["token"] = &clientcmdapi.Context{Cluster: "kpipe", AuthInfo: "token"}
	cfg.CurrentContext = "token"
	path := filepath.Join(t.TempDir(), "token.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// KubectlAs runs the real kubectl with the kubeconfig at path. It skips
// the test where kubectl is not installed, and says so.
func KubectlAs(t *testing.T, kubeconfig string, args ...string) (string, error) {
	t.Helper()
	path, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on PATH; this test needs the real kubectl")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
	return string(out), err
}

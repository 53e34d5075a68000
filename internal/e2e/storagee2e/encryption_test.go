package storagee2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/server"
	"github.com/kpipe/kpipe/internal/testserver"
)

// writeEncryptionConfig writes an EncryptionConfiguration for secrets with
// the named aescbc keys, the first writing, then identity.
func writeEncryptionConfig(t *testing.T, keys ...string) string {
	t.Helper()
	s := "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - aescbc:\n      keys:\n"
	for _, k := range keys {
		s += "      - name: " + k + "\n        secret: " + base64.StdEncoding.EncodeToString([]byte(strings.Repeat(k, 32))[:32]) + "\n"
	}
	s += "  - identity: {}\n"
	p := filepath.Join(t.TempDir(), "encryption.yaml")
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Secrets are encrypted in etcd with kube's format, other resources are
// not, and a server restarted with a rotated key list reads the old data
// and re-encrypts it on update.
func TestEncryptionAtRest(t *testing.T) {
	ctx := context.Background()
	var prefix string
	first := writeEncryptionConfig(t, "key1")
	a := testserver.Start(t, testserver.Options{Configure: func(c *config.Config) {
		c.Storage.EncryptionProviderConfig = first
		prefix = c.Storage.Prefix
	}})
	cs := kubernetes.NewForConfigOrDie(a.Config)
	e2eutil.Namespace(t, cs, "vault")
	if _, err := cs.CoreV1().Secrets("vault").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		StringData: map[string]string{"password": "correct-horse-battery-staple"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps("vault").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "plain"}, Data: map[string]string{"k": "visible-value"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	raw := func(ts *testserver.TestServer, key string) []byte {
		t.Helper()
		resp, err := ts.Backend().Client.Get(ctx, prefix+key)
		if err != nil || len(resp.Kvs) != 1 {
			t.Fatalf("etcd get %s: %v", key, err)
		}
		return resp.Kvs[0].Value
	}
	secretPlain := base64.StdEncoding.EncodeToString([]byte("correct-horse-battery-staple"))
	v := raw(a, "/secrets/vault/db")
	if !bytes.HasPrefix(v, []byte("k8s:enc:aescbc:v1:key1:")) || bytes.Contains(v, []byte(secretPlain)) || bytes.Contains(v, []byte("correct-horse")) {
		t.Fatalf("the secret is stored as %q", v)
	}
	if v := raw(a, "/configmaps/vault/plain"); !bytes.Contains(v, []byte("visible-value")) {
		t.Fatalf("the configmap is stored as %q", v)
	}
	a.Stop(t)

	rotated := writeEncryptionConfig(t, "key2", "key1")
	b := testserver.Start(t, testserver.Options{Configure: func(c *config.Config) {
		c.Storage.EncryptionProviderConfig = rotated
		c.Storage.Prefix = prefix
	}})
	cs = kubernetes.NewForConfigOrDie(b.Config)
	s, err := cs.CoreV1().Secrets("vault").Get(ctx, "db", metav1.GetOptions{})
	if err != nil || string(s.Data["password"]) != "correct-horse-battery-staple" {
		t.Fatalf("reading the key1 secret under key2,key1: %v %q", err, s.Data)
	}
	// kube's rotation step: an update that changes nothing rewrites the
	// value under the new key.
	if _, err := cs.CoreV1().Secrets("vault").Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if v := raw(b, "/secrets/vault/db"); !bytes.HasPrefix(v, []byte("k8s:enc:aescbc:v1:key2:")) {
		t.Fatalf("after the update the secret is stored as %q", v)
	}
	if l, err := cs.CoreV1().Secrets("vault").List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 1 || string(l.Items[0].Data["password"]) != "correct-horse-battery-staple" {
		t.Fatalf("list: %v %v", err, l)
	}
}

func TestEncryptionConfigErrorNamesKeyAndFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "enc.yaml")
	if err := os.WriteFile(p, []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - aesgcm: {keys: [{name: k, secret: c2hvcnQ=}]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Storage.EncryptionProviderConfig = p
	_, err := server.LoadEncryption(cfg)
	if err == nil {
		t.Fatal("a 5-byte key was accepted")
	}
	e2eutil.MustContain(t, "error", err.Error(), "storage.encryptionProviderConfig", p, "resources[0].providers[0].aesgcm.keys[0].secret: key is 5 bytes")
}

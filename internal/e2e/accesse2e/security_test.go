package accesse2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

// selfSigned is a client certificate from a CA the server does not trust.
func selfSigned(t *testing.T) *tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// Without a trusted client certificate or a valid token, every resource
// path the server serves is 401 or 403, for every verb: anonymous, a
// bogus bearer token, and a certificate from an unknown CA claiming
// system:masters.
func TestEveryResourcePathNeedsCredentials(t *testing.T) {
	ts, cs := e2eutil.APIServer(t)
	lists, err := cs.Discovery().ServerPreferredResources()
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, l := range lists {
		prefix := "/apis/" + l.GroupVersion
		if l.GroupVersion == "v1" {
			prefix = "/api/v1"
		}
		for _, r := range l.APIResources {
			if r.Namespaced {
				paths = append(paths, prefix+"/namespaces/default/"+r.Name, prefix+"/"+r.Name)
			} else {
				paths = append(paths, prefix+"/"+r.Name)
			}
		}
	}
	if len(paths) < 20 {
		t.Fatalf("only %d resource paths from discovery", len(paths))
	}
	clients := []struct {
		name  string
		c     *http.Client
		token string
		want  []int
	}{
		{"anonymous", e2eutil.RawClient(t, ts, nil), "", []int{401, 403}},
		{"bogus token", e2eutil.RawClient(t, ts, nil), "not-a-token", []int{401}},
		{"untrusted certificate", e2eutil.RawClient(t, ts, selfSigned(t)), "", []int{401}},
	}
	type call struct{ method, suffix, body string }
	calls := []call{
		{"GET", "", ""}, {"GET", "?watch=true", ""}, {"GET", "/x", ""},
		{"POST", "", "{}"}, {"PUT", "/x", "{}"}, {"PATCH", "/x", "{}"}, {"DELETE", "/x", ""}, {"DELETE", "", ""},
	}
	tried := 0
	for _, cl := range clients {
		for _, p := range paths {
			for _, k := range calls {
				req, _ := http.NewRequest(k.method, ts.URL()+p+k.suffix, strings.NewReader(k.body))
				req.Header.Set("Content-Type", "application/merge-patch+json")
				if k.method != "PATCH" {
					req.Header.Set("Content-Type", "application/json")
				}
				if cl.token != "" {
					req.Header.Set("Authorization", "Bearer "+cl.token)
				}
				resp, err := cl.c.Do(req)
				if err != nil {
					t.Fatalf("%s %s %s: %v", cl.name, k.method, p+k.suffix, err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				tried++
				ok := false
				for _, w := range cl.want {
					ok = ok || resp.StatusCode == w
				}
				if !ok || !strings.Contains(string(body), `"kind":"Status"`) {
					t.Errorf("%s %s %s: %d %.200s, want %v Status", cl.name, k.method, p+k.suffix, resp.StatusCode, body, cl.want)
				}
			}
		}
	}
	t.Logf("%d requests without credentials on %d resource paths: all 401/403", tried, len(paths))
	// Nothing was written.
	if _, err := cs.CoreV1().ConfigMaps("default").Get(context.Background(), "x", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("an unauthenticated write landed: %v", err)
	}
}

// A Secret's values show in no log line (at debug level), not in
// /debug/pipeline and in no error message, on writes that succeed or fail.
func TestSecretValuesNeverLeak(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	ts := testserver.Start(t, testserver.Options{Log: zap.New(core)})
	cs := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "secrets")
	const value = "pa55w0rd-Zq8xK3vN"
	secrets := cs.CoreV1().Secrets("secrets")
	var errs []error
	collect := func(err error) {
		if err == nil {
			t.Error("a write that should fail succeeded")
			return
		}
		errs = append(errs, err)
	}

	s, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db"}, StringData: map[string]string{"password": value}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(s.Data["password"]) != value {
		t.Fatalf("stringData not folded into data: %v", s.Data)
	}
	if _, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "locked"}, Immutable: ptr.To(true), StringData: map[string]string{"password": value}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Failures: already exists, a bad key, a stale update, immutable data,
	// a type change, a strict-validation error, a bad patch.
	_, err = secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db"}, StringData: map[string]string{"password": value}}, metav1.CreateOptions{})
	collect(err)
	_, err = secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "badkey"}, StringData: map[string]string{"bad key": value}}, metav1.CreateOptions{})
	collect(err)
	_, err = secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tls"}, Type: corev1.SecretTypeTLS, StringData: map[string]string{"tls.crt": value}}, metav1.CreateOptions{})
	collect(err)
	stale := s.DeepCopy()
	s.Labels = map[string]string{"moved": "on"} // a no-op update would keep the resourceVersion
	if _, err := secrets.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	stale.StringData = map[string]string{"password": value + "2"}
	_, err = secrets.Update(ctx, stale, metav1.UpdateOptions{})
	collect(err)
	_, err = secrets.Patch(ctx, "locked", types.MergePatchType, []byte(fmt.Sprintf(`{"stringData":{"password":%q}}`, value+"3")), metav1.PatchOptions{})
	collect(err)
	_, err = secrets.Patch(ctx, "db", types.MergePatchType, []byte(`{"type":"kubernetes.io/tls"}`), metav1.PatchOptions{})
	collect(err)
	_, err = secrets.Patch(ctx, "db", types.MergePatchType, []byte(fmt.Sprintf(`{"stringData":{"password":%q},"bogus":1}`, value)), metav1.PatchOptions{FieldValidation: "Strict"})
	collect(err)
	_, err = secrets.Patch(ctx, "db", types.MergePatchType, []byte(`{"bogus":1}`), metav1.PatchOptions{FieldValidation: "Strict"})
	collect(err)
	_, err = secrets.Patch(ctx, "db", types.MergePatchType, []byte(`{"data":{"password":1}}`), metav1.PatchOptions{})
	collect(err)
	_, err = secrets.Patch(ctx, "db", types.StrategicMergePatchType, []byte(`{"bogus":1}`), metav1.PatchOptions{FieldValidation: "Strict"})
	collect(err)
	_, err = secrets.Patch(ctx, "db", types.JSONPatchType, []byte(`[{"op":"add","path":"/bogus","value":1}]`), metav1.PatchOptions{FieldValidation: "Strict"})
	collect(err)
	_, err = secrets.Patch(ctx, "db", types.JSONPatchType, []byte(fmt.Sprintf(`[{"op":"test","path":"/data/password","value":%q}]`, "bm9wZQ==")), metav1.PatchOptions{})
	collect(err)

	// The value as sent and as stored (base64 in data).
	leaks := func(s string) bool {
		return strings.Contains(s, value) || strings.Contains(s, base64.StdEncoding.EncodeToString([]byte(value))[:16])
	}
	for _, err := range errs {
		if leaks(err.Error()) {
			t.Errorf("an error message carries the secret: %v", err)
		}
		if se, ok := err.(apierrors.APIStatus); ok && se.Status().Details != nil {
			for _, c := range se.Status().Details.Causes {
				if leaks(c.Message) {
					t.Errorf("a Status cause carries the secret: %v", c.Message)
				}
			}
		}
	}
	// /debug/pipeline.
	code, body := e2eutil.Get(t, ts.HTTPClient(t), ts.URL()+"/debug/pipeline")
	if code != 200 || leaks(body) {
		t.Errorf("/debug/pipeline: %d, carries the secret: %v", code, leaks(body))
	}
	// Every log line, message and fields, at debug level.
	n := 0
	for _, e := range logs.All() {
		n++
		line := e.Message
		for k, v := range e.ContextMap() {
			line += fmt.Sprintf(" %s=%v", k, v)
		}
		if leaks(line) {
			t.Errorf("a log line carries the secret: %s", line)
		}
	}
	t.Logf("%d failed secret writes and %d debug log entries checked: no secret value", len(errs), n)
}

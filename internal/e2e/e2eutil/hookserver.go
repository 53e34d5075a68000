package e2eutil

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kpipe/kpipe/config"
)

// HookServer is a real HTTPS admission webhook on 127.0.0.1, with a
// certificate from its own CA, valid for 127.0.0.1 and for the DNS names
// it was started with (Services' names, for service references). It
// answers by path (see ServeHTTP) and counts the calls.
type HookServer struct {
	URL  string // https://127.0.0.1:<port>
	Port string
	CA   []byte // PEM, the configurations' caBundle

	mu    sync.Mutex
	calls map[string]int
	last  map[string]*admissionv1.AdmissionRequest
}

func newCert(t *testing.T, dnsNames []string) (caPEM []byte, cert tls.Certificate) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "webhook-test-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "webhook"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: dnsNames,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// StartHookServer starts a HookServer, closed when the test ends, whose
// certificate is also valid for dnsNames.
func StartHookServer(t *testing.T, dnsNames ...string) *HookServer {
	t.Helper()
	caPEM, cert := newCert(t, dnsNames)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &HookServer{CA: caPEM, calls: map[string]int{}, last: map[string]*admissionv1.AdmissionRequest{}}
	_, h.Port, _ = net.SplitHostPort(ln.Addr().String())
	h.URL = "https://127.0.0.1:" + h.Port
	srv := &http.Server{Handler: h, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	go srv.ServeTLS(ln, "", "") //nolint:errcheck // ends with Close
	t.Cleanup(func() { srv.Close() })
	return h
}

// Calls is how many reviews path was sent.
func (h *HookServer) Calls(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls[path]
}

// Last is the request of the last review path was sent.
func (h *HookServer) Last(path string) *admissionv1.AdmissionRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last[path]
}

// labelPatch adds key=value to the object's labels.
func labelPatch(obj []byte, key, value string) []byte {
	var m struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(obj, &m)
	if _, ok := m.Metadata.Labels[key]; ok {
		return nil
	}
	var ops []map[string]any
	if m.Metadata.Labels == nil {
		ops = append(ops, map[string]any{"op": "add", "path": "/metadata/labels", "value": map[string]string{key: value}})
	} else {
		ops = append(ops, map[string]any{"op": "add", "path": "/metadata/labels/" + strings.ReplaceAll(key, "/", "~1"), "value": value})
	}
	b, _ := json.Marshal(ops)
	return b
}

// ServeHTTP answers by path:
//
//	/allow     allows
//	/deny      denies with code 403 and a message
//	/deny-bare denies with a message and no code
//	/label     patches the label webhook=was-here in
//	/second    patches the label second=yes in
//	/slow      answers after 5 s, or when the caller gives up
//	/garbage   answers something that is not an AdmissionReview
//	/warn      allows with a warning and an audit annotation
func (h *HookServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	review := &admissionv1.AdmissionReview{}
	if err := json.NewDecoder(r.Body).Decode(review); err != nil || review.Request == nil {
		http.Error(w, "bad review", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.calls[r.URL.Path]++
	h.last[r.URL.Path] = review.Request
	h.mu.Unlock()
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	jsonPatch := admissionv1.PatchTypeJSONPatch
	switch r.URL.Path {
	case "/deny":
		resp.Allowed = false
		resp.Result = &metav1.Status{Code: http.StatusForbidden, Message: "no thanks"}
	case "/deny-bare":
		resp.Allowed = false
		resp.Result = &metav1.Status{Message: "nope"}
	case "/label":
		if p := labelPatch(review.Request.Object.Raw, "webhook", "was-here"); p != nil {
			resp.Patch, resp.PatchType = p, &jsonPatch
		}
	case "/second":
		if p := labelPatch(review.Request.Object.Raw, "second", "yes"); p != nil {
			resp.Patch, resp.PatchType = p, &jsonPatch
		}
	case "/slow":
		select {
		case <-r.Context().Done():
			return
		case <-time.After(5 * time.Second):
		}
	case "/garbage":
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("this is {not an AdmissionReview"))
		return
	case "/warn":
		resp.Warnings = []string{"careful with that"}
		resp.AuditAnnotations = map[string]string{"checked": "yes"}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Response: resp,
	})
}

// WebhookAdmission puts the webhook plugins in c's admission lists (they
// are not in the default lists): MutatingAdmissionWebhook, and
// NamespaceLifecycle then ValidatingAdmissionWebhook.
func WebhookAdmission(c *config.Config) {
	for i, p := range c.Pipeline {
		switch p.Name {
		case "mutating-admission":
			c.Pipeline[i].Config = map[string]any{"plugins": []any{map[string]any{"name": "MutatingAdmissionWebhook"}}}
		case "validating-admission":
			c.Pipeline[i].Config = map[string]any{"plugins": []any{
				map[string]any{"name": "NamespaceLifecycle"}, map[string]any{"name": "ValidatingAdmissionWebhook"}}}
		}
	}
}

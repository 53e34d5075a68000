package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// client speaks raw HTTP to the API server with the kubeconfig's TLS and
// credentials. Raw requests with prepared bodies keep the load
// generator's own CPU small: on a shared machine every cycle it spends is
// taken from the server it measures.
type client struct {
	base string
	hcs  []*http.Client
	next atomic.Uint64
}

// newClient opens conns HTTP/2 connections' worth of transports.
func newClient(cfg *rest.Config, conns int) (*client, error) {
	c := &client{base: strings.TrimRight(cfg.Host, "/")}
	for range max(1, conns) {
		cc := rest.CopyConfig(cfg)
		// A config with its own dialer gets a transport of its own instead
		// of client-go's shared cached one, so each is one connection.
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		cc.Dial = d.DialContext
		rt, err := rest.TransportFor(cc)
		if err != nil {
			return nil, fmt.Errorf("transport from kubeconfig: %w", err)
		}
		c.hcs = append(c.hcs, &http.Client{Transport: rt})
	}
	return c, nil
}

// hc picks the connections in turn.
func (c *client) hc() *http.Client {
	return c.hcs[c.next.Add(1)%uint64(len(c.hcs))]
}

// do sends one request and reads the whole answer. A code other than want
// is an error carrying the server's message.
func (c *client) do(ctx context.Context, method, path string, body []byte, want int) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc().Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		return b, statusError(method, path, resp.StatusCode, b)
	}
	return b, nil
}

func statusError(method, path string, code int, body []byte) error {
	var st metav1.Status
	if json.Unmarshal(body, &st) == nil && st.Message != "" {
		return fmt.Errorf("%s %s: %d %s", method, stripQuery(path), code, st.Message)
	}
	return fmt.Errorf("%s %s: %d", method, stripQuery(path), code)
}

func stripQuery(p string) string {
	if i := strings.IndexByte(p, '?'); i >= 0 {
		return p[:i]
	}
	return p
}

func (c *client) close() {
	for _, hc := range c.hcs {
		hc.CloseIdleConnections()
	}
}

// Labels every object of a run carries, so a run finds and removes its
// own objects and nothing else.
const (
	runLabel   = "kpipe-bench/run"
	groupLabel = "kpipe-bench/group"
)

func configMapsPath(ns string) string {
	return "/api/v1/namespaces/" + url.PathEscape(ns) + "/configmaps"
}

// configMap is the body of every write: data holds one value of size
// bytes; stamp, when set, is the write's send time for the watch.
func configMap(ns, name, run, group string, payload string, resourceVersion string) []byte {
	cm := corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, ResourceVersion: resourceVersion,
			Labels: map[string]string{runLabel: run},
		},
		Data: map[string]string{"payload": payload},
	}
	if group != "" {
		cm.Labels[groupLabel] = group
	}
	b, err := json.Marshal(&cm)
	if err != nil {
		panic(err) // a ConfigMap always marshals
	}
	return b
}

// payload is size bytes of printable text.
func payload(size int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, size)
	for i := range b {
		b[i] = alphabet[(i*7+i/len(alphabet))%len(alphabet)]
	}
	return string(b)
}

// objectMeta reads the few fields the bench needs from an answer.
type objectMeta struct {
	Metadata struct {
		Name            string `json:"name"`
		ResourceVersion string `json:"resourceVersion"`
		Continue        string `json:"continue"`
	} `json:"metadata"`
}

type listMeta struct {
	objectMeta
	Items []objectMeta `json:"items"`
}

// ensureNamespace creates ns unless it exists.
func (c *client) ensureNamespace(ctx context.Context, ns string) error {
	if _, err := c.do(ctx, "GET", "/api/v1/namespaces/"+url.PathEscape(ns), nil, http.StatusOK); err == nil {
		return nil
	}
	body, _ := json.Marshal(corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: ns},
	})
	_, err := c.do(ctx, "POST", "/api/v1/namespaces", body, http.StatusCreated)
	if err != nil && strings.Contains(err.Error(), ": 409 ") {
		return nil
	}
	return err
}

// deleteRun removes every ConfigMap of a run.
func (c *client) deleteRun(ctx context.Context, ns, run string) error {
	_, err := c.do(ctx, "DELETE", configMapsPath(ns)+"?labelSelector="+url.QueryEscape(runLabel+"="+run), nil, http.StatusOK)
	return err
}

package faults

import (
	"bytes"
	"context"
	"crypto/tls"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/testserver"
)

// h2conn is a hand-driven HTTP/2 connection: the test decides which
// frames go out and when, as a slow or hostile client would.
type h2conn struct {
	t    *testing.T
	c    *tls.Conn
	fr   *http2.Framer
	host string
}

func dialH2(t *testing.T, ts *testserver.TestServer, settings ...http2.Setting) *h2conn {
	t.Helper()
	cfg := rawTLS(t, ts)
	cfg.NextProtos = []string{"h2"}
	c, err := tls.Dial("tcp", ts.URL()[len("https://"):], cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if p := c.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("negotiated %q, want h2", p)
	}
	if _, err := c.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	h := &h2conn{t: t, c: c, fr: http2.NewFramer(c, c), host: ts.URL()[len("https://"):]}
	h.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if err := h.fr.WriteSettings(settings...); err != nil {
		t.Fatal(err)
	}
	return h
}

// headers opens stream id with a request; end closes the stream's side.
func (h *h2conn) headers(id uint32, method, path string, end bool, extra ...string) {
	h.t.Helper()
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	fields := append([]string{":method", method, ":scheme", "https", ":authority", h.host, ":path", path}, extra...)
	for i := 0; i < len(fields); i += 2 {
		enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	if err := h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: buf.Bytes(), EndStream: end, EndHeaders: true}); err != nil {
		h.t.Fatal(err)
	}
}

// h2end is how the server ended a stream: its :status, or a reset.
type h2end struct {
	status string
	reset  bool
	at     time.Duration
}

// await reads frames until each stream in ids got response headers or a
// reset, acknowledging settings and pings on the way.
func (h *h2conn) await(within time.Duration, ids ...uint32) map[uint32]h2end {
	h.t.Helper()
	return h.awaitEnds(within, false, ids...)
}

// awaitResets waits for the server to reset each stream in ids.
func (h *h2conn) awaitResets(within time.Duration, ids ...uint32) map[uint32]h2end {
	h.t.Helper()
	return h.awaitEnds(within, true, ids...)
}

func (h *h2conn) awaitEnds(within time.Duration, resetsOnly bool, ids ...uint32) map[uint32]h2end {
	h.t.Helper()
	start := time.Now()
	h.c.SetReadDeadline(start.Add(within))
	defer h.c.SetReadDeadline(time.Time{})
	want := map[uint32]bool{}
	for _, id := range ids {
		want[id] = true
	}
	got := map[uint32]h2end{}
	for len(got) < len(want) {
		f, err := h.fr.ReadFrame()
		if err != nil {
			h.t.Fatalf("after %v, waiting for streams %v (have %v): %v", time.Since(start).Round(time.Millisecond), ids, got, err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				h.fr.WriteSettingsAck()
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				h.fr.WritePing(true, f.Data)
			}
		case *http2.MetaHeadersFrame:
			if want[f.StreamID] && !resetsOnly {
				if _, done := got[f.StreamID]; !done {
					got[f.StreamID] = h2end{status: f.PseudoValue("status"), at: time.Since(start)}
				}
			}
		case *http2.RSTStreamFrame:
			if want[f.StreamID] {
				if _, done := got[f.StreamID]; !done {
					got[f.StreamID] = h2end{reset: true, at: time.Since(start)}
				}
			}
		case *http2.GoAwayFrame:
			h.t.Fatalf("GOAWAY (%v) while waiting for streams %v", f.ErrCode, ids)
		}
	}
	return got
}

// A client that announces a body and never sends it holds its stream only
// until the request timeout, and the same connection goes on serving its
// other streams meanwhile; nothing is stored.
func TestHTTP2StalledBodyEndsAtRequestTimeout(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{Configure: func(c *config.Config) { withRequestTimeout(c, "3s") }})
	h := dialH2(t, ts)
	token := "Bearer " + ts.Config.BearerToken
	auth := []string{}
	if ts.Config.BearerToken != "" {
		auth = []string{"authorization", token}
	}
	h.headers(1, "POST", "/api/v1/namespaces/default/configmaps", false,
		append([]string{"content-type", "application/json", "content-length", "200"}, auth...)...)
	h.headers(3, "GET", "/livez", true, auth...)
	first := h.await(5*time.Second, 3)
	if first[3].status != "200" || first[3].at > 2*time.Second {
		t.Fatalf("/livez beside a stalled upload: %+v, want 200 at once", first[3])
	}
	end := h.await(15*time.Second, 1)
	t.Logf("stalled upload ended after %v: %+v", end[1].at+first[3].at, end[1])
	if !end[1].reset && end[1].status != "504" && end[1].status != "408" {
		t.Fatalf("stalled upload ended with %+v, want 504, 408 or a reset", end[1])
	}
	cs := kubernetes.NewForConfigOrDie(ts.Config)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range list.Items {
		if !strings.HasPrefix(cm.Name, "kube-root-ca") {
			t.Errorf("a stalled upload stored %s", cm.Name)
		}
	}
}

// A client that grants no flow-control window (SETTINGS_INITIAL_WINDOW_SIZE
// 0) cannot receive a body; its requests must not hold up anyone else's,
// on other connections or on its own.
func TestHTTP2ZeroWindowClientDoesNotBlockOthers(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{Configure: func(c *config.Config) { withRequestTimeout(c, "3s") }})
	auth := []string{}
	if ts.Config.BearerToken != "" {
		auth = []string{"authorization", "Bearer " + ts.Config.BearerToken}
	}
	h := dialH2(t, ts, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
	for id := uint32(1); id < 200; id += 2 {
		h.headers(id, "GET", "/api/v1/namespaces/default/configmaps", true, auth...)
	}
	c := httpClient(t, ts.Config)
	for i := range 20 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL()+"/api/v1/namespaces/default/configmaps", nil)
		resp, err := c.Do(req)
		cancel()
		if err != nil {
			t.Fatalf("request %d beside 100 stalled streams: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("request %d beside 100 stalled streams: %d", i, resp.StatusCode)
		}
	}
	// The server gives the undeliverable answers up by twice the request
	// timeout and resets their streams: neither handlers nor net/http's
	// final flush stay blocked on a window that never opens.
	var ids []uint32
	for id := uint32(1); id < 200; id += 2 {
		ids = append(ids, id)
	}
	start := time.Now()
	h.awaitResets(20*time.Second, ids...)
	t.Logf("the server reset the 100 stalled streams %v after the last fresh request", time.Since(start).Round(100*time.Millisecond))
}

//go:build faults

package faults

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kpipe/kpipe/internal/testserver"
)

// A thousand idle connections (half bare TCP that never start TLS, half
// with TLS done and no request) leave the server answering others.
func TestFaultThousandIdleConnections(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	addr := ts.URL()[len("https://"):]
	tlsCfg := rawTLS(t, ts)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < 1000; i++ {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
		if i%2 == 1 {
			tc := tls.Client(c, tlsCfg)
			tc.SetDeadline(time.Now().Add(20 * time.Second))
			if err := tc.Handshake(); err != nil {
				t.Fatalf("TLS handshake on connection %d: %v", i, err)
			}
			conns[len(conns)-1] = tc
		}
	}
	// A fresh client still gets answers: reads, writes, health.
	cs := fastClient(t, ts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after-idle"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("create with 1000 idle connections open: %v", err)
	}
	if _, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("list with 1000 idle connections open: %v", err)
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL()+"/readyz", nil)
	resp, err := httpClient(t, ts.Config).Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("/readyz with 1000 idle connections open: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	t.Logf("1000 idle connections open (500 bare TCP, 500 TLS); create, list and /readyz answered")
}

// readHeaderTimeout is the server's, as kube-apiserver's: 32s.
const readHeaderTimeout = 32 * time.Second

// A slowloris client is cut off at the read-header timeout, whether it
// never starts TLS or trickles its request headers one byte at a time,
// and the server answers others meanwhile.
func TestFaultSlowlorisCutAtReadHeaderTimeout(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	addr := ts.URL()[len("https://"):]

	closedWithin := func(name string, c net.Conn, trickle bool) <-chan time.Duration {
		out := make(chan time.Duration, 1)
		start := time.Now()
		go func() {
			defer c.Close()
			if trickle {
				go func() {
					// Headers that never end, one byte a second.
					if _, err := io.WriteString(c, "GET /readyz HTTP/1.1\r\nHost: x\r\nX-Slow: "); err != nil {
						return
					}
					for {
						time.Sleep(time.Second)
						if _, err := c.Write([]byte("a")); err != nil {
							return
						}
					}
				}()
			}
			c.SetReadDeadline(time.Now().Add(2 * readHeaderTimeout))
			_, err := io.Copy(io.Discard, c)
			d := time.Since(start)
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Errorf("%s: the server kept the connection open for %v", name, d)
			}
			out <- d
		}()
		return out
	}

	bare, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	tc := tls.Client(raw, rawTLS(t, ts))
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	bareDone := closedWithin("no TLS", bare, false)
	slowDone := closedWithin("trickled headers", tc, true)

	// Meanwhile the server serves.
	if _, err := fastClient(t, ts).CoreV1().ConfigMaps("default").Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "during-slowloris"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("create during the slowloris: %v", err)
	}
	d1, d2 := <-bareDone, <-slowDone
	t.Logf("bare TCP closed after %v, trickled headers closed after %v (ReadHeaderTimeout %v)", d1.Round(time.Millisecond), d2.Round(time.Millisecond), readHeaderTimeout)
	// The cut comes from the timeout, not from something earlier.
	for _, d := range []time.Duration{d1, d2} {
		if d < readHeaderTimeout-time.Second {
			t.Errorf("closed after %v, before the read-header timeout", d)
		}
	}
}

// A watcher that never reads is dropped once its events back up, without
// holding up the writes or the other watchers.
func TestFaultStalledWatcherDropped(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	ts := testserver.Start(t, testserver.Options{Log: zap.New(core)})
	cs := fastClient(t, ts)
	namespace(t, cs, "stall")

	// The stalled watcher: its request sent, its answer never read.
	raw, err := net.Dial("tcp", ts.URL()[len("https://"):])
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	stalled := tls.Client(raw, rawTLS(t, ts))
	if _, err := fmt.Fprintf(stalled, "GET /api/v1/namespaces/stall/configmaps?watch=true HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	// Read only the status line, so the watch has surely started.
	line, err := bufio.NewReader(stalled).ReadString('\n')
	if err != nil || !strings.Contains(line, "200") {
		t.Fatalf("stalled watch: %q %v", line, err)
	}

	// A healthy watcher reading everything.
	w, err := cs.CoreV1().ConfigMaps("stall").Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	const n = 200
	seen := make(chan int, 1)
	go func() {
		count := 0
		for ev := range w.ResultChan() {
			if ev.Type == watch.Added {
				count++
				if count == n {
					break
				}
			}
		}
		seen <- count
	}()

	// 200 objects of 100 KiB: far more than the socket buffers and the
	// watch buffer of the stalled watcher hold.
	big := strings.Repeat("x", 100<<10)
	start := time.Now()
	for i := 0; i < n; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
		_, err := cs.CoreV1().ConfigMaps("stall").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"d": big}}, metav1.CreateOptions{})
		cancel()
		if err != nil {
			t.Fatalf("create %d with a stalled watcher: %v", i, err)
		}
	}
	t.Logf("%d creates of 100 KiB took %v with a stalled watcher", n, time.Since(start).Round(time.Millisecond))
	select {
	case got := <-seen:
		if got != n {
			t.Errorf("the healthy watcher saw %d of %d creates", got, n)
		}
	case <-time.After(time.Minute):
		t.Fatal("the healthy watcher did not see every create within a minute")
	}
	// The server gives up on the stalled one (its send timeout is 30s).
	eventually(t, 90*time.Second, "the stalled watcher to be dropped", func() bool {
		return logs.FilterMessage("closing watch: consumer did not read events").Len() > 0
	})
	t.Logf("the stalled watcher was dropped %v after the first create", time.Since(start).Round(time.Second))
}

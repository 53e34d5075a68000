package timeout

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kpipe/kpipe/internal/api/status"
)

// guardedWriter is what the handler goroutine writes to. Until the timeout
// it passes writes on; after it, every write fails with
// http.ErrHandlerTimeout, so a late handler can never touch a response (or
// a connection) that has moved on.
//
// The handler gets its own copy of the header map: it may keep editing it
// after the timeout while the stage writes the 504's headers to the real
// one. The copy is put in place, under the lock, when the response starts
// and again when the handler finishes (for trailers).
//
// It has no Unwrap on purpose: http.ResponseController would reach the real
// writer through it and bypass the guard. Flush, Hijack and the deadline
// setters are guarded here instead.
type guardedWriter struct {
	w      http.ResponseWriter
	header http.Header // the handler's copy

	mu          sync.Mutex
	timedOut    bool
	wroteHeader bool
	hijacked    bool
}

func newGuardedWriter(w http.ResponseWriter) *guardedWriter {
	return &guardedWriter{w: w, header: w.Header().Clone()}
}

func (g *guardedWriter) Header() http.Header {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.timedOut {
		// A throwaway map: edits after the timeout go nowhere.
		return http.Header{}
	}
	return g.header
}

func (g *guardedWriter) WriteHeader(code int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.timedOut || g.hijacked || g.wroteHeader {
		return
	}
	g.syncHeader()
	// 1xx responses other than 101 (early hints) may come before the final
	// one.
	if code >= 200 || code == http.StatusSwitchingProtocols {
		g.wroteHeader = true
	}
	g.w.WriteHeader(code)
}

func (g *guardedWriter) Write(b []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.timedOut {
		return 0, http.ErrHandlerTimeout
	}
	if g.hijacked {
		return 0, http.ErrHijacked
	}
	g.start()
	return g.w.Write(b)
}

func (g *guardedWriter) Flush() {
	_ = g.FlushError()
}

// FlushError is what http.ResponseController calls.
func (g *guardedWriter) FlushError() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.timedOut {
		return http.ErrHandlerTimeout
	}
	if g.hijacked {
		return http.ErrHijacked
	}
	// A flush sends the headers.
	g.start()
	return http.NewResponseController(g.w).Flush()
}

func (g *guardedWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.timedOut {
		return nil, nil, http.ErrHandlerTimeout
	}
	conn, rw, err := http.NewResponseController(g.w).Hijack()
	if err == nil {
		g.hijacked = true
	}
	return conn, rw, err
}

func (g *guardedWriter) SetReadDeadline(t time.Time) error {
	return g.control(func(rc *http.ResponseController) error { return rc.SetReadDeadline(t) })
}

func (g *guardedWriter) SetWriteDeadline(t time.Time) error {
	return g.control(func(rc *http.ResponseController) error { return rc.SetWriteDeadline(t) })
}

func (g *guardedWriter) EnableFullDuplex() error {
	return g.control(func(rc *http.ResponseController) error { return rc.EnableFullDuplex() })
}

// control runs a connection setting unless the request has timed out: a
// late deadline could otherwise hit the connection's next request.
func (g *guardedWriter) control(fn func(*http.ResponseController) error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.timedOut {
		return http.ErrHandlerTimeout
	}
	return fn(http.NewResponseController(g.w))
}

// start puts the handler's headers in place before the response begins.
// g.mu is held.
func (g *guardedWriter) start() {
	if !g.wroteHeader {
		g.syncHeader()
		g.wroteHeader = true
	}
}

// syncHeader makes the real header map equal to the handler's copy, so
// deletions count as well as additions. g.mu is held.
func (g *guardedWriter) syncHeader() {
	dst := g.w.Header()
	for k := range dst {
		if _, ok := g.header[k]; !ok {
			delete(dst, k)
		}
	}
	for k, v := range g.header {
		dst[k] = v
	}
}

// finish runs on the serving goroutine once the handler has returned in
// time: headers set without a write, and trailers set after one, still
// reach the client.
func (g *guardedWriter) finish() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.hijacked && !g.timedOut {
		g.syncHeader()
	}
}

// timeoutUnlessStarted answers the request with err, and fails every
// later write of the handler, unless the handler has begun its response;
// then it changes nothing and reports false. A lock held at that moment is
// a write in progress (or stuck), which counts as begun: waiting for the
// lock could be waiting forever.
func (g *guardedWriter) timeoutUnlessStarted(err *apierrors.StatusError) bool {
	if !g.mu.TryLock() {
		return false
	}
	defer g.mu.Unlock()
	if g.wroteHeader {
		return false
	}
	g.timedOut = true
	if !g.hijacked {
		status.Write(g.w, err)
	}
	return true
}

// timeout answers the request with err unless the handler has by now
// started the response. Then the only honest thing left is to break the
// connection (HTTP/1) or reset the stream (HTTP/2), which net/http does,
// without logging, for http.ErrAbortHandler.
func (g *guardedWriter) timeout(err *apierrors.StatusError) {
	g.lockCuttingStuckWrite()
	g.timedOut = true
	started, hijacked := g.wroteHeader, g.hijacked
	if !started && !hijacked {
		status.Write(g.w, err)
	}
	g.mu.Unlock()
	if started && !hijacked {
		panic(http.ErrAbortHandler)
	}
}

// stuckWrite is how long the lock may stay taken at the deadline before
// the handler is taken to be stuck in a write.
const stuckWrite = 100 * time.Millisecond

// lockCuttingStuckWrite takes g.mu. A handler blocked in Write holds it
// for as long as the client reads nothing (or, on HTTP/2, grants no flow
// control window), which may be forever; a write deadline in the past
// fails that write (on HTTP/2 by resetting just this stream), so neither
// the handler nor its in-flight slot outlives the request's timeout.
func (g *guardedWriter) lockCuttingStuckWrite() {
	if g.mu.TryLock() {
		return
	}
	locked := make(chan struct{})
	go func() {
		g.mu.Lock()
		close(locked)
	}()
	select {
	case <-locked:
	case <-time.After(stuckWrite):
		_ = http.NewResponseController(g.w).SetWriteDeadline(time.Now())
		<-locked
	}
}

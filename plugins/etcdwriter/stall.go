package etcdwriter

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// watchStallTimeout is how long a watch's write may wait on a client that
// reads nothing before the watch is dropped (a variable for tests).
var watchStallTimeout = 30 * time.Second

// stallGuard drops a watch whose client has stopped reading. Its handler
// would otherwise wait in a write forever, on a full TCP buffer or an
// HTTP/2 window of zero, holding the watch and the events queued for it.
// A write deadline per write would cost HTTP/2 a message to the
// connection's goroutine each time, and an idle watch must not be cut, so
// the writes are only stamped, and a timer that fires every half timeout
// cuts one that has been waiting for the whole of it.
type stallGuard struct {
	rc      *http.ResponseController
	timeout time.Duration
	since   atomic.Int64 // unix ns the write in progress began; 0 between writes
	cut     atomic.Bool

	mu      sync.Mutex // orders the timer's cut before stop returns
	stopped bool
	timer   *time.Timer
}

func newStallGuard(rc *http.ResponseController, timeout time.Duration) *stallGuard {
	g := &stallGuard{rc: rc, timeout: timeout}
	g.mu.Lock() // check waits for the timer to be set
	defer g.mu.Unlock()
	g.timer = time.AfterFunc(timeout/2, g.check)
	return g
}

// begin and end bracket a write (and its flush).
func (g *stallGuard) begin() { g.since.Store(time.Now().UnixNano()) }
func (g *stallGuard) end()   { g.since.Store(0) }

// stalled reports whether the guard cut the watch.
func (g *stallGuard) stalled() bool { return g.cut.Load() }

func (g *stallGuard) check() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return
	}
	if s := g.since.Load(); s != 0 && time.Since(time.Unix(0, s)) >= g.timeout {
		// A deadline in the past fails the pending write (HTTP/1.1) or
		// resets the stream (HTTP/2); the handler then returns.
		g.cut.Store(true)
		_ = g.rc.SetWriteDeadline(time.Now().Add(-time.Second))
		return
	}
	g.timer.Reset(g.timeout / 2)
}

// stop ends the guard; the handler calls it before it returns, after which
// the response controller is not touched.
func (g *stallGuard) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopped = true
	g.timer.Stop()
}

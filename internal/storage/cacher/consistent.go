package cacher

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// revisions coalesces the "what is etcd's current revision" requests that
// consistent reads from the cache make. A read may share a request only if
// that request was sent after the read arrived: it then answers with a
// revision at least as new as any write the reader could have seen
// acknowledged, which is what makes the read linearizable. So while one
// request is in flight, arriving readers queue for the next one, and at
// most two are outstanding whatever the concurrency: at 64 concurrent gets
// one etcd round trip serves up to 64 reads instead of each costing one.
type revisions struct {
	fetch func(context.Context) (int64, error)

	mu       sync.Mutex
	inflight bool
	next     *revCall // starts when the in-flight one ends
}

type revCall struct {
	done chan struct{}
	rev  int64
	err  error
}

// current returns etcd's revision as read by a request sent after the
// call began.
func (r *revisions) current(ctx context.Context) (int64, error) {
	r.mu.Lock()
	var c *revCall
	if !r.inflight {
		r.inflight = true
		c = &revCall{done: make(chan struct{})}
		go r.run(c)
	} else {
		if r.next == nil {
			r.next = &revCall{done: make(chan struct{})}
		}
		c = r.next
	}
	r.mu.Unlock()
	select {
	case <-c.done:
		return c.rev, c.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// revisionTimeout bounds a shared revision request, which carries no
// reader's deadline: a stuck one would hold every later reader back.
var revisionTimeout = 5 * time.Second // a variable for tests

// run sends c's request, then the queued one if readers arrived meanwhile.
// The request does not carry any one reader's context: a reader that gives
// up must not fail the others sharing it.
func (r *revisions) run(c *revCall) {
	for c != nil {
		ctx, cancel := context.WithTimeout(context.Background(), revisionTimeout)
		c.rev, c.err = r.fetch(ctx)
		cancel()
		close(c.done)
		r.mu.Lock()
		c, r.next = r.next, nil
		if c == nil {
			r.inflight = false
		}
		r.mu.Unlock()
	}
}

// progress coalesces progress-notification requests the same way, by
// time: a reader that learned its target revision at t needs one request
// sent after t, and one sent by another reader after t serves it too.
type progress struct {
	request func(context.Context) error
	sent    atomic.Int64 // unix ns of the latest request's sending
}

// ask requests a progress notification unless one was sent after since.
func (p *progress) ask(ctx context.Context, since time.Time) {
	if p.sent.Load() >= since.UnixNano() {
		return
	}
	p.sent.Store(time.Now().UnixNano())
	_ = p.request(ctx)
}

package timeout

import (
	"time"
)

// workers run the handlers the stage starts, one request at a time each.
// A handler goroutine's stack grows to tens of kilobytes on a write (the
// field manager and the codecs recurse deeply); a fresh goroutine per
// request grew it from 8 KiB every time, copying it on each doubling. A
// worker that stays keeps its grown stack for the next request. Workers
// are started on demand and exit after workerIdle without work, so a
// burst leaves nothing behind.
type workers struct {
	work chan func()
}

// workerIdle is how long an idle worker waits for another request.
const workerIdle = 10 * time.Second

func newWorkers() *workers { return &workers{work: make(chan func())} }

// run runs f on an idle worker, or on a new one when none is idle; it
// never waits.
func (p *workers) run(f func()) {
	select {
	case p.work <- f:
	default:
		go p.loop(f)
	}
}

func (p *workers) loop(f func()) {
	f()
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		select {
		case f := <-p.work:
			f()
			idle.Reset(workerIdle)
		case <-idle.C:
			return
		}
	}
}

package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// errorSet counts failures and keeps the first few distinct messages.
type errorSet struct {
	n     atomic.Int64
	mu    sync.Mutex
	first []string
}

func (e *errorSet) add(err error) {
	e.n.Add(1)
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.first) >= 3 {
		return
	}
	msg := err.Error()
	for _, m := range e.first {
		if m == msg {
			return
		}
	}
	e.first = append(e.first, msg)
}

func (e *errorSet) count() int { return int(e.n.Load()) }

// runOps runs ops calls of op on conc workers and times each call. Each
// worker keeps its own samples, so timing takes no lock.
func runOps(ctx context.Context, conc, ops int, prog *progress, errs *errorSet, op func(ctx context.Context, worker, i int) error) ([]time.Duration, time.Duration) {
	conc = max(1, min(conc, ops))
	var next atomic.Int64
	samples := make([][]time.Duration, conc)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := make([]time.Duration, 0, ops/conc+1)
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= ops {
					break
				}
				t := time.Now()
				err := op(ctx, w, i)
				own = append(own, time.Since(t))
				if err != nil {
					errs.add(err)
				}
				prog.add(1)
			}
			samples[w] = own
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	for _, s := range samples {
		all = append(all, s...)
	}
	return all, elapsed
}

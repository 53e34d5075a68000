package bench

import (
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"
)

// progress draws a bar on a terminal while a phase runs. The workers only
// add to a counter; one goroutine redraws, so the bar costs the run
// nothing measurable.
type progress struct {
	w     io.Writer // nil: no bar
	done  atomic.Int64
	total int64
	label string
	stop  chan struct{}
	ended chan struct{}
}

// startProgress begins a bar for total steps. A bar appears only after the
// first second, so short runs print nothing.
func startProgress(w io.Writer, label string, total int) *progress {
	p := &progress{w: w, total: int64(total), label: label, stop: make(chan struct{}), ended: make(chan struct{})}
	if w == nil {
		close(p.ended)
		return p
	}
	go p.draw()
	return p
}

func (p *progress) add(n int) { p.done.Add(int64(n)) }

func (p *progress) draw() {
	defer close(p.ended)
	start := time.Now()
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	drawn := false
	for {
		select {
		case <-p.stop:
			if drawn {
				fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", 79))
			}
			return
		case <-t.C:
			if time.Since(start) < time.Second {
				continue
			}
			drawn = true
			fmt.Fprint(p.w, "\r"+bar(p.label, p.done.Load(), p.total, time.Since(start)))
		}
	}
}

func (p *progress) end() {
	if p.w != nil {
		close(p.stop)
	}
	<-p.ended
}

// bar renders one line of at most 79 columns.
func bar(label string, done, total int64, elapsed time.Duration) string {
	const width = 30
	frac := 0.0
	if total > 0 {
		frac = min(1, float64(done)/float64(total))
	}
	n := int(frac * width)
	return fmt.Sprintf("%-22.22s [%s%s] %3.0f%% %d/%d %4.0fs", label,
		strings.Repeat("=", n), strings.Repeat(" ", width-n), frac*100, done, total, elapsed.Seconds())
}

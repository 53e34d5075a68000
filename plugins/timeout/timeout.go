package timeout

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kpipe/kpipe/internal/api/status"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
)

// Kube's texts, from pkg/server/filters/timeout.go and
// pkg/endpoints/filters/request_deadline.go: clients match on them.
const (
	timeoutMessage      = "request did not complete within the allotted timeout"
	invalidTimeoutInURL = "invalid timeout specified in the request URL"
)

// Timeout is the stage instance.
type Timeout struct {
	max time.Duration
	log *zap.Logger
}

var (
	_ pipeline.Stage       = (*Timeout)(nil)
	_ pipeline.Provisioner = (*Timeout)(nil)
)

func newTimeout(c *Config) *Timeout {
	return &Timeout{max: c.RequestTimeout, log: zap.NewNop()}
}

// Provision takes the logger for what handlers do after their request
// timed out.
func (t *Timeout) Provision(env *pipeline.Env) error {
	t.log = env.Log
	return nil
}

// Middleware implements pipeline.Stage.
func (t *Timeout) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, ok := request.InfoFrom(r.Context())
		if !ok {
			status.Write(w, apierrors.NewInternalError(errors.New("no request info found for request during timeout")))
			return
		}
		// Watches and streams end when the client or the server says so.
		if info.IsLongRunning() {
			next.ServeHTTP(w, r)
			return
		}
		d, err := requestTimeout(r, t.max)
		if err != nil {
			status.Write(w, apierrors.NewBadRequest(err.Error()))
			return
		}
		t.serve(w, r, next, d)
	})
}

// finishGrace is how long a handler that has started its response may
// take to finish it after the deadline.
const finishGrace = 500 * time.Millisecond

// handlerWorkers run every timeout stage's handlers (workers.go).
var handlerWorkers = newWorkers()

// serve runs next in a goroutine of its own (a worker's) so the stage can
// answer at the deadline even if next ignores its context.
func (t *Timeout) serve(w http.ResponseWriter, r *http.Request, next http.Handler, d time.Duration) {
	ctx, cancel := context.WithTimeout(r.Context(), d)
	defer cancel()
	if r.ProtoMajor == 2 {
		// Delivering the answer is bounded too: a client that grants no
		// flow-control window would otherwise pin the stream and its
		// goroutine, in our handler or in net/http's final flush, for as
		// long as the connection lives. Past the deadline HTTP/2 resets
		// just this stream. (HTTP/1 keeps its connection's deadline
		// across requests, so it is left alone there: a stuck HTTP/1
		// client holds only its own connection.)
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(2 * d))
	}

	gw := newGuardedWriter(w)
	// A clone, so inner stages editing headers or the URL after we have
	// answered cannot race with the server finishing the request.
	inner := r.Clone(ctx)
	// Buffered: a handler finishing after the timeout must not block.
	done := make(chan any, 1)
	handlerWorkers.run(func() {
		defer func() {
			p := recover()
			if p != nil && p != http.ErrAbortHandler {
				// The stack is this goroutine's, lost once re-panicked.
				p = &innerPanic{value: p, stack: debug.Stack()}
			}
			done <- p
		}()
		next.ServeHTTP(gw, inner)
	})

	select {
	case p := <-done:
		finished(gw, p)
	case <-ctx.Done():
		// Both may be ready at once; a handler that has finished keeps its
		// answer.
		select {
		case p := <-done:
			finished(gw, p)
			return
		default:
		}
		// The stage answers with its 504 unless the handler has begun an
		// answer of its own (often the error its own deadline caused),
		// decided under the writer's lock so the two cannot interleave.
		// A started answer gets a moment to finish: resetting the stream
		// would turn a complete Status into a broken response.
		timedOut := apierrors.NewTimeoutError(timeoutMessage, 0)
		answered := gw.timeoutUnlessStarted(timedOut)
		if !answered {
			select {
			case p := <-done:
				finished(gw, p)
				return
			case <-time.After(finishGrace):
			}
		}
		log, start := t.log, time.Now()
		go func() {
			// Handlers that outlive their request are worth knowing about;
			// a panic there has no panic-recovery to answer it.
			p := <-done
			if p != nil && p != http.ErrAbortHandler {
				log.Error("handler panicked after its request timed out", zap.Any("panic", p),
					zap.String("method", r.Method), zap.String("uri", r.RequestURI))
				return
			}
			if ce := log.Check(zap.DebugLevel, "handler finished after its request timed out"); ce != nil {
				ce.Write(zap.String("method", r.Method), zap.String("uri", r.RequestURI),
					zap.Duration("late", time.Since(start)))
			}
		}()
		if !answered {
			gw.timeout(timedOut)
		}
	}
}

// finished completes a request whose handler returned or panicked in time.
func finished(gw *guardedWriter, p any) {
	if p != nil {
		// Re-panic on the serving goroutine, where panic-recovery (an
		// outer stage) and net/http can see it.
		panic(p)
	}
	gw.finish()
}

// requestTimeout is the request's deadline: the configured maximum, or a
// shorter positive ?timeout=, as kube's request-deadline filter decides.
func requestTimeout(r *http.Request, max time.Duration) (time.Duration, error) {
	// Most requests have no query: skip parsing it.
	if !strings.Contains(r.URL.RawQuery, "timeout") {
		return max, nil
	}
	v := r.URL.Query().Get("timeout")
	if v == "" {
		return max, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s - %s", invalidTimeoutInURL, err)
	}
	if d > 0 && d < max {
		return d, nil
	}
	return max, nil
}

// innerPanic carries a panic from the handler goroutine, with that
// goroutine's stack, so the log shows where it really happened.
type innerPanic struct {
	value any
	stack []byte
}

func (p *innerPanic) Error() string {
	return fmt.Sprintf("%v\n\nhandler goroutine stack:\n%s", p.value, p.stack)
}

func (p *innerPanic) Unwrap() error {
	err, _ := p.value.(error)
	return err
}

package panicrecovery

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kpipe/kpipe/internal/api/status"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// panicMessage is kube's answer to a panic: the panic value stays in the
// logs, where it cannot leak object contents or internals to the client.
const panicMessage = "This request caused apiserver to panic. Look in the logs for details."

// Recovery is the stage instance.
type Recovery struct {
	log    *zap.Logger
	panics prometheus.Counter // nil until Provision
}

var (
	_ pipeline.Stage       = (*Recovery)(nil)
	_ pipeline.Provisioner = (*Recovery)(nil)
)

func newRecovery() *Recovery { return &Recovery{log: zap.NewNop()} }

// Provision takes the logger and registers the panic counter.
func (p *Recovery) Provision(env *pipeline.Env) error {
	// The stack is added by hand below; a production logger would add a
	// second, identical one to every error entry.
	p.log = env.Log.WithOptions(zap.AddStacktrace(zapcore.FatalLevel))
	p.panics = pipeline.Register(env, prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "apiserver", Subsystem: "panic_recovery", Name: "panics_total",
		Help: "Panics in later stages that panic-recovery answered or aborted.",
	}))
	return nil
}

// Middleware implements pipeline.Stage.
func (p *Recovery) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &trackingWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			// net/http aborts a response silently with this value; it is a
			// signal, not a bug, so it goes on up untouched.
			if v == http.ErrAbortHandler {
				panic(v)
			}
			if p.panics != nil {
				p.panics.Inc()
			}
			p.log.Error("apiserver panic'd",
				zap.Any("panic", v),
				zap.String("method", r.Method),
				zap.String("uri", r.RequestURI),
				zap.Stack("stacktrace"))
			if tw.started.Load() {
				// Part of the response is on the wire: a Status now would be
				// glued onto it. Abort, so the client sees a broken response
				// rather than a complete-looking wrong one.
				panic(http.ErrAbortHandler)
			}
			status.Write(w, apierrors.NewInternalError(errors.New(panicMessage)))
		}()
		next.ServeHTTP(tw, r)
	})
}

// trackingWriter notes whether the response has started, so a panic after
// that is not answered with a second status line. It keeps Flush and Hijack
// reachable, and Unwrap for http.ResponseController.
type trackingWriter struct {
	http.ResponseWriter
	// started is atomic because the timeout stage may write from another
	// goroutine.
	started atomic.Bool
}

func (w *trackingWriter) WriteHeader(code int) {
	// 1xx responses other than 101 are not the final answer.
	if code >= 200 || code == http.StatusSwitchingProtocols {
		w.started.Store(true)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *trackingWriter) Write(b []byte) (int, error) {
	w.started.Store(true)
	return w.ResponseWriter.Write(b)
}

func (w *trackingWriter) Flush() {
	w.started.Store(true)
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *trackingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil {
		w.started.Store(true)
	}
	return conn, rw, err
}

func (w *trackingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

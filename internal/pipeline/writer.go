package pipeline

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
)

// recorder remembers the status and size of the response for metrics and
// logs. It keeps Flush and Hijack reachable (watch streams and upgrades
// need them) and exposes the original through Unwrap for
// http.ResponseController.
type recorder struct {
	http.ResponseWriter
	code  atomic.Int32
	bytes atomic.Int64
}

func (w *recorder) WriteHeader(code int) {
	// Informational codes are not the final answer.
	if code >= 200 {
		w.code.CompareAndSwap(0, int32(code))
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(b []byte) (int, error) {
	w.code.CompareAndSwap(0, http.StatusOK)
	n, err := w.ResponseWriter.Write(b)
	w.bytes.Add(int64(n))
	return n, err
}

func (w *recorder) Flush() {
	w.code.CompareAndSwap(0, http.StatusOK)
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("pipeline: the connection cannot be hijacked")
	}
	w.code.CompareAndSwap(0, http.StatusSwitchingProtocols)
	return h.Hijack()
}

func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// status is the code sent, 200 when the handler wrote nothing at all (as
// net/http sends).
func (w *recorder) status() int {
	if c := w.code.Load(); c != 0 {
		return int(c)
	}
	return http.StatusOK
}

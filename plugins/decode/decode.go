package decode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/api/status"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Decoder is the stage instance.
type Decoder struct {
	limit     int64
	resources *api.Registry
	prefix    string
}

// Provision implements pipeline.Provisioner.
func (d *Decoder) Provision(env *pipeline.Env) error {
	if env.Shared != nil {
		d.resources = env.Shared.Resources
		d.prefix = env.Shared.StoragePrefix
	}
	return nil
}

var _ pipeline.Stage = (*Decoder)(nil)

func newDecoder(c *Config) *Decoder { return &Decoder{limit: c.MaxRequestBodyBytes} }

// Middleware implements pipeline.Stage.
func (d *Decoder) Middleware(next http.Handler) http.Handler {
	limit := d.limit
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hasBody(r) {
			d.serveOperation(w, r, nil, next)
			return
		}
		// A declared length over the limit is refused before reading a byte.
		if r.ContentLength > limit {
			status.Write(w, tooLarge(limit))
			return
		}
		body, err := readLimited(r.Body, r.ContentLength, limit)
		if err != nil {
			var mbe *http.MaxBytesError
			switch {
			case errors.Is(err, errTooLarge), errors.As(err, &mbe):
				status.Write(w, tooLarge(limit))
			default:
				// Kube answers a failed body read with its error as a 500.
				status.Write(w, err)
			}
			return
		}
		// A shallow copy rather than editing the caller's request; later
		// stages read the buffered body as if it came off the wire.
		r2 := r.WithContext(r.Context())
		r2.Body = io.NopCloser(bytes.NewReader(body))
		r2.ContentLength = int64(len(body))
		r2.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		d.serveOperation(w, r2, body, next)
	})
}

// hasBody reports whether the request may carry a body kube reads: only
// the verbs whose handlers decode one.
func hasBody(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return false
	}
	return r.Body != nil && r.Body != http.NoBody
}

var errTooLarge = errors.New("request body over the limit")

// maxPrealloc bounds the memory a declared Content-Length reserves before
// the bytes arrive.
const maxPrealloc = 64 << 10

// readLimited reads all of body if it is at most limit bytes. It reads one
// byte more than the limit, as kube's limitedReadBody does, to tell "exactly
// the limit" from "over it" without trusting Content-Length.
func readLimited(body io.Reader, contentLength, limit int64) ([]byte, error) {
	n := limit
	if n < math.MaxInt64 {
		n++
	}
	lr := &io.LimitedReader{R: body, N: n}
	var buf bytes.Buffer
	if contentLength > 0 {
		// Size the buffer for the declared length (ReadFrom grows only when
		// less than MinRead bytes are free), but only up to a cap: a client
		// could declare megabytes and send nothing.
		buf.Grow(int(min(contentLength, maxPrealloc)) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(lr); err != nil {
		return nil, err
	}
	if lr.N <= 0 {
		return nil, errTooLarge
	}
	return buf.Bytes(), nil
}

// tooLarge is kube's answer, word for word.
func tooLarge(limit int64) error {
	return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit))
}

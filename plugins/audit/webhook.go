package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// The plugin label values of apiserver_audit_error_total, kube's names: a
// POST that failed after its retries is the webhook's error; an event
// refused because the buffer was full (or the backend closed) is the
// buffer's.
const (
	pluginLog      = "log"
	pluginWebhook  = "webhook"
	pluginBuffered = "buffered"
	pluginTruncate = "truncate"
)

// maxResponseBody is how much of the receiver's answer is read.
const maxResponseBody = 64 << 10

// webhook is the webhook backend: it POSTs audit.k8s.io/v1 EventLists to
// the receiver a kubeconfig names, as kube's, retrying any failure with
// kube's backoff (initialBackoff, factor 1.5, jitter 0.2, 5 tries). In
// batch mode events wait in a buffer and a goroutine sends them in
// batches, as kube's buffered backend.
type webhook struct {
	mode    string
	url     string
	client  *http.Client
	backoff wait.Backoff
	errors  *prometheus.CounterVec
	log     *zap.Logger

	// ctx is the sends' context: cancelled when Close gives up waiting.
	ctx    context.Context
	cancel context.CancelFunc

	// batch mode
	maxSize  int
	maxWait  time.Duration
	throttle flowcontrol.RateLimiter // nil: off
	mu       sync.RWMutex            // guards closed against buf's close
	closed   bool
	buf      chan json.RawMessage
	done     chan struct{} // the batching goroutine has sent everything
	sending  sync.WaitGroup
}

// newWebhook builds the backend and, in batch mode, starts its batching
// goroutine. clock is for the throttle; nil is the real one.
func newWebhook(c *WebhookConfig, errs *prometheus.CounterVec, log *zap.Logger, clock flowcontrol.Clock) (*webhook, error) {
	client, err := rest.HTTPClientFor(c.rest)
	if err != nil {
		return nil, fmt.Errorf("initializing audit webhook: %v", err)
	}
	u, _, err := rest.DefaultServerUrlFor(c.rest)
	if err != nil {
		return nil, fmt.Errorf("initializing audit webhook: %v", err)
	}
	w := &webhook{
		mode:   c.Mode,
		url:    u.String(),
		client: client,
		backoff: wait.Backoff{
			Duration: c.InitialBackoff,
			Factor:   1.5,
			Jitter:   0.2,
			Steps:    5,
		},
		errors:  errs,
		log:     log,
		maxSize: c.BatchMaxSize,
		maxWait: c.BatchMaxWait,
	}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	if c.Mode != ModeBatch {
		return w, nil
	}
	if c.BatchThrottleEnable {
		if clock == nil {
			w.throttle = flowcontrol.NewTokenBucketRateLimiter(float32(c.BatchThrottleQPS), c.BatchThrottleBurst)
		} else {
			w.throttle = flowcontrol.NewTokenBucketRateLimiterWithClock(float32(c.BatchThrottleQPS), c.BatchThrottleBurst, clock)
		}
	}
	w.buf = make(chan json.RawMessage, c.BatchBufferSize)
	w.done = make(chan struct{})
	go w.run()
	return w, nil
}

// process takes one event, encoded without its kind and apiVersion (as
// the items of kube's EventList). It reports false only in
// blocking-strict mode, when the event could not be sent.
func (w *webhook) process(item json.RawMessage) bool {
	if w.mode != ModeBatch {
		if err := w.send([]json.RawMessage{item}); err != nil {
			w.failed(pluginWebhook, err, 1)
			return w.mode != ModeBlockingStrict
		}
		return true
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		w.failed(pluginBuffered, errors.New("audit backend shut down"), 1)
		return true
	}
	select {
	case w.buf <- item:
	default:
		w.failed(pluginBuffered, errors.New("audit buffer queue blocked"), 1)
	}
	return true
}

func (w *webhook) failed(plugin string, err error, events int) {
	w.errors.WithLabelValues(plugin).Add(float64(events))
	w.log.Error("error in audit plugin", zap.String("plugin", plugin), zap.Int("events", events), zap.Error(err))
}

// run batches the buffer until Close closes it and it is empty: a batch
// goes when it holds maxSize events or maxWait has passed since the last
// one went, whichever is first.
func (w *webhook) run() {
	defer close(w.done)
	var timer *time.Timer
	var timeout <-chan time.Time
	if w.maxSize > 1 {
		timer = time.NewTimer(w.maxWait)
		defer timer.Stop()
		timeout = timer.C
	}
	for {
		if timer != nil {
			timer.Reset(w.maxWait)
		}
		batch, open := w.collect(timeout)
		w.dispatch(batch)
		if !open {
			return
		}
	}
}

// collect reads up to maxSize events, until the timer fires or the
// buffer is closed and empty (open is then false).
func (w *webhook) collect(timeout <-chan time.Time) (batch []json.RawMessage, open bool) {
	for len(batch) < w.maxSize {
		select {
		case ev, ok := <-w.buf:
			if !ok {
				return batch, false
			}
			batch = append(batch, ev)
		case <-timeout:
			return batch, true
		}
	}
	return batch, true
}

// dispatch sends a batch on its own goroutine, once the throttle lets it.
func (w *webhook) dispatch(batch []json.RawMessage) {
	if len(batch) == 0 {
		return
	}
	if w.throttle != nil && w.ctx.Err() == nil {
		w.throttle.Accept()
	}
	w.sending.Add(1)
	go func() {
		defer w.sending.Done()
		if err := w.send(batch); err != nil {
			w.failed(pluginWebhook, err, len(batch))
		}
	}()
}

// send POSTs one EventList, retrying any failure with the backoff.
func (w *webhook) send(items []json.RawMessage) error {
	body, err := encodeEventList(items)
	if err != nil {
		return err
	}
	var last error
	err = wait.ExponentialBackoffWithContext(w.ctx, w.backoff, func(ctx context.Context) (bool, error) {
		last = w.post(ctx, body)
		return last == nil, nil
	})
	switch {
	case last != nil:
		return last
	case err != nil:
		return fmt.Errorf("webhook call failed: %v", err)
	}
	return nil
}

func (w *webhook) post(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, */*")
	resp, err := w.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	if resp.StatusCode < http.StatusOK || resp.StatusCode > http.StatusPartialContent {
		return fmt.Errorf("the server responded with status %d: %s", resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	return nil
}

// encodeEventList is kube's audit.k8s.io/v1 EventList of the items.
func encodeEventList(items []json.RawMessage) ([]byte, error) {
	return json.Marshal(struct {
		Kind       string            `json:"kind"`
		APIVersion string            `json:"apiVersion"`
		Metadata   struct{}          `json:"metadata"`
		Items      []json.RawMessage `json:"items"`
	}{Kind: "EventList", APIVersion: GroupVersion, Items: items})
}

// Close stops taking events and sends what the buffer holds, as kube's
// buffered backend at shutdown, waiting at most bound: after it the
// retries and POSTs still running are cancelled (their events count as
// errors) and Close returns.
func (w *webhook) Close(bound time.Duration) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	if w.buf != nil {
		close(w.buf)
	}
	w.mu.Unlock()
	giveUp := time.AfterFunc(bound, w.cancel)
	defer giveUp.Stop()
	if w.done != nil {
		<-w.done
	}
	w.sending.Wait()
	w.cancel()
	w.client.CloseIdleConnections()
}

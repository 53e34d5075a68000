package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// watchDrain bounds the wait for the last events after the last write.
const watchDrain = time.Minute

// watch opens Watchers watches on the run's ConfigMaps from the current
// resourceVersion, writes ops ConfigMaps at Concurrency, and measures
// for every watcher and every write the lag from the write's
// acknowledgement to the event's receipt. An event received before the
// acknowledgement counts as no lag. Every watcher must see every write,
// in resourceVersion order; a missing or out-of-order event is an error.
func (r *runner) watch(ctx context.Context, run string) (Result, error) {
	writes, ns := r.o.ops("watch"), r.o.Namespace
	res := r.result("watch", r.o.Concurrency, writes)
	res.Watchers, res.Writes, res.Ops = r.o.Watchers, writes, r.o.Watchers*writes
	sel := url.QueryEscape(runLabel + "=" + run)
	b, err := r.c.do(ctx, "GET", configMapsPath(ns)+"?limit=1&labelSelector="+sel, nil, http.StatusOK)
	if err != nil {
		return res, err
	}
	var l listMeta
	if err := json.Unmarshal(b, &l); err != nil {
		return res, err
	}
	prefix := "w-" + run + "-"
	wpath := configMapsPath(ns) + "?watch=1&labelSelector=" + sel + "&resourceVersion=" + url.QueryEscape(l.Metadata.ResourceVersion)

	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := &errorSet{}
	ws := make([]*watcher, r.o.Watchers)
	var readers sync.WaitGroup
	opened := make(chan error, len(ws))
	r.o.logf("watch: opening %d watchers", len(ws))
	for i := range ws {
		ws[i] = &watcher{prefix: prefix, recv: make([]int64, writes), done: make(chan struct{})}
		readers.Add(1)
		go func() {
			defer readers.Done()
			ws[i].run(wctx, r.c, wpath, opened, errs)
		}()
	}
	// Watches start from a fixed resourceVersion, so none can miss a
	// write; waiting for every stream to open keeps the set-up out of
	// the lag.
	for range ws {
		if err := <-opened; err != nil {
			return res, fmt.Errorf("opening a watch: %w", err)
		}
	}

	acks := make([]int64, writes)
	var ackMu sync.Mutex
	body := func(i int) []byte {
		return configMap(ns, prefix+strconv.Itoa(i), run, "", r.payload, "")
	}
	path := configMapsPath(ns)
	r.o.logf("watch: %d writes at concurrency %d", writes, res.Concurrency)
	prog := startProgress(r.o.Progress, "watch", writes)
	start := time.Now()
	runOps(ctx, res.Concurrency, writes, prog, errs, func(ctx context.Context, _, i int) error {
		if _, err := r.c.do(ctx, "POST", path, body(i), http.StatusCreated); err != nil {
			return err
		}
		t := time.Now().UnixNano()
		ackMu.Lock()
		acks[i] = t
		ackMu.Unlock()
		return nil
	})
	prog.end()
	// One deadline for all: a context's Done stays closed, where a
	// timer's channel fires once and left the next watcher waiting for
	// ever.
	drain, stopDrain := context.WithTimeout(ctx, watchDrain)
	defer stopDrain()
	for _, w := range ws {
		select {
		case <-w.done:
		case <-drain.Done():
		}
	}
	cancel()
	readers.Wait()

	var lags []time.Duration
	var last, lastAck int64
	for _, t := range acks {
		lastAck = max(lastAck, t)
	}
	if lastAck > 0 {
		res.WriteSeconds = time.Duration(lastAck - start.UnixNano()).Seconds()
	}
	for _, w := range ws {
		res.OutOfOrder += w.outOfOrder
		for i, t := range w.recv {
			if t == 0 {
				res.Missed++
				continue
			}
			last = max(last, t)
			if acks[i] == 0 {
				continue // the write failed on the client's side
			}
			lags = append(lags, time.Duration(max(0, t-acks[i])))
		}
	}
	// Failed writes and broken streams count once each, beside every
	// missing and every out-of-order event.
	res.Errors = min(res.Ops, res.Missed+res.OutOfOrder+errs.count())
	if res.Missed > 0 {
		errs.add(fmt.Errorf("%d of %d events never arrived", res.Missed, res.Ops))
	}
	if res.OutOfOrder > 0 {
		errs.add(fmt.Errorf("%d events out of resourceVersion order", res.OutOfOrder))
	}
	res.FirstErrors = errs.first
	elapsed := time.Since(start)
	if last > 0 {
		elapsed = time.Duration(last - start.UnixNano())
	}
	res.summarize(lags, elapsed)
	return res, ctx.Err()
}

// watcher is one watch stream and what it received.
type watcher struct {
	prefix string
	// recv[i] is when write i's event arrived (UnixNano), 0 if never.
	recv       []int64
	got        int
	lastRV     uint64
	outOfOrder int
	done       chan struct{} // closed when every write has arrived
}

var (
	nameKey = []byte(`"name":"`)
	rvKey   = []byte(`"resourceVersion":"`)
	metaKey = []byte(`"metadata":{`)
)

func (w *watcher) run(ctx context.Context, c *client, path string, opened chan<- error, errs *errorSet) {
	req, err := http.NewRequestWithContext(ctx, "GET", c.base+path, nil)
	if err != nil {
		opened <- err
		return
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc().Do(req)
	if err != nil {
		opened <- err
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		opened <- statusError("GET", path, resp.StatusCode, b)
		return
	}
	opened <- nil
	events := newObjectStream(resp.Body)
	for {
		ev, err := events.next()
		if err != nil {
			if ctx.Err() == nil && w.got < len(w.recv) {
				if errors.Is(err, io.EOF) {
					err = errors.New("the server ended the watch early")
				}
				errs.add(fmt.Errorf("watch: %w", err))
			}
			return
		}
		now := time.Now().UnixNano()
		typ, obj, err := splitEvent(ev)
		if err != nil {
			errs.add(fmt.Errorf("watch: %w", err))
			continue
		}
		switch typ {
		case "ADDED":
		case "BOOKMARK":
			continue
		default:
			errs.add(fmt.Errorf("watch: unexpected %s event", typ))
			continue
		}
		w.receive(obj, now, errs)
	}
}

// receive records one ADDED event. The two fields are found by scanning,
// not decoding: 200 watchers decoding every object would take the CPU
// the server under test needs.
func (w *watcher) receive(obj []byte, now int64, errs *errorSet) {
	meta := bytes.Index(obj, metaKey)
	name, rv := field(obj[max(meta, 0):], nameKey), field(obj[max(meta, 0):], rvKey)
	rest, ok := bytes.CutPrefix(name, []byte(w.prefix))
	i, err := strconv.Atoi(string(rest))
	if !ok || err != nil || i < 0 || i >= len(w.recv) {
		errs.add(fmt.Errorf("watch: event for unexpected object %q", name))
		return
	}
	n, err := strconv.ParseUint(string(rv), 10, 64)
	if err != nil {
		errs.add(fmt.Errorf("watch: resourceVersion %q: %v", rv, err))
		return
	}
	if n <= w.lastRV || w.recv[i] != 0 {
		w.outOfOrder++
	}
	w.lastRV = max(w.lastRV, n)
	if w.recv[i] == 0 {
		w.recv[i] = now
		w.got++
		if w.got == len(w.recv) {
			close(w.done)
		}
	}
}

// field returns the string value after key, unescaped JSON never being
// needed for names and resourceVersions.
func field(obj, key []byte) []byte {
	i := bytes.Index(obj, key)
	if i < 0 {
		return nil
	}
	v := obj[i+len(key):]
	j := bytes.IndexByte(v, '"')
	if j < 0 {
		return nil
	}
	return v[:j]
}

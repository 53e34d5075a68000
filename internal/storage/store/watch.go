package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// Watch implements Interface.
//
// The watch starts after opts.ResourceVersion (exclusive). With "" or "0"
// (and SendInitialEvents unset), or with SendInitialEvents true, it first
// sends the current state as ADDED events read at one revision, then
// watches from there. SendInitialEvents false with "" or "0" starts at the
// current revision with no initial events. A compacted revision ends the
// watch with an ERROR event carrying a 410 Expired Status.
//
// Events go through a buffered channel. A consumer that leaves it full for
// longer than the send timeout (WithWatchSendTimeout) gets the channel
// closed, as kube's watch cache closes unresponsive watchers: it must
// re-watch from the last resourceVersion it saw. This bounds the memory a
// stalled consumer pins and the time it holds an etcd watch.
//
// Stop, or cancelling ctx, ends the watch; Stop returns once its goroutine
// has exited and the result channel is closed.
func (s *Store) Watch(ctx context.Context, key string, opts ListOptions) (watch.Interface, error) {
	k, err := s.checkKey(key, opts.Recursive)
	if err != nil {
		return nil, err
	}
	rv, err := parseRV(opts.ResourceVersion)
	if err != nil {
		var ie invalidRVError
		if errors.As(err, &ie) {
			name := ""
			if !opts.Recursive {
				name = nameOf(k)
			}
			return nil, apierrors.NewInvalid(schema.GroupKind{Group: s.gr.Group, Kind: s.gr.Resource}, name, ie.fieldErrors())
		}
		return nil, err
	}
	initial := (opts.SendInitialEvents == nil && rv == 0) || (opts.SendInitialEvents != nil && *opts.SendInitialEvents)
	if rv == 0 && !initial {
		if rv, err = s.CurrentRevision(ctx); err != nil {
			return nil, err
		}
	}
	// Require a leader so that a partitioned etcd member ends the watch
	// rather than leaving it silently stale.
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	w := &watcher{
		s:            s,
		ctx:          wctx,
		cancel:       cancel,
		key:          k,
		recursive:    opts.Recursive,
		pred:         opts.Predicate,
		bookmarks:    opts.ProgressNotify,
		initial:      initial,
		endBookmark:  opts.SendInitialEvents != nil && *opts.SendInitialEvents && opts.ProgressNotify,
		startRev:     rv,
		result:       make(chan watch.Event, s.watchBuffer),
		done:         make(chan struct{}),
		sendDeadline: s.watchSendTimeout,
	}
	s.handoff.watchers.Add(1)
	go w.run()
	return w, nil
}

type watcher struct {
	s            *Store
	ctx          context.Context
	cancel       context.CancelFunc
	key          string
	recursive    bool
	pred         Predicate
	bookmarks    bool
	initial      bool
	endBookmark  bool
	startRev     int64
	result       chan watch.Event
	done         chan struct{}
	sendDeadline time.Duration
	stopOnce     sync.Once
}

// errStopped ends run without an ERROR event: the consumer went away.
var errStopped = errors.New("watch stopped")

func (w *watcher) Stop() {
	w.stopOnce.Do(w.cancel)
	<-w.done
}

func (w *watcher) ResultChan() <-chan watch.Event { return w.result }

func (w *watcher) run() {
	defer close(w.done)
	defer w.s.handoff.watchers.Add(-1)
	defer close(w.result)
	defer w.cancel()
	if err := w.watch(); err != nil && !errors.Is(err, errStopped) {
		w.sendError(err)
	}
}

func (w *watcher) watch() error {
	rev := w.startRev
	if w.initial {
		if rev > 0 {
			cur, err := w.s.CurrentRevision(w.ctx)
			if err != nil {
				return err
			}
			if rev > cur {
				return tooLargeRV(rev, cur, 1)
			}
		}
		var err error
		if rev, err = w.sync(); err != nil {
			return err
		}
		if w.endBookmark {
			if err := w.sendBookmark(rev, true); err != nil {
				return err
			}
		}
	}
	opts := []clientv3.OpOption{clientv3.WithRev(rev + 1), clientv3.WithPrevKV()}
	if w.recursive {
		opts = append(opts, clientv3.WithPrefix())
	}
	if w.bookmarks {
		opts = append(opts, clientv3.WithProgressNotify())
	}
	events := w.s.client.Watch(w.ctx, w.key, opts...)
	// With bookmarks, the watch asks for one every interval. etcd answers
	// a progress request only once every watch of the stream has reached
	// its start, so on a quiet store (no write since a watch started at
	// the current revision) no answer comes; the watch then sends a
	// bookmark at the revision it has delivered up to, which is as safe to
	// restart from.
	var tick <-chan time.Time
	var interval time.Duration
	if w.bookmarks && w.s.progress != nil {
		// Registered once the etcd watch exists, so the periodic
		// progress requests find its stream.
		defer w.s.progress.add()()
		interval = w.s.progress.interval
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	lastBookmark := time.Now()
	// last is the revision the watch has delivered up to; a bookmark
	// never goes back before it.
	last := rev
	for {
		var resp clientv3.WatchResponse
		var ok bool
		select {
		case resp, ok = <-events:
		case <-tick:
			if time.Since(lastBookmark) >= interval {
				lastBookmark = time.Now()
				if err := w.sendBookmark(last, false); err != nil {
					return err
				}
			}
			continue
		}
		if !ok {
			break
		}
		if err := resp.Err(); err != nil {
			return err
		}
		if resp.IsProgressNotify() {
			// Progress requested by another watch of the same client
			// reaches this one too; only send it when bookmarks were asked.
			// etcd's answer to a request goes to every watch of the
			// stream, even one that started after the revision it reports.
			if w.bookmarks && resp.Header.Revision >= last {
				last = resp.Header.Revision
				lastBookmark = time.Now()
				if err := w.sendBookmark(resp.Header.Revision, false); err != nil {
					return err
				}
			}
			continue
		}
		for _, e := range resp.Events {
			last = e.Kv.ModRevision
			ev, err := w.transform(e)
			if err != nil {
				return err
			}
			if ev != nil {
				if err := w.send(*ev); err != nil {
					return err
				}
			}
		}
	}
	// The etcd watch channel closes when ctx ends or the client closes.
	return errStopped
}

// sync sends the current state as ADDED events, read in pages pinned to the
// revision of the first, and returns that revision.
func (w *watcher) sync() (int64, error) {
	var rev int64
	start := w.key
	for {
		resp, err := w.s.readRange(w.ctx, start, w.key, w.recursive, rev, maxListChunk)
		if err != nil {
			return 0, w.s.listError(w.ctx, err, rev, false, start, w.key)
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		for _, kv := range resp.Kvs {
			obj := w.s.newFunc()
			if err := w.s.decodeStored(w.ctx, kv.Value, string(kv.Key), obj, kv.ModRevision); err != nil {
				return 0, err
			}
			if w.matches(obj) {
				if err := w.send(watch.Event{Type: watch.Added, Object: obj}); err != nil {
					return 0, err
				}
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return rev, nil
		}
		start = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

func (w *watcher) matches(obj runtime.Object) bool {
	ok, err := w.pred.Matches(obj)
	return err == nil && ok
}

// transform turns an etcd event into a watch event with kube's selector
// transitions: an object that starts matching is ADDED, one that stops is
// DELETED (with its previous state), and nil means nothing to send. Objects
// carry the event's revision, deleted ones included.
func (w *watcher) transform(e *clientv3.Event) (*watch.Event, error) {
	created := e.IsCreate()
	deleted := e.Type == clientv3.EventTypeDelete
	if !created && e.PrevKv == nil {
		return nil, fmt.Errorf("etcd event received with PrevKv=nil (key=%q, modRevision=%d, type=%s)", e.Kv.Key, e.Kv.ModRevision, e.Type)
	}
	rev := e.Kv.ModRevision
	var cur, old runtime.Object
	if !deleted {
		// What a write of this store handed over needs no decode.
		if cur = w.s.handoff.take(e.Kv.Key, e.Kv.Value); cur != nil {
			if err := setRV(cur, rev); err != nil {
				return nil, err
			}
		}
	}
	if !deleted && cur == nil {
		cur = w.s.newFunc()
		if err := w.s.decodeStored(w.ctx, e.Kv.Value, string(e.Kv.Key), cur, rev); err != nil {
			return nil, err
		}
	}
	if e.PrevKv != nil && (deleted || !w.pred.Empty()) {
		old = w.s.newFunc()
		if err := w.s.decodeStored(w.ctx, e.PrevKv.Value, string(e.PrevKv.Key), old, rev); err != nil {
			return nil, err
		}
	}
	switch {
	case deleted:
		if !w.matches(old) {
			return nil, nil
		}
		return &watch.Event{Type: watch.Deleted, Object: old}, nil
	case created:
		if !w.matches(cur) {
			return nil, nil
		}
		return &watch.Event{Type: watch.Added, Object: cur}, nil
	case w.pred.Empty():
		return &watch.Event{Type: watch.Modified, Object: cur}, nil
	}
	curOK, oldOK := w.matches(cur), w.matches(old)
	switch {
	case curOK && oldOK:
		return &watch.Event{Type: watch.Modified, Object: cur}, nil
	case curOK:
		return &watch.Event{Type: watch.Added, Object: cur}, nil
	case oldOK:
		return &watch.Event{Type: watch.Deleted, Object: old}, nil
	}
	return nil, nil
}

// sendBookmark sends an object of the stored type carrying only the
// revision; the one ending the initial events is annotated as kube does.
func (w *watcher) sendBookmark(rev int64, initialEnd bool) error {
	obj := w.s.newFunc()
	if err := setRV(obj, rev); err != nil {
		return err
	}
	if initialEnd {
		m, err := meta.Accessor(obj)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	return w.send(watch.Event{Type: watch.Bookmark, Object: obj})
}

// send delivers ev, giving up when the watch stops or the consumer has left
// the buffer full for the send timeout.
func (w *watcher) send(ev watch.Event) error {
	select {
	case w.result <- ev:
		return nil
	case <-w.ctx.Done():
		return errStopped
	default:
	}
	t := time.NewTimer(w.sendDeadline)
	defer t.Stop()
	select {
	case w.result <- ev:
		return nil
	case <-w.ctx.Done():
		return errStopped
	case <-t.C:
		w.s.log.Warn("closing watch: consumer did not read events",
			zap.String("resource", w.s.gr.String()), zap.String("key", w.key), zap.Duration("waited", w.sendDeadline))
		return errStopped
	}
}

// sendError ends the watch with an ERROR event holding a Status, as kube
// sends it: 410 Expired for a compacted revision, the API error when there
// is one, 500 otherwise. Nothing is sent once the consumer has gone.
func (w *watcher) sendError(err error) {
	if w.ctx.Err() != nil || isCancel(err) {
		return
	}
	var apiErr apierrors.APIStatus
	switch {
	case errors.Is(err, rpctypes.ErrCompacted):
		apiErr = apierrors.NewResourceExpired(watchExpiredMsg)
	case errors.As(err, &apiErr):
	default:
		apiErr = apierrors.NewInternalError(err)
	}
	st := apiErr.Status()
	_ = w.send(watch.Event{Type: watch.Error, Object: &st})
}

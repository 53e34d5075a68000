package store

import (
	"context"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// DefaultBookmarkInterval is how often a watch that allows bookmarks gets
// one when nothing else happens: about a minute, as kube's watch cache
// sends them.
const DefaultBookmarkInterval = time.Minute

// ProgressRequester asks etcd for a progress notification every interval
// while at least one watch with bookmarks is open. etcd answers on the
// client's shared watch stream, once every watch on it has caught up with
// the revision it reports, and each watch with bookmarks turns the answer
// into a BOOKMARK at that revision. One request serves every watch of the
// client, so the stores sharing a client share one requester.
type ProgressRequester struct {
	client   *clientv3.Client
	interval time.Duration
	log      *zap.Logger

	mu       sync.Mutex
	watchers int
	stop     chan struct{}
}

// NewProgressRequester returns a requester for client's watches; an
// interval <= 0 means DefaultBookmarkInterval.
func NewProgressRequester(client *clientv3.Client, interval time.Duration, log *zap.Logger) *ProgressRequester {
	if interval <= 0 {
		interval = DefaultBookmarkInterval
	}
	if log == nil {
		log = zap.NewNop()
	}
	return &ProgressRequester{client: client, interval: interval, log: log}
}

// BookmarkInterval is how often a watch with bookmarks gets one.
func (s *Store) BookmarkInterval() time.Duration {
	if s.progress != nil {
		return s.progress.interval
	}
	return DefaultBookmarkInterval
}

// WithProgressRequester makes the store's watches with bookmarks register
// with p, so they get a bookmark every p's interval.
func WithProgressRequester(p *ProgressRequester) Option {
	return func(s *Store) { s.progress = p }
}

// add registers a watch with bookmarks; the returned func unregisters it.
// The requests run only while some watch is registered.
func (p *ProgressRequester) add() (remove func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watchers++
	if p.watchers == 1 {
		p.stop = make(chan struct{})
		go p.run(p.stop)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.watchers--
			if p.watchers == 0 {
				close(p.stop)
			}
		})
	}
}

func (p *ProgressRequester) run(stop <-chan struct{}) {
	t := time.NewTicker(p.interval)
	defer t.Stop()
	// The watches' contexts carry the require-leader flag, which picks
	// their stream; the request must carry it too. It has no deadline:
	// were the stream gone, the client would open one bound to this
	// context, and a deadline would later close it under other watches.
	ctx := clientv3.WithRequireLeader(context.Background())
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if err := p.client.RequestProgress(ctx); err != nil {
			p.log.Debug("requesting watch progress", zap.Error(err))
		}
	}
}

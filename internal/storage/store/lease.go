package store

import (
	"context"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Lease reuse, after kube's leaseManager: a lease granted for ttl T lives
// T+reuse and serves every write asking for T during its first reuse
// seconds, so objects expire at most reuse late and a burst of Events costs
// one grant, not one per write. kube uses 5% of the ttl capped at 60s; the
// one-second floor here keeps short ttls from granting per write.
const (
	leaseReuseMax     = 60 * time.Second
	leaseReusePercent = 5
	leaseMaxAttached  = 1000
)

type leaseManager struct {
	client *clientv3.Client
	mu     sync.Mutex
	leases map[int64]*cachedLease // by ttl in seconds
}

type cachedLease struct {
	id       clientv3.LeaseID
	reuseEnd time.Time
	attached int
}

func newLeaseManager(c *clientv3.Client) *leaseManager {
	return &leaseManager{client: c, leases: map[int64]*cachedLease{}}
}

// get returns a lease that expires no sooner than ttl from now.
func (l *leaseManager) get(ctx context.Context, ttl time.Duration) (clientv3.LeaseID, error) {
	secs := int64((ttl + time.Second - 1) / time.Second)
	reuse := time.Duration(secs) * time.Second * leaseReusePercent / 100
	reuse = min(max(reuse, time.Second), leaseReuseMax)

	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if c := l.leases[secs]; c != nil && now.Before(c.reuseEnd) && c.attached < leaseMaxAttached {
		c.attached++
		return c.id, nil
	}
	// Drop leases past their reuse window so the map stays as small as the
	// set of ttls in use.
	for k, c := range l.leases {
		if !now.Before(c.reuseEnd) {
			delete(l.leases, k)
		}
	}
	resp, err := l.client.Grant(ctx, secs+int64(reuse/time.Second))
	if err != nil {
		return 0, err
	}
	l.leases[secs] = &cachedLease{id: resp.ID, reuseEnd: now.Add(reuse), attached: 1}
	return resp.ID, nil
}

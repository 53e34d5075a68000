// Package servicealloc hands out Service cluster IPs and node ports from
// the configured ranges, as kube-apiserver's bitmap allocators do: each
// range is one RangeAllocation object in etcd, changed only by
// compare-and-swap, so replicas sharing the etcd never hand out one value
// twice.
package servicealloc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	mbits "math/bits"
	"math/rand/v2"
	"sync"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
)

// errFull is kube's allocator message for an exhausted range.
var errFull = errors.New("range is full")

// bitmap is one allocation bitmap kept in etcd under key. Bit i set means
// offset i is taken, in kube's layout (big.Int bytes, big-endian).
type bitmap struct {
	client *clientv3.Client
	key    string
	spec   string // the range as kube writes it: "10.96.0.0/12", "30000-32767"
	size   int

	// mu serialises this process's writes, so its own creates do not
	// race each other; other replicas are kept out by the revision check.
	mu   sync.Mutex
	bits *big.Int
	rev  int64 // mod revision of bits; 0 when not read yet or missing
	read bool
}

func newBitmap(c *clientv3.Client, key, spec string, size int) *bitmap {
	return &bitmap{client: c, key: key, spec: spec, size: size, bits: new(big.Int)}
}

// update applies fn to a copy of the current bitmap and stores the result
// if fn changed it, retrying on a fresh copy when another writer got in
// first. fn may run several times.
func (b *bitmap) update(ctx context.Context, fn func(bits *big.Int) (changed bool, err error)) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	fresh := false // bits were read from etcd during this call
	if !b.read {
		if err := b.refresh(ctx); err != nil {
			return err
		}
		fresh = true
	}
	for {
		next := new(big.Int).Set(b.bits)
		changed, err := fn(next)
		if err != nil || !changed {
			// A decision that writes nothing (taken, already free) is only
			// sound on current bits: another replica may have moved them.
			if fresh {
				return err
			}
			if rerr := b.refresh(ctx); rerr != nil {
				return rerr
			}
			fresh = true
			continue
		}
		data, err := b.encode(next)
		if err != nil {
			return err
		}
		resp, err := b.client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(b.key), "=", b.rev)).
			Then(clientv3.OpPut(b.key, string(data))).
			Else(clientv3.OpGet(b.key)).
			Commit()
		if err != nil {
			return err
		}
		if resp.Succeeded {
			b.bits, b.rev = next, resp.Header.Revision
			return nil
		}
		// Someone else wrote: take their bitmap and try again.
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if err := b.load(kvs); err != nil {
			return err
		}
		fresh = true
	}
}

// revision reads the bitmap fresh and returns its mod revision.
func (b *bitmap) revision(ctx context.Context) (int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.refresh(ctx); err != nil {
		return 0, err
	}
	return b.rev, nil
}

// snapshot returns the stored bitmap, read fresh from etcd.
func (b *bitmap) snapshot(ctx context.Context) (*big.Int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.refresh(ctx); err != nil {
		return nil, err
	}
	return new(big.Int).Set(b.bits), nil
}

func (b *bitmap) refresh(ctx context.Context) error {
	resp, err := b.client.Get(ctx, b.key)
	if err != nil {
		return err
	}
	return b.load(resp.Kvs)
}

func (b *bitmap) load(kvs []*mvccpb.KeyValue) error {
	b.read = true
	if len(kvs) == 0 {
		b.bits, b.rev = new(big.Int), 0
		return nil
	}
	var ra corev1.RangeAllocation
	if err := json.Unmarshal(kvs[0].Value, &ra); err != nil {
		return fmt.Errorf("decoding %s: %w", b.key, err)
	}
	b.bits, b.rev = new(big.Int).SetBytes(ra.Data), kvs[0].ModRevision
	return nil
}

func (b *bitmap) encode(bits *big.Int) ([]byte, error) {
	ra := corev1.RangeAllocation{Range: b.spec, Data: bits.Bytes()}
	ra.Kind, ra.APIVersion = "RangeAllocation", "v1"
	return json.Marshal(&ra)
}

// allocate takes offset i, or reports it taken.
func (b *bitmap) allocate(ctx context.Context, i int) (taken bool, err error) {
	err = b.update(ctx, func(bits *big.Int) (bool, error) {
		taken = bits.Bit(i) == 1
		if taken {
			return false, nil
		}
		bits.SetBit(bits, i, 1)
		return true, nil
	})
	return taken, err
}

// allocateNext takes a free offset at or above lo. It draws at random from
// a window twice the count of what is in use, so replicas rarely reach for
// the same offset while the stored bitmap stays as short as the
// allocations (kube draws from the whole range: 128 KiB for a /12 from
// the first service on, rewritten on every create).
func (b *bitmap) allocateNext(ctx context.Context, lo int) (int, error) {
	got := -1
	err := b.update(ctx, func(bits *big.Int) (bool, error) {
		if lo >= b.size {
			return false, errFull
		}
		window := min(b.size, lo+max(64, 2*popcount(bits)))
		if i, ok := freeIn(bits, lo, window, rand.IntN(window-lo)); ok {
			bits.SetBit(bits, i, 1)
			got = i
			return true, nil
		}
		if i, ok := freeIn(bits, lo, b.size, 0); ok {
			bits.SetBit(bits, i, 1)
			got = i
			return true, nil
		}
		return false, errFull
	})
	return got, err
}

func popcount(b *big.Int) int {
	n := 0
	for _, w := range b.Bits() {
		n += mbits.OnesCount(uint(w))
	}
	return n
}

// freeIn finds a clear bit in [lo, hi), scanning from lo+start and wrapping.
func freeIn(bits *big.Int, lo, hi, start int) (int, bool) {
	n := hi - lo
	for k := range n {
		if i := lo + (start+k)%n; bits.Bit(i) == 0 {
			return i, true
		}
	}
	return 0, false
}

// release frees the offsets; freeing a free one is no error.
func (b *bitmap) release(ctx context.Context, offsets ...int) error {
	if len(offsets) == 0 {
		return nil
	}
	return b.update(ctx, func(bits *big.Int) (bool, error) {
		changed := false
		for _, i := range offsets {
			if bits.Bit(i) == 1 {
				bits.SetBit(bits, i, 0)
				changed = true
			}
		}
		return changed, nil
	})
}

package servicealloc

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// repairsBeforeFree is how many repair runs in a row must find a bit with
// no service before it is freed, as kube counts: a create holds its bits
// for a moment before its service is stored.
const repairsBeforeFree = 3

// Report is what one repair run found.
type Report struct {
	// Freed leaked bits; Restored bits of existing services that were
	// missing from the bitmap.
	Freed, Restored int
	// Duplicates name values held by more than one service.
	Duplicates []string
	// OutOfRange name services holding values outside the configured range.
	OutOfRange []string
}

// errMoved stops a repair whose bitmap changed after its snapshot: the
// service list may predate that change, so the next run tries again.
var errMoved = errors.New("the allocation bitmap changed during the repair; the next run retries")

// Repair reconciles both bitmaps with the services list returns. As in
// kube, the bitmaps are read before the services are listed and written
// only if they have not changed since, so a create or delete racing the
// repair is never undone by it.
func (a *Allocator) Repair(ctx context.Context, list func() ([]corev1.Service, error)) (ips, ports Report, err error) {
	ipRev, err := a.ips.revision(ctx)
	if err != nil {
		return ips, ports, err
	}
	portRev, err := a.nps.revision(ctx)
	if err != nil {
		return ips, ports, err
	}
	services, err := list()
	if err != nil {
		return ips, ports, err
	}
	wantIPs, wantPorts := map[int][]string{}, map[int][]string{}
	for i := range services {
		s := &services[i]
		who := s.Namespace + "/" + s.Name
		if ip := heldIP(s); ip != "" {
			addr, err := netip.ParseAddr(ip)
			if off, ok := a.ipr.offset(addr); err == nil && ok {
				wantIPs[off] = append(wantIPs[off], who)
			} else {
				ips.OutOfRange = append(ips.OutOfRange, fmt.Sprintf("%s: %s", who, ip))
			}
		}
		for p := range heldPorts(s) {
			if off, ok := a.ports.offset(int(p)); ok {
				wantPorts[off] = append(wantPorts[off], who)
			} else {
				ports.OutOfRange = append(ports.OutOfRange, fmt.Sprintf("%s: %d", who, p))
			}
		}
	}
	ips.Duplicates = duplicates(wantIPs, func(i int) string { return a.ipr.addr(i).String() })
	ports.Duplicates = duplicates(wantPorts, func(i int) string { return fmt.Sprint(a.ports.lo + i) })
	if ips.Freed, ips.Restored, err = a.ipLeaks.repair(ctx, a.ips, ipRev, wantIPs); err != nil {
		return ips, ports, err
	}
	ports.Freed, ports.Restored, err = a.portLeaks.repair(ctx, a.nps, portRev, wantPorts)
	return ips, ports, err
}

func duplicates(want map[int][]string, name func(int) string) []string {
	var out []string
	for off, who := range want {
		if len(who) > 1 {
			sort.Strings(who)
			out = append(out, fmt.Sprintf("%s: %s", name(off), strings.Join(who, ", ")))
		}
	}
	sort.Strings(out)
	return out
}

// leaks counts, per bit, the repair runs in a row that found it leaked.
type leaks struct {
	mu     sync.Mutex
	counts map[int]int
}

func (l *leaks) repair(ctx context.Context, b *bitmap, rev int64, want map[int][]string) (freed, restored int, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var leaked []int
	err = b.update(ctx, func(bits *big.Int) (bool, error) {
		if b.rev != rev { // b.mu is held while fn runs
			return false, fmt.Errorf("%w (%s at revision %d, snapshot %d)", errMoved, b.key, b.rev, rev)
		}
		freed, restored, leaked = 0, 0, leaked[:0]
		for off := range want {
			if off < b.size && bits.Bit(off) == 0 {
				bits.SetBit(bits, off, 1)
				restored++
			}
		}
		for _, off := range setBits(bits) {
			if _, ok := want[off]; ok {
				continue
			}
			if l.counts[off]+1 >= repairsBeforeFree {
				bits.SetBit(bits, off, 0)
				freed++
				continue
			}
			leaked = append(leaked, off)
		}
		return freed+restored > 0, nil
	})
	if err != nil {
		return 0, 0, err
	}
	next := make(map[int]int, len(leaked))
	for _, off := range leaked {
		next[off] = l.counts[off] + 1
	}
	l.counts = next
	return freed, restored, nil
}

// setBits lists the set bits of b in order.
func setBits(b *big.Int) []int {
	var out []int
	words := b.Bits()
	const w = 32 << (^uint(0) >> 63)
	for wi, word := range words {
		for word != 0 {
			tz := trailingZeros(uint(word))
			out = append(out, wi*w+tz)
			word &= word - 1
		}
	}
	return out
}

package servicealloc

import (
	"fmt"
	"math/big"
	"math/bits"
	"net/netip"
	"strconv"
)

// maxIPs bounds an IP bitmap, as kube bounds IPv6 service ranges.
const maxIPs = 1 << 20

// ipRange maps a service CIDR onto bitmap offsets: offset 0 is the first
// address after the network address, and for IPv4 the broadcast address
// is left out, as in kube.
type ipRange struct {
	prefix netip.Prefix
	base   *big.Int // the address of offset 0
	size   int
}

func newIPRange(p netip.Prefix) (*ipRange, error) {
	if !p.IsValid() || p.Masked() != p {
		return nil, fmt.Errorf("%s is not a network address", p)
	}
	host := p.Addr().BitLen() - p.Bits()
	size := maxIPs
	if host < 21 {
		size = 1<<host - 1 // minus the network address
		if p.Addr().Is4() {
			size-- // minus the broadcast address
		}
	}
	if size < 1 {
		return nil, fmt.Errorf("%s has no room for services", p)
	}
	base := addrInt(p.Addr())
	base.Add(base, big.NewInt(1))
	return &ipRange{prefix: p, base: base, size: size}, nil
}

func addrInt(a netip.Addr) *big.Int {
	b := a.As16()
	if a.Is4() {
		v := a.As4()
		return new(big.Int).SetBytes(v[:])
	}
	return new(big.Int).SetBytes(b[:])
}

// offset is the bitmap index of ip, or false when ip is outside the range.
func (r *ipRange) offset(ip netip.Addr) (int, bool) {
	ip = ip.Unmap()
	if !r.prefix.Contains(ip) {
		return 0, false
	}
	d := new(big.Int).Sub(addrInt(ip), r.base)
	if d.Sign() < 0 || !d.IsInt64() || d.Int64() >= int64(r.size) {
		return 0, false
	}
	return int(d.Int64()), true
}

// addr is the address at offset i.
func (r *ipRange) addr(i int) netip.Addr {
	v := new(big.Int).Add(r.base, big.NewInt(int64(i)))
	buf := v.FillBytes(make([]byte, r.prefix.Addr().BitLen()/8))
	a, _ := netip.AddrFromSlice(buf)
	return a
}

// portRange maps node ports onto offsets: offset 0 is the range's first port.
type portRange struct{ lo, hi int }

func (r portRange) String() string { return strconv.Itoa(r.lo) + "-" + strconv.Itoa(r.hi) }
func (r portRange) size() int      { return r.hi - r.lo + 1 }

func (r portRange) offset(port int) (int, bool) {
	if port < r.lo || port > r.hi {
		return 0, false
	}
	return port - r.lo, true
}

func trailingZeros(x uint) int { return bits.TrailingZeros(x) }

package cel

import (
	"fmt"
	"net/netip"
	"net/url"
	"reflect"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// kube's ip, cidr and url libraries.

var (
	ipType      = cel.OpaqueType("net.IP")
	cidrType    = cel.OpaqueType("net.CIDR")
	urlTypeName = "kubernetes.URL"
	urlType     = cel.ObjectType(urlTypeName)
)

func init() { staticTypes[urlTypeName] = &structType{fields: map[string]*types.Type{}} }

type ipVal struct{ netip.Addr }

func (v ipVal) ConvertToNative(t reflect.Type) (any, error) {
	if reflect.TypeOf(v.Addr).AssignableTo(t) {
		return v.Addr, nil
	}
	if reflect.TypeOf("").AssignableTo(t) {
		return v.Addr.String(), nil
	}
	return nil, fmt.Errorf("type conversion error from 'IP' to '%v'", t)
}
func (v ipVal) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case ipType:
		return v
	case types.StringType:
		return types.String(v.Addr.String())
	case types.TypeType:
		return ipType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", ipType, t)
}
func (v ipVal) Equal(o ref.Val) ref.Val {
	x, ok := o.(ipVal)
	if !ok {
		return types.MaybeNoSuchOverloadErr(o)
	}
	return types.Bool(v.Addr == x.Addr)
}
func (v ipVal) Type() ref.Type { return ipType }
func (v ipVal) Value() any     { return v.Addr }

type cidrVal struct{ netip.Prefix }

func (v cidrVal) ConvertToNative(t reflect.Type) (any, error) {
	if reflect.TypeOf(v.Prefix).AssignableTo(t) {
		return v.Prefix, nil
	}
	if reflect.TypeOf("").AssignableTo(t) {
		return v.Prefix.String(), nil
	}
	return nil, fmt.Errorf("type conversion error from 'CIDR' to '%v'", t)
}
func (v cidrVal) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case cidrType:
		return v
	case types.StringType:
		return types.String(v.Prefix.String())
	case types.TypeType:
		return cidrType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", cidrType, t)
}
func (v cidrVal) Equal(o ref.Val) ref.Val {
	x, ok := o.(cidrVal)
	if !ok {
		return types.MaybeNoSuchOverloadErr(o)
	}
	return types.Bool(v.Prefix == x.Prefix)
}
func (v cidrVal) Type() ref.Type { return cidrType }
func (v cidrVal) Value() any     { return v.Prefix }

var urlTypeValue = types.NewObjectType(urlTypeName)

type urlVal struct{ *url.URL }

func (v urlVal) ConvertToNative(t reflect.Type) (any, error) {
	if reflect.TypeOf(v.URL).AssignableTo(t) {
		return v.URL, nil
	}
	if reflect.TypeOf("").AssignableTo(t) {
		return v.URL.String(), nil
	}
	return nil, fmt.Errorf("type conversion error from 'URL' to '%v'", t)
}
func (v urlVal) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case urlTypeValue:
		return v
	case types.TypeType:
		return urlTypeValue
	}
	return types.NewErr("type conversion error from '%s' to '%s'", urlTypeValue, t)
}
func (v urlVal) Equal(o ref.Val) ref.Val {
	x, ok := o.(urlVal)
	if !ok {
		return types.MaybeNoSuchOverloadErr(o)
	}
	return types.Bool(*v.URL == *x.URL)
}
func (v urlVal) Type() ref.Type { return urlTypeValue }
func (v urlVal) Value() any     { return v.URL }

func parseIPAddr(raw string) (netip.Addr, error) {
	addr, err := netip.ParseAddr(raw)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("IP Address %q parse error during conversion from string: %v", raw, err)
	}
	if addr.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("IP address %q with zone value is not allowed", raw)
	}
	if addr.Is4In6() {
		return netip.Addr{}, fmt.Errorf("IPv4-mapped IPv6 address %q is not allowed", raw)
	}
	return addr, nil
}

func parseCIDR(raw string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(raw)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("network address parse error during conversion from string: %v", err)
	}
	if p.Addr().Is4In6() {
		return netip.Prefix{}, fmt.Errorf("IPv4-mapped IPv6 address %q is not allowed", raw)
	}
	return p, nil
}

func parseURL(s string) (*url.URL, error) {
	if _, err := url.ParseRequestURI(s); err != nil {
		return nil, err
	}
	return url.Parse(s)
}

func toIP(v ref.Val) ref.Val {
	s, ok := v.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	a, err := parseIPAddr(string(s))
	if err != nil {
		return types.NewErr("%v", err)
	}
	return ipVal{a}
}

func toCIDR(v ref.Val) ref.Val {
	s, ok := v.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	p, err := parseCIDR(string(s))
	if err != nil {
		return types.NewErr("%v", err)
	}
	return cidrVal{p}
}

func netLib() cel.EnvOption {
	ipPred := func(name string, f func(netip.Addr) bool) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload("ip_"+name, []*cel.Type{ipType}, cel.BoolType,
			cel.UnaryBinding(func(v ref.Val) ref.Val {
				ip, ok := v.(ipVal)
				if !ok {
					return types.MaybeNoSuchOverloadErr(v)
				}
				return types.Bool(f(ip.Addr))
			})))
	}
	str := func(f func(string) ref.Val) cel.OverloadOpt {
		return cel.UnaryBinding(func(v ref.Val) ref.Val {
			s, ok := v.(types.String)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			return f(string(s))
		})
	}
	cidr1 := func(f func(netip.Prefix) ref.Val) cel.OverloadOpt {
		return cel.UnaryBinding(func(v ref.Val) ref.Val {
			c, ok := v.(cidrVal)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			return f(c.Prefix)
		})
	}
	containsIP := func(c, o ref.Val) ref.Val {
		cv, ok := c.(cidrVal)
		ip, ok2 := o.(ipVal)
		if !ok || !ok2 {
			if types.IsError(o) {
				return o
			}
			return types.MaybeNoSuchOverloadErr(o)
		}
		return types.Bool(cv.Prefix.Contains(ip.Addr))
	}
	containsCIDR := func(c, o ref.Val) ref.Val {
		cv, ok := c.(cidrVal)
		ov, ok2 := o.(cidrVal)
		if !ok || !ok2 {
			if types.IsError(o) {
				return o
			}
			return types.MaybeNoSuchOverloadErr(o)
		}
		return types.Bool(cv.Prefix.Overlaps(ov.Prefix) && cv.Prefix.Bits() <= ov.Prefix.Bits())
	}
	urlStr := func(f func(*url.URL) string) cel.OverloadOpt {
		return cel.UnaryBinding(func(v ref.Val) ref.Val {
			u, ok := v.(urlVal)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			return types.String(f(u.URL))
		})
	}
	return cel.Lib(simpleLib{opts: []cel.EnvOption{
		// ip
		cel.Function("ip", cel.Overload("string_to_ip", []*cel.Type{cel.StringType}, ipType, cel.UnaryBinding(toIP))),
		cel.Function("family", cel.MemberOverload("ip_family", []*cel.Type{ipType}, cel.IntType,
			cel.UnaryBinding(func(v ref.Val) ref.Val {
				ip, ok := v.(ipVal)
				if !ok {
					return types.MaybeNoSuchOverloadErr(v)
				}
				if ip.Addr.Is4() {
					return types.Int(4)
				}
				return types.Int(6)
			}))),
		cel.Function("ip.isCanonical", cel.Overload("ip_is_canonical", []*cel.Type{cel.StringType}, cel.BoolType,
			str(func(s string) ref.Val {
				a, err := parseIPAddr(s)
				if err != nil {
					return types.NewErr("%v", err)
				}
				return types.Bool(a.String() == s)
			}))),
		ipPred("isUnspecified", netip.Addr.IsUnspecified),
		ipPred("isLoopback", netip.Addr.IsLoopback),
		ipPred("isLinkLocalMulticast", netip.Addr.IsLinkLocalMulticast),
		ipPred("isLinkLocalUnicast", netip.Addr.IsLinkLocalUnicast),
		ipPred("isGlobalUnicast", netip.Addr.IsGlobalUnicast),
		cel.Function("isIP", cel.Overload("is_ip", []*cel.Type{cel.StringType}, cel.BoolType,
			str(func(s string) ref.Val { _, err := parseIPAddr(s); return types.Bool(err == nil) }))),
		cel.Function("string",
			cel.Overload("ip_to_string", []*cel.Type{ipType}, cel.StringType,
				cel.UnaryBinding(func(v ref.Val) ref.Val { return v.ConvertToType(types.StringType) })),
			cel.Overload("cidr_to_string", []*cel.Type{cidrType}, cel.StringType,
				cel.UnaryBinding(func(v ref.Val) ref.Val { return v.ConvertToType(types.StringType) }))),
		// cidr
		cel.Function("cidr", cel.Overload("string_to_cidr", []*cel.Type{cel.StringType}, cidrType, cel.UnaryBinding(toCIDR))),
		cel.Function("containsIP",
			cel.MemberOverload("cidr_contains_ip_string", []*cel.Type{cidrType, cel.StringType}, cel.BoolType,
				cel.BinaryBinding(func(c, s ref.Val) ref.Val { return containsIP(c, toIP(s)) })),
			cel.MemberOverload("cidr_contains_ip_ip", []*cel.Type{cidrType, ipType}, cel.BoolType, cel.BinaryBinding(containsIP))),
		cel.Function("containsCIDR",
			cel.MemberOverload("cidr_contains_cidr_string", []*cel.Type{cidrType, cel.StringType}, cel.BoolType,
				cel.BinaryBinding(func(c, s ref.Val) ref.Val { return containsCIDR(c, toCIDR(s)) })),
			cel.MemberOverload("cidr_contains_cidr", []*cel.Type{cidrType, cidrType}, cel.BoolType, cel.BinaryBinding(containsCIDR))),
		cel.Function("ip", cel.MemberOverload("cidr_ip", []*cel.Type{cidrType}, ipType,
			cidr1(func(p netip.Prefix) ref.Val { return ipVal{p.Addr()} }))),
		cel.Function("prefixLength", cel.MemberOverload("cidr_prefix_length", []*cel.Type{cidrType}, cel.IntType,
			cidr1(func(p netip.Prefix) ref.Val { return types.Int(p.Bits()) }))),
		cel.Function("masked", cel.MemberOverload("cidr_masked", []*cel.Type{cidrType}, cidrType,
			cidr1(func(p netip.Prefix) ref.Val { return cidrVal{p.Masked()} }))),
		cel.Function("isCIDR", cel.Overload("is_cidr", []*cel.Type{cel.StringType}, cel.BoolType,
			str(func(s string) ref.Val { _, err := parseCIDR(s); return types.Bool(err == nil) }))),
		// url
		cel.Function("url", cel.Overload("string_to_url", []*cel.Type{cel.StringType}, urlType,
			str(func(s string) ref.Val {
				u, err := parseURL(s)
				if err != nil {
					return types.NewErr("URL parse error during conversion from string: %v", err)
				}
				return urlVal{u}
			}))),
		cel.Function("getScheme", cel.MemberOverload("url_get_scheme", []*cel.Type{urlType}, cel.StringType, urlStr(func(u *url.URL) string { return u.Scheme }))),
		cel.Function("getHost", cel.MemberOverload("url_get_host", []*cel.Type{urlType}, cel.StringType, urlStr(func(u *url.URL) string { return u.Host }))),
		cel.Function("getHostname", cel.MemberOverload("url_get_hostname", []*cel.Type{urlType}, cel.StringType, urlStr((*url.URL).Hostname))),
		cel.Function("getPort", cel.MemberOverload("url_get_port", []*cel.Type{urlType}, cel.StringType, urlStr((*url.URL).Port))),
		cel.Function("getEscapedPath", cel.MemberOverload("url_get_escaped_path", []*cel.Type{urlType}, cel.StringType, urlStr((*url.URL).EscapedPath))),
		cel.Function("getQuery", cel.MemberOverload("url_get_query", []*cel.Type{urlType}, cel.MapType(cel.StringType, cel.ListType(cel.StringType)),
			cel.UnaryBinding(func(v ref.Val) ref.Val {
				u, ok := v.(urlVal)
				if !ok {
					return types.MaybeNoSuchOverloadErr(v)
				}
				m := map[ref.Val]ref.Val{}
				for k, vs := range u.URL.Query() {
					m[types.String(k)] = types.NewStringList(types.DefaultTypeAdapter, vs)
				}
				return types.NewRefValMap(types.DefaultTypeAdapter, m)
			}))),
		cel.Function("isURL", cel.Overload("is_url_string", []*cel.Type{cel.StringType}, cel.BoolType,
			str(func(s string) ref.Val { _, err := parseURL(s); return types.Bool(err == nil) }))),
	}})
}

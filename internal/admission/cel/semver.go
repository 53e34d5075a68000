package cel

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// kube's semver library (version 1): semver(s[, normalize]),
// isSemver(s[, normalize]), and v.major(), minor(), patch(),
// isGreaterThan, isLessThan, compareTo, with semver 2.0.0 precedence.

const semverTypeName = "kubernetes.Semver"

var (
	semverType      = cel.ObjectType(semverTypeName)
	semverTypeValue = types.NewObjectType(semverTypeName)
)

func init() { staticTypes[semverTypeName] = &structType{fields: map[string]*types.Type{}} }

type version struct {
	major, minor, patch uint64
	pre                 []string
	build               []string
}

func parseUint(s, what string) (uint64, error) {
	if s == "" {
		return 0, fmt.Errorf("%s number is empty", what)
	}
	if strings.Trim(s, "0123456789") != "" {
		return 0, fmt.Errorf("Invalid character(s) found in %s number %q", strings.ToLower(what), s)
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, fmt.Errorf("%s number must not contain leading zeroes %q", what, s)
	}
	return strconv.ParseUint(s, 10, 64)
}

func validIdent(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '-' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')) {
			return false
		}
	}
	return true
}

// parseSemver parses strictly, as blang/semver's Parse.
func parseSemver(s string) (version, error) {
	var v version
	if s == "" {
		return v, errors.New("Version string empty")
	}
	parts := strings.SplitN(s, ".", 3)
	if len(parts) != 3 {
		return v, errors.New("No Major.Minor.Patch elements found")
	}
	var err error
	if v.major, err = parseUint(parts[0], "Major"); err != nil {
		return v, err
	}
	if v.minor, err = parseUint(parts[1], "Minor"); err != nil {
		return v, err
	}
	rest := parts[2]
	var build, pre string
	if i := strings.IndexByte(rest, '+'); i >= 0 {
		rest, build = rest[:i], rest[i+1:]
		for _, b := range strings.Split(build, ".") {
			if !validIdent(b) {
				return v, fmt.Errorf("Invalid character(s) found in build meta data %q", b)
			}
			v.build = append(v.build, b)
		}
	}
	if i := strings.IndexByte(rest, '-'); i >= 0 {
		rest, pre = rest[:i], rest[i+1:]
		for _, p := range strings.Split(pre, ".") {
			if !validIdent(p) {
				return v, fmt.Errorf("Invalid character(s) found in prerelease %q", p)
			}
			if strings.Trim(p, "0123456789") == "" && len(p) > 1 && p[0] == '0' {
				return v, fmt.Errorf("Numeric PreRelease version must not contain leading zeroes %q", p)
			}
			v.pre = append(v.pre, p)
		}
	}
	if v.patch, err = parseUint(rest, "Patch"); err != nil {
		return v, err
	}
	return v, nil
}

// normalizeSemver is kube's normalizeAndParse: a leading v, leading
// zeroes and missing minor and patch numbers are accepted.
func normalizeSemver(s string) (version, error) {
	s = strings.TrimPrefix(s, "v")
	parts := strings.SplitN(s, ".", 3)
	for i, p := range parts {
		if len(p) > 1 {
			p = strings.TrimLeft(p, "0")
			if len(p) == 0 || !strings.ContainsAny(p[0:1], "0123456789") {
				p = "0" + p
			}
			parts[i] = p
		}
	}
	if len(parts) < 3 {
		if strings.ContainsAny(parts[len(parts)-1], "+-") {
			return version{}, errors.New("short version cannot contain PreRelease/Build meta data")
		}
		for len(parts) < 3 {
			parts = append(parts, "0")
		}
	}
	return parseSemver(strings.Join(parts, "."))
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compare is semver 2.0.0 precedence; build metadata does not count.
func (v version) compare(o version) int {
	if c := cmpUint(v.major, o.major); c != 0 {
		return c
	}
	if c := cmpUint(v.minor, o.minor); c != 0 {
		return c
	}
	if c := cmpUint(v.patch, o.patch); c != 0 {
		return c
	}
	switch {
	case len(v.pre) == 0 && len(o.pre) == 0:
		return 0
	case len(v.pre) == 0:
		return 1
	case len(o.pre) == 0:
		return -1
	}
	for i := 0; i < len(v.pre) && i < len(o.pre); i++ {
		a, b := v.pre[i], o.pre[i]
		an, aerr := strconv.ParseUint(a, 10, 64)
		bn, berr := strconv.ParseUint(b, 10, 64)
		switch {
		case aerr == nil && berr == nil:
			if c := cmpUint(an, bn); c != 0 {
				return c
			}
		case aerr == nil:
			return -1
		case berr == nil:
			return 1
		default:
			if c := strings.Compare(a, b); c != 0 {
				return c
			}
		}
	}
	return cmpUint(uint64(len(v.pre)), uint64(len(o.pre)))
}

type semverVal struct{ v version }

func (s semverVal) ConvertToNative(t reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion error from 'Semver' to '%v'", t)
}
func (s semverVal) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case semverTypeValue:
		return s
	case types.TypeType:
		return semverTypeValue
	}
	return types.NewErr("type conversion error from '%s' to '%s'", semverTypeValue, t)
}
func (s semverVal) Equal(o ref.Val) ref.Val {
	x, ok := o.(semverVal)
	if !ok {
		return types.MaybeNoSuchOverloadErr(o)
	}
	return types.Bool(s.v.compare(x.v) == 0)
}
func (s semverVal) Type() ref.Type { return semverTypeValue }
func (s semverVal) Value() any     { return s.v }

func semverLib() cel.EnvOption {
	parse := func(s ref.Val, normalize bool) (version, error) {
		str, ok := s.(types.String)
		if !ok {
			return version{}, errors.New("no such overload")
		}
		if normalize {
			return normalizeSemver(string(str))
		}
		return parseSemver(string(str))
	}
	toSemver := func(s ref.Val, n ref.Val) ref.Val {
		v, err := parse(s, n == types.True)
		if err != nil {
			return types.WrapErr(err)
		}
		return semverVal{v}
	}
	isSemver := func(s ref.Val, n ref.Val) ref.Val {
		_, err := parse(s, n == types.True)
		return types.Bool(err == nil)
	}
	two := func(f func(a, b version) ref.Val) cel.OverloadOpt {
		return cel.BinaryBinding(func(a, b ref.Val) ref.Val {
			x, ok := a.(semverVal)
			y, ok2 := b.(semverVal)
			if !ok || !ok2 {
				return types.MaybeNoSuchOverloadErr(b)
			}
			return f(x.v, y.v)
		})
	}
	one := func(f func(version) uint64) cel.OverloadOpt {
		return cel.UnaryBinding(func(a ref.Val) ref.Val {
			x, ok := a.(semverVal)
			if !ok {
				return types.MaybeNoSuchOverloadErr(a)
			}
			return types.Int(f(x.v))
		})
	}
	st := []*cel.Type{semverType}
	ss := []*cel.Type{semverType, semverType}
	return cel.Lib(simpleLib{opts: []cel.EnvOption{
		cel.Function("semver",
			cel.Overload("string_to_semver", []*cel.Type{cel.StringType}, semverType,
				cel.UnaryBinding(func(s ref.Val) ref.Val { return toSemver(s, types.False) })),
			cel.Overload("string_bool_to_semver", []*cel.Type{cel.StringType, cel.BoolType}, semverType, cel.BinaryBinding(toSemver))),
		cel.Function("isSemver",
			cel.Overload("is_semver_string", []*cel.Type{cel.StringType}, cel.BoolType,
				cel.UnaryBinding(func(s ref.Val) ref.Val { return isSemver(s, types.False) })),
			cel.Overload("is_semver_string_bool", []*cel.Type{cel.StringType, cel.BoolType}, cel.BoolType, cel.BinaryBinding(isSemver))),
		cel.Function("isGreaterThan", cel.MemberOverload("semver_is_greater_than", ss, cel.BoolType,
			two(func(a, b version) ref.Val { return types.Bool(a.compare(b) == 1) }))),
		cel.Function("isLessThan", cel.MemberOverload("semver_is_less_than", ss, cel.BoolType,
			two(func(a, b version) ref.Val { return types.Bool(a.compare(b) == -1) }))),
		cel.Function("compareTo", cel.MemberOverload("semver_compare_to", ss, cel.IntType,
			two(func(a, b version) ref.Val { return types.Int(a.compare(b)) }))),
		cel.Function("major", cel.MemberOverload("semver_major", st, cel.IntType, one(func(v version) uint64 { return v.major }))),
		cel.Function("minor", cel.MemberOverload("semver_minor", st, cel.IntType, one(func(v version) uint64 { return v.minor }))),
		cel.Function("patch", cel.MemberOverload("semver_patch", st, cel.IntType, one(func(v version) uint64 { return v.patch }))),
	}})
}

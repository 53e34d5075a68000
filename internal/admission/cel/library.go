package cel

import (
	"regexp"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// regexLib is kube's regex library: `s.find(re)` returns the first match
// (or ""), `s.findAll(re)` and `s.findAll(re, n)` the matches.
func regexLib() cel.EnvOption {
	compile := func(re ref.Val) (*regexp.Regexp, ref.Val) {
		r, err := regexp.Compile(string(re.(types.String)))
		if err != nil {
			return nil, types.WrapErr(err)
		}
		return r, nil
	}
	findAll := func(s, re ref.Val, n int) ref.Val {
		r, errVal := compile(re)
		if errVal != nil {
			return errVal
		}
		return types.DefaultTypeAdapter.NativeToValue(r.FindAllString(string(s.(types.String)), n))
	}
	return cel.Lib(simpleLib{opts: []cel.EnvOption{
		cel.Function("find",
			cel.MemberOverload("string_find_string", []*cel.Type{cel.StringType, cel.StringType}, cel.StringType,
				cel.BinaryBinding(func(s, re ref.Val) ref.Val {
					r, errVal := compile(re)
					if errVal != nil {
						return errVal
					}
					return types.String(r.FindString(string(s.(types.String))))
				}))),
		cel.Function("findAll",
			cel.MemberOverload("string_find_all_string", []*cel.Type{cel.StringType, cel.StringType}, cel.ListType(cel.StringType),
				cel.BinaryBinding(func(s, re ref.Val) ref.Val { return findAll(s, re, -1) })),
			cel.MemberOverload("string_find_all_string_int", []*cel.Type{cel.StringType, cel.StringType, cel.IntType}, cel.ListType(cel.StringType),
				cel.FunctionBinding(func(args ...ref.Val) ref.Val {
					return findAll(args[0], args[1], int(args[2].(types.Int)))
				}))),
	}})
}

// listsLib is kube's list library: isSorted, sum, min, max, indexOf and
// lastIndexOf on lists of comparable elements; with withIncludes also
// version 1's `includes` (kube 1.37, stored expressions only).
func listsLib(withIncludes bool) cel.EnvOption {
	t := cel.TypeParamType("T")
	lt := cel.ListType(t)
	items := func(l ref.Val) []ref.Val {
		lister := l.(traits.Lister)
		n := int(lister.Size().(types.Int))
		out := make([]ref.Val, n)
		for i := 0; i < n; i++ {
			out[i] = lister.Get(types.Int(i))
		}
		return out
	}
	less := func(a, b ref.Val) (bool, ref.Val) {
		c, ok := a.(traits.Comparer)
		if !ok {
			return false, types.NewErr("list elements must be comparable")
		}
		r := c.Compare(b)
		if types.IsError(r) {
			return false, r
		}
		return r.(types.Int) < 0, nil
	}
	extreme := func(wantMax bool) func(ref.Val) ref.Val {
		return func(l ref.Val) ref.Val {
			xs := items(l)
			if len(xs) == 0 {
				return types.NewErr("%s called on empty list", map[bool]string{true: "max", false: "min"}[wantMax])
			}
			best := xs[0]
			for _, x := range xs[1:] {
				lt, err := less(x, best)
				if err != nil {
					return err
				}
				if lt != wantMax && x.Equal(best) != types.True {
					best = x
				}
			}
			return best
		}
	}
	index := func(last bool) func(l, v ref.Val) ref.Val {
		return func(l, v ref.Val) ref.Val {
			xs := items(l)
			for i := range xs {
				j := i
				if last {
					j = len(xs) - 1 - i
				}
				if xs[j].Equal(v) == types.True {
					return types.Int(j)
				}
			}
			return types.Int(-1)
		}
	}
	opts := []cel.EnvOption{
		cel.Function("isSorted", cel.MemberOverload("list_is_sorted", []*cel.Type{lt}, cel.BoolType,
			cel.UnaryBinding(func(l ref.Val) ref.Val {
				xs := items(l)
				for i := 1; i < len(xs); i++ {
					lt, err := less(xs[i], xs[i-1])
					if err != nil {
						return err
					}
					if lt {
						return types.False
					}
				}
				return types.True
			}))),
		cel.Function("sum", cel.MemberOverload("list_sum", []*cel.Type{lt}, t,
			cel.UnaryBinding(func(l ref.Val) ref.Val {
				xs := items(l)
				if len(xs) == 0 {
					return types.Int(0)
				}
				acc := xs[0]
				for _, x := range xs[1:] {
					a, ok := acc.(traits.Adder)
					if !ok {
						return types.NewErr("list elements must be summable")
					}
					acc = a.Add(x)
				}
				return acc
			}))),
		cel.Function("min", cel.MemberOverload("list_min", []*cel.Type{lt}, t, cel.UnaryBinding(extreme(false)))),
		cel.Function("max", cel.MemberOverload("list_max", []*cel.Type{lt}, t, cel.UnaryBinding(extreme(true)))),
		cel.Function("indexOf", cel.MemberOverload("list_index_of", []*cel.Type{lt, t}, cel.IntType, cel.BinaryBinding(index(false)))),
		cel.Function("lastIndexOf", cel.MemberOverload("list_last_index_of", []*cel.Type{lt, t}, cel.IntType, cel.BinaryBinding(index(true)))),
	}
	if withIncludes {
		// <dyn>.includes(<dyn>): a list holds the value, or any other
		// value equals it.
		opts = append(opts, cel.Function("includes", cel.MemberOverload("list_includes_dyn_dyn", []*cel.Type{cel.DynType, cel.DynType}, cel.BoolType,
			cel.BinaryBinding(func(target, v ref.Val) ref.Val {
				if l, ok := target.(traits.Lister); ok {
					for it := l.Iterator(); it.HasNext() == types.True; {
						if it.Next().Equal(v) == types.True {
							return types.True
						}
					}
					return types.False
				}
				return types.Bool(target.Equal(v) == types.True)
			}))))
	}
	return cel.Lib(simpleLib{opts: opts})
}

type simpleLib struct{ opts []cel.EnvOption }

func (l simpleLib) CompileOptions() []cel.EnvOption   { return l.opts }
func (simpleLib) ProgramOptions() []cel.ProgramOption { return nil }

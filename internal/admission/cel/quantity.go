package cel

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/api/resource"
)

const quantityTypeName = "kubernetes.Quantity"

var (
	quantityType      = cel.ObjectType(quantityTypeName)
	quantityTypeValue = types.NewObjectType(quantityTypeName)
)

func init() { staticTypes[quantityTypeName] = &structType{fields: map[string]*types.Type{}} }

// quantityVal is a resource.Quantity in CEL.
type quantityVal struct{ q *resource.Quantity }

func (v quantityVal) ConvertToNative(t reflect.Type) (any, error) {
	if reflect.TypeOf(v.q).AssignableTo(t) {
		return v.q, nil
	}
	if reflect.TypeOf("").AssignableTo(t) {
		return v.q.String(), nil
	}
	return nil, fmt.Errorf("type conversion error from 'Quantity' to '%v'", t)
}

func (v quantityVal) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case quantityTypeValue:
		return v
	case types.TypeType:
		return quantityTypeValue
	}
	return types.NewErr("type conversion error from '%s' to '%s'", quantityTypeValue, t)
}

func (v quantityVal) Equal(o ref.Val) ref.Val {
	other, ok := o.(quantityVal)
	if !ok {
		return types.MaybeNoSuchOverloadErr(o)
	}
	return types.Bool(v.q.Equal(*other.q))
}

func (v quantityVal) Type() ref.Type { return quantityTypeValue }
func (v quantityVal) Value() any     { return v.q }

// quantityLib is kube's quantity library: quantity(s), isQuantity(s),
// sign(q), and q.isGreaterThan, isLessThan, compareTo, asApproximateFloat,
// asInteger, isInteger, add and sub.
func quantityLib() cel.EnvOption {
	q1 := func(f func(*resource.Quantity) ref.Val) cel.OverloadOpt {
		return cel.UnaryBinding(func(a ref.Val) ref.Val {
			q, ok := a.(quantityVal)
			if !ok {
				return types.MaybeNoSuchOverloadErr(a)
			}
			return f(q.q)
		})
	}
	q2 := func(f func(a, b *resource.Quantity) ref.Val) cel.OverloadOpt {
		return cel.BinaryBinding(func(a, b ref.Val) ref.Val {
			x, ok := a.(quantityVal)
			y, ok2 := b.(quantityVal)
			if !ok || !ok2 {
				return types.MaybeNoSuchOverloadErr(b)
			}
			return f(x.q, y.q)
		})
	}
	qi := func(f func(a, b *resource.Quantity) ref.Val) cel.OverloadOpt {
		return cel.BinaryBinding(func(a, b ref.Val) ref.Val {
			x, ok := a.(quantityVal)
			i, ok2 := b.(types.Int)
			if !ok || !ok2 {
				return types.MaybeNoSuchOverloadErr(b)
			}
			return f(x.q, resource.NewQuantity(int64(i), resource.DecimalSI))
		})
	}
	add := func(a, b *resource.Quantity) ref.Val {
		r := a.DeepCopy()
		r.Add(*b)
		return quantityVal{&r}
	}
	sub := func(a, b *resource.Quantity) ref.Val {
		r := a.DeepCopy()
		r.Sub(*b)
		return quantityVal{&r}
	}
	qt := []*cel.Type{quantityType}
	qq := []*cel.Type{quantityType, quantityType}
	return cel.Lib(simpleLib{opts: []cel.EnvOption{
		cel.Function("quantity", cel.Overload("string_to_quantity", []*cel.Type{cel.StringType}, quantityType,
			cel.UnaryBinding(func(a ref.Val) ref.Val {
				s, ok := a.(types.String)
				if !ok {
					return types.MaybeNoSuchOverloadErr(a)
				}
				q, err := resource.ParseQuantity(string(s))
				if err != nil {
					return types.WrapErr(err)
				}
				return quantityVal{&q}
			}))),
		cel.Function("isQuantity", cel.Overload("is_quantity_string", []*cel.Type{cel.StringType}, cel.BoolType,
			cel.UnaryBinding(func(a ref.Val) ref.Val {
				s, ok := a.(types.String)
				if !ok {
					return types.MaybeNoSuchOverloadErr(a)
				}
				_, err := resource.ParseQuantity(string(s))
				return types.Bool(err == nil)
			}))),
		cel.Function("sign", cel.Overload("quantity_sign", qt, cel.IntType, q1(func(q *resource.Quantity) ref.Val { return types.Int(q.Sign()) }))),
		cel.Function("isGreaterThan", cel.MemberOverload("quantity_is_greater_than", qq, cel.BoolType,
			q2(func(a, b *resource.Quantity) ref.Val { return types.Bool(a.Cmp(*b) == 1) }))),
		cel.Function("isLessThan", cel.MemberOverload("quantity_is_less_than", qq, cel.BoolType,
			q2(func(a, b *resource.Quantity) ref.Val { return types.Bool(a.Cmp(*b) == -1) }))),
		cel.Function("compareTo", cel.MemberOverload("quantity_compare_to", qq, cel.IntType,
			q2(func(a, b *resource.Quantity) ref.Val { return types.Int(a.Cmp(*b)) }))),
		cel.Function("asApproximateFloat", cel.MemberOverload("quantity_get_float", qt, cel.DoubleType,
			q1(func(q *resource.Quantity) ref.Val { return types.Double(q.AsApproximateFloat64()) }))),
		cel.Function("asInteger", cel.MemberOverload("quantity_get_int", qt, cel.IntType,
			q1(func(q *resource.Quantity) ref.Val {
				v, ok := q.AsInt64()
				if !ok {
					return types.WrapErr(errors.New("cannot convert value to integer"))
				}
				return types.Int(v)
			}))),
		cel.Function("isInteger", cel.MemberOverload("quantity_is_integer", qt, cel.BoolType,
			q1(func(q *resource.Quantity) ref.Val { _, ok := q.AsInt64(); return types.Bool(ok) }))),
		cel.Function("add",
			cel.MemberOverload("quantity_add", qq, quantityType, q2(add)),
			cel.MemberOverload("quantity_add_int", []*cel.Type{quantityType, cel.IntType}, quantityType, qi(add))),
		cel.Function("sub",
			cel.MemberOverload("quantity_sub", qq, quantityType, q2(sub)),
			cel.MemberOverload("quantity_sub_int", []*cel.Type{quantityType, cel.IntType}, quantityType, qi(sub))),
	}})
}

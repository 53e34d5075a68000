package cel

import (
	"fmt"
	"net/url"
	"reflect"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
)

// kube's format library: format.<name>() and format.named(name) give a
// format whose validate(s) is optional.none() for a valid s, or the
// list of errors.

const formatTypeName = "kubernetes.NamedFormat"

var (
	formatType      = cel.ObjectType(formatTypeName)
	formatTypeValue = types.NewObjectType(formatTypeName)
)

func init() { staticTypes[formatTypeName] = &structType{fields: map[string]*types.Type{}} }

type formatVal struct {
	name     string
	validate func(string) []string
}

func (v formatVal) ConvertToNative(t reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion error from '%s' to '%v'", formatTypeValue, t)
}
func (v formatVal) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case formatTypeValue:
		return v
	case types.TypeType:
		return formatTypeValue
	}
	return types.NewErr("type conversion error from '%s' to '%s'", formatTypeValue, t)
}
func (v formatVal) Equal(o ref.Val) ref.Val {
	x, ok := o.(formatVal)
	if !ok {
		return types.MaybeNoSuchOverloadErr(o)
	}
	return types.Bool(v.name == x.name)
}
func (v formatVal) Type() ref.Type { return formatTypeValue }
func (v formatVal) Value() any     { return v }

func strfmtCheck(name, msg string) func(string) []string {
	return func(s string) []string {
		if !strfmt.Default.Validates(name, s) {
			return []string{msg}
		}
		return nil
	}
}

var formats = map[string]formatVal{
	"dns1123Label":           {"DNS1123Label", func(s string) []string { return apimachineryvalidation.NameIsDNSLabel(s, false) }},
	"dns1123Subdomain":       {"DNS1123Subdomain", func(s string) []string { return apimachineryvalidation.NameIsDNSSubdomain(s, false) }},
	"dns1035Label":           {"DNS1035Label", func(s string) []string { return apimachineryvalidation.NameIsDNS1035Label(s, false) }},
	"qualifiedName":          {"QualifiedName", validation.IsQualifiedName},
	"dns1123LabelPrefix":     {"DNS1123LabelPrefix", func(s string) []string { return apimachineryvalidation.NameIsDNSLabel(s, true) }},
	"dns1123SubdomainPrefix": {"DNS1123SubdomainPrefix", func(s string) []string { return apimachineryvalidation.NameIsDNSSubdomain(s, true) }},
	"dns1035LabelPrefix":     {"DNS1035LabelPrefix", func(s string) []string { return apimachineryvalidation.NameIsDNS1035Label(s, true) }},
	"labelValue":             {"LabelValue", validation.IsValidLabelValue},
	"uri": {"URI", func(s string) []string {
		if _, err := url.ParseRequestURI(s); err != nil {
			return []string{err.Error()}
		}
		return nil
	}},
	"uuid":     {"uuid", strfmtCheck("uuid", "does not match the UUID format")},
	"byte":     {"byte", strfmtCheck("byte", "invalid base64")},
	"date":     {"date", strfmtCheck("date", "invalid date")},
	"datetime": {"datetime", strfmtCheck("datetime", "invalid datetime")},
}

func formatLib() cel.EnvOption {
	opts := []cel.EnvOption{
		cel.Function("validate", cel.MemberOverload("format-validate", []*cel.Type{formatType, cel.StringType}, cel.OptionalType(cel.ListType(cel.StringType)),
			cel.BinaryBinding(func(f, s ref.Val) ref.Val {
				fv, ok := f.(formatVal)
				str, ok2 := s.(types.String)
				if !ok || !ok2 {
					return types.MaybeNoSuchOverloadErr(f)
				}
				if errs := fv.validate(string(str)); len(errs) > 0 {
					return types.OptionalOf(types.NewStringList(types.DefaultTypeAdapter, errs))
				}
				return types.OptionalNone
			}))),
		cel.Function("format.named", cel.Overload("format-named", []*cel.Type{cel.StringType}, cel.OptionalType(formatType),
			cel.UnaryBinding(func(n ref.Val) ref.Val {
				s, ok := n.(types.String)
				if !ok {
					return types.MaybeNoSuchOverloadErr(n)
				}
				f, ok := formats[string(s)]
				if !ok {
					return types.OptionalNone
				}
				return types.OptionalOf(f)
			}))),
	}
	for name, f := range formats {
		f := f
		opts = append(opts, cel.Function("format."+name, cel.Overload("format."+name, []*cel.Type{}, formatType,
			cel.FunctionBinding(func(...ref.Val) ref.Val { return f }))))
	}
	return cel.Lib(simpleLib{opts: opts})
}

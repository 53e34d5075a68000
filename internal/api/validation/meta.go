package validation

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

type nameFunc = apimachineryvalidation.ValidateNameFunc

// pathSegmentName is the name rule of kube's generic registry and of RBAC:
// anything that can sit in a URL path segment.
func pathSegmentName(name string, prefix bool) []string {
	if prefix {
		return content.IsPathSegmentPrefix(name)
	}
	return content.IsPathSegmentName(name)
}

// standardFinalizers are the finalizer names allowed without a domain.
var standardFinalizers = map[string]bool{
	"kubernetes":                     true,
	metav1.FinalizerOrphanDependents: true,
	metav1.FinalizerDeleteDependents: true,
}

// kubeFinalizerName is the extra finalizer rule that kube's core validation
// adds on top of the generic metadata checks.
func kubeFinalizerName(name string, p *field.Path) field.ErrorList {
	if !strings.Contains(name, "/") && !standardFinalizers[name] {
		return field.ErrorList{field.Invalid(p, name, "name is neither a standard finalizer name nor is it fully qualified")}
	}
	return nil
}

// objectMeta is kube's core ValidateObjectMeta, used by the core, apps, rbac,
// discovery and scheduling groups.
func objectMeta(m *metav1.ObjectMeta, namespaced bool, fn nameFunc, p *field.Path) field.ErrorList {
	errs := apimachineryvalidation.ValidateObjectMeta(m, namespaced, fn, p)
	for i, f := range m.Finalizers {
		errs = append(errs, kubeFinalizerName(f, p.Child("finalizers").Index(i))...)
	}
	return errs
}

// objectMetaUpdate is kube's core ValidateObjectMetaUpdate.
func objectMetaUpdate(m, old *metav1.ObjectMeta, p *field.Path) field.ErrorList {
	errs := apimachineryvalidation.ValidateObjectMetaUpdate(m, old, p)
	for i, f := range m.Finalizers {
		errs = append(errs, kubeFinalizerName(f, p.Child("finalizers").Index(i))...)
	}
	return errs
}

var metadataPath = field.NewPath("metadata")

// internal wraps a bad value so that it renders as kube renders the same value
// of its internal type. Internal types carry no JSON tags, so kube's messages
// show Go field names ({"APIGroup":"rbac.authorization.k8s.io",...}) and every
// field, empty or not.
type internal struct{ v any }

func (w internal) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	if err := writeInternal(&buf, reflect.ValueOf(w.v)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeInternal(buf *bytes.Buffer, v reflect.Value) error {
	if !v.IsValid() {
		buf.WriteString("null")
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			buf.WriteString("null")
			return nil
		}
		return writeInternal(buf, v.Elem())
	case reflect.Struct:
		// Only the k8s.io/api types have untagged internal twins; metav1,
		// resource.Quantity and intstr render the same either way.
		if !strings.HasPrefix(v.Type().PkgPath(), "k8s.io/api/") {
			return writeJSON(buf, v)
		}
		buf.WriteByte('{')
		first := true
		if err := writeFields(buf, v, &first); err != nil {
			return err
		}
		buf.WriteByte('}')
		return nil
	case reflect.Slice:
		if v.IsNil() {
			buf.WriteString("null")
			return nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return writeJSON(buf, v)
		}
		buf.WriteByte('[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeInternal(buf, v.Index(i)); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	case reflect.Map:
		if v.IsNil() {
			buf.WriteString("null")
			return nil
		}
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			kb, err := json.Marshal(k.String())
			if err != nil {
				return err
			}
			buf.Write(kb)
			buf.WriteByte(':')
			if err := writeInternal(buf, v.MapIndex(k)); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	default:
		return writeJSON(buf, v)
	}
}

// writeFields writes the exported fields of a struct, flattening embedded
// structs as encoding/json does for untagged embedded fields.
func writeFields(buf *bytes.Buffer, v reflect.Value, first *bool) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		fv := v.Field(i)
		if f.Anonymous && fv.Kind() == reflect.Struct {
			if strings.HasPrefix(f.Type.PkgPath(), "k8s.io/api/") {
				if err := writeFields(buf, fv, first); err != nil {
					return err
				}
				continue
			}
			// An embedded metav1 struct keeps its own tagged fields.
			var inner bytes.Buffer
			if err := writeJSON(&inner, fv); err != nil {
				return err
			}
			body := bytes.TrimSuffix(bytes.TrimPrefix(inner.Bytes(), []byte("{")), []byte("}"))
			if len(body) > 0 {
				if !*first {
					buf.WriteByte(',')
				}
				*first = false
				buf.Write(body)
			}
			continue
		}
		if !*first {
			buf.WriteByte(',')
		}
		*first = false
		kb, err := json.Marshal(f.Name)
		if err != nil {
			return err
		}
		buf.Write(kb)
		buf.WriteByte(':')
		if err := writeInternal(buf, fv); err != nil {
			return err
		}
	}
	return nil
}

func writeJSON(buf *bytes.Buffer, v reflect.Value) error {
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return err
	}
	buf.Write(b)
	return nil
}

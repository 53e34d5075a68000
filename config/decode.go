package config

import (
	"encoding"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
)

// FieldError is a problem with one key. Source is filled in by the loader
// (the file, the environment variable or the flag the value came from).
type FieldError struct {
	Source string
	Key    string
	Msg    string
}

func (e *FieldError) Error() string {
	if e.Source != "" {
		return fmt.Sprintf("%s: %s: %s", e.Source, e.Key, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Key, e.Msg)
}

// Duration is a time.Duration written as a Go duration string ("90s", "1h").
type Duration = time.Duration

var (
	durationType        = reflect.TypeOf(time.Duration(0))
	textUnmarshalerType = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
)

// Decode copies in (maps, slices and scalars as YAML or JSON produce them)
// into out, a pointer to a struct whose fields carry `koanf` tags. It is
// strict: a key with no field is an error, and so is a value of the wrong
// type. Fields absent from in keep what out already holds, which is how
// defaults survive. Errors are *FieldError with the dotted key under path.
//
// Plugins decode their own `config:` blocks with it, so every config error
// in the project reads the same way.
func Decode(in any, out any, path string) error {
	v := reflect.ValueOf(out)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("config.Decode: out must be a non-nil pointer, got %T", out)
	}
	return decodeValue(in, v.Elem(), path)
}

func decodeValue(in any, v reflect.Value, key string) error {
	if in == nil {
		// An explicit null (`config:` with nothing after it) keeps the default.
		return nil
	}
	if v.CanAddr() && v.Addr().Type().Implements(textUnmarshalerType) {
		s, ok := scalarString(in)
		if !ok {
			return typeErr(key, "a string", in)
		}
		if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			return &FieldError{Key: key, Msg: err.Error()}
		}
		return nil
	}
	if v.Type() == durationType {
		return decodeDuration(in, v, key)
	}
	switch v.Kind() {
	case reflect.Struct:
		m, ok := in.(map[string]any)
		if !ok {
			return typeErr(key, "a mapping", in)
		}
		return decodeStruct(m, v, key)
	case reflect.Pointer:
		elem := reflect.New(v.Type().Elem())
		if !v.IsNil() {
			elem.Elem().Set(v.Elem())
		}
		if err := decodeValue(in, elem.Elem(), key); err != nil {
			return err
		}
		v.Set(elem)
		return nil
	case reflect.Slice:
		return decodeSlice(in, v, key)
	case reflect.Map:
		m, ok := in.(map[string]any)
		if !ok {
			return typeErr(key, "a mapping", in)
		}
		if v.Type().Key().Kind() != reflect.String {
			return fmt.Errorf("config.Decode: %s: unsupported map key type %s", key, v.Type().Key())
		}
		out := reflect.MakeMapWithSize(v.Type(), len(m))
		for _, k := range sortedKeys(m) {
			ev := reflect.New(v.Type().Elem()).Elem()
			if err := decodeValue(m[k], ev, join(key, k)); err != nil {
				return err
			}
			out.SetMapIndex(reflect.ValueOf(k).Convert(v.Type().Key()), ev)
		}
		v.Set(out)
		return nil
	case reflect.Interface:
		v.Set(reflect.ValueOf(in))
		return nil
	case reflect.String:
		s, ok := scalarString(in)
		if !ok {
			return typeErr(key, "a string", in)
		}
		v.SetString(s)
		return nil
	case reflect.Bool:
		switch b := in.(type) {
		case bool:
			v.SetBool(b)
			return nil
		case string: // from the environment and flags
			pb, err := strconv.ParseBool(b)
			if err != nil {
				return typeErr(key, "true or false", in)
			}
			v.SetBool(pb)
			return nil
		}
		return typeErr(key, "true or false", in)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := toInt(in)
		if !ok || v.OverflowInt(n) {
			return typeErr(key, "an integer", in)
		}
		v.SetInt(n)
		return nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := toInt(in)
		if !ok || n < 0 || v.OverflowUint(uint64(n)) {
			return typeErr(key, "a non-negative integer", in)
		}
		v.SetUint(uint64(n))
		return nil
	case reflect.Float32, reflect.Float64:
		f, ok := toFloat(in)
		if !ok {
			return typeErr(key, "a number", in)
		}
		v.SetFloat(f)
		return nil
	}
	return fmt.Errorf("config.Decode: %s: unsupported field type %s", key, v.Type())
}

func decodeStruct(m map[string]any, v reflect.Value, key string) error {
	fields := fieldIndex(v.Type())
	for _, k := range sortedKeys(m) {
		idx, ok := fields[k]
		if !ok {
			return &FieldError{Key: join(key, k), Msg: "unknown key" + suggest(k, fields)}
		}
		if err := decodeValue(m[k], v.FieldByIndex(idx), join(key, k)); err != nil {
			return err
		}
	}
	return nil
}

func decodeSlice(in any, v reflect.Value, key string) error {
	var items []any
	switch t := in.(type) {
	case []any:
		items = t
	case string:
		// The environment and flags give lists as "a,b,c".
		if t != "" {
			for _, s := range strings.Split(t, ",") {
				items = append(items, strings.TrimSpace(s))
			}
		}
	default:
		rv := reflect.ValueOf(in)
		if rv.Kind() != reflect.Slice {
			return typeErr(key, "a list", in)
		}
		for i := 0; i < rv.Len(); i++ {
			items = append(items, rv.Index(i).Interface())
		}
	}
	out := reflect.MakeSlice(v.Type(), len(items), len(items))
	for i, item := range items {
		if err := decodeValue(item, out.Index(i), fmt.Sprintf("%s[%d]", key, i)); err != nil {
			return err
		}
	}
	v.Set(out)
	return nil
}

func decodeDuration(in any, v reflect.Value, key string) error {
	switch t := in.(type) {
	case string:
		d, err := time.ParseDuration(t)
		if err != nil {
			return &FieldError{Key: key, Msg: fmt.Sprintf("invalid duration %q: want a number with a unit, like 30s or 5m", t)}
		}
		v.SetInt(int64(d))
		return nil
	default:
		// A bare 0 is unambiguous; any other bare number is not.
		if n, ok := toInt(in); ok && n == 0 {
			v.SetInt(0)
			return nil
		}
	}
	return &FieldError{Key: key, Msg: fmt.Sprintf("invalid duration %v: want a number with a unit, like 30s or 5m", in)}
}

// fieldIndex maps koanf tag names to field indexes, following embedded
// structs tagged with ",squash".
func fieldIndex(t reflect.Type) map[string][]int {
	out := map[string][]int{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("koanf")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if opts == "squash" && f.Type.Kind() == reflect.Struct {
			for k, idx := range fieldIndex(f.Type) {
				out[k] = append([]int{i}, idx...)
			}
			continue
		}
		if name == "" {
			continue
		}
		out[name] = []int{i}
	}
	return out
}

// Keys lists the dotted leaf keys of a config struct type, with their
// current values in v. `apiserver plugins` and the env mapping use it.
func Keys(v any) []KeyValue {
	var out []KeyValue
	walkKeys(reflect.ValueOf(v), "", &out)
	return out
}

// KeyValue is one leaf of a config struct.
type KeyValue struct {
	Key   string
	Value any
}

func walkKeys(v reflect.Value, prefix string, out *[]KeyValue) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v = reflect.New(v.Type().Elem()).Elem()
			break
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct || v.Type() == durationType || reflect.PointerTo(v.Type()).Implements(textUnmarshalerType) {
		*out = append(*out, KeyValue{Key: prefix, Value: v.Interface()})
		return
	}
	fields := fieldIndex(v.Type())
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		walkKeys(v.FieldByIndex(fields[k]), join(prefix, k), out)
	}
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// suggest points at the key the user probably meant: the commonest mistake
// is a different capitalisation.
func suggest(k string, fields map[string][]int) string {
	for name := range fields {
		if strings.EqualFold(name, k) {
			return fmt.Sprintf(" (did you mean %q?)", name)
		}
	}
	return ""
}

func scalarString(in any) (string, bool) {
	switch t := in.(type) {
	case string:
		return t, true
	case int, int64, uint64, float64, bool:
		// YAML turns `version: 1` into an int; a string field takes it as written.
		return fmt.Sprint(t), true
	}
	return "", false
}

func toInt(in any) (int64, bool) {
	switch t := in.(type) {
	case int:
		return int64(t), true
	case int64:
		return t, true
	case uint64:
		if t > 1<<63-1 {
			return 0, false
		}
		return int64(t), true
	case float64:
		if t != float64(int64(t)) {
			return 0, false
		}
		return int64(t), true
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
		return n, err == nil
	}
	return 0, false
}

func toFloat(in any) (float64, bool) {
	switch t := in.(type) {
	case int:
		return float64(t), true
	case int64:
		return float64(t), true
	case uint64:
		return float64(t), true
	case float64:
		return t, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
		return f, err == nil
	}
	return 0, false
}

func typeErr(key, want string, got any) error {
	return &FieldError{Key: key, Msg: fmt.Sprintf("want %s, got %s", want, describe(got))}
}

func describe(v any) string {
	switch t := v.(type) {
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case string:
		return fmt.Sprintf("%q", t)
	default:
		return fmt.Sprintf("%v", t)
	}
}

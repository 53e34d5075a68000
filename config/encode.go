package config

import (
	"reflect"
	"time"
)

// ToMap turns a config struct into maps, lists and scalars keyed by the
// koanf tags, so what kpipe prints (config print, /debug/pipeline,
// apiserver plugins) uses the same keys the file does. Durations print as
// "1m0s".
func ToMap(v any) any {
	return encodeValue(reflect.ValueOf(v))
}

func encodeValue(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	if v.Type() == durationType {
		return time.Duration(v.Int()).String()
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return encodeValue(v.Elem())
	case reflect.Struct:
		out := map[string]any{}
		for k, idx := range fieldIndex(v.Type()) {
			out[k] = encodeValue(v.FieldByIndex(idx))
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return []any{}
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = encodeValue(v.Index(i))
		}
		return out
	case reflect.Map:
		out := map[string]any{}
		iter := v.MapRange()
		for iter.Next() {
			out[iter.Key().String()] = encodeValue(iter.Value())
		}
		return out
	}
	return v.Interface()
}

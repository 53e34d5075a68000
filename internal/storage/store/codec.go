package store

import (
	stdjson "encoding/json"
	"reflect"
	"sync"
	"time"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/intstr"
	kjson "sigs.k8s.io/json"
)

// NewJSONCodec returns a codec that stores objects as JSON in version gv,
// with apiVersion and kind set, and decodes them back into typed objects.
// scheme must know the stored types (for example client-go's
// kubernetes/scheme).
func NewJSONCodec(scheme *runtime.Scheme, gv schema.GroupVersion) Codec {
	s := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{})
	return &jsonCodec{Codec: serializer.NewCodecFactory(scheme).CodecForVersions(s, s, gv, gv), scheme: scheme, gv: gv}
}

// jsonCodec decodes an object stored in gv straight into its typed
// object: one pass over the bytes rather than a first one to find the
// kind. The result is what the full codec gives (the same unmarshalling
// and defaulting); anything else (another version, no kind, bad JSON, an
// untyped target) takes the full codec's path, on a target zeroed again:
// the store hands in zeroed targets, so that is the same.
type jsonCodec struct {
	runtime.Codec
	scheme *runtime.Scheme
	gv     schema.GroupVersion
	kinds  sync.Map // reflect.Type: whether encodesAs
}

func (c *jsonCodec) Decode(data []byte, defaultGVK *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if defaultGVK == nil && direct(into) {
		if err := kjson.UnmarshalCaseSensitivePreserveInts(data, into); err == nil {
			gvk := into.GetObjectKind().GroupVersionKind()
			if gvk.GroupVersion() == c.gv && gvk.Kind != "" && c.registered(into, gvk) {
				c.scheme.Default(into)
				return into, &gvk, nil
			}
		}
		if err := runtime.SetZeroValue(into); err != nil {
			return nil, nil, err
		}
	}
	return c.Codec.Decode(data, defaultGVK, into)
}

// direct reports whether into is a plain typed object the JSON
// serializer would unmarshal into as it is.
func direct(into runtime.Object) bool {
	switch into.(type) {
	case nil, runtime.Unstructured, *runtime.Unknown, runtime.NestedObjectDecoder:
		return false
	}
	return true
}

func (c *jsonCodec) registered(into runtime.Object, gvk schema.GroupVersionKind) bool {
	kinds, _, err := c.scheme.ObjectKinds(into)
	if err != nil {
		return false
	}
	for _, k := range kinds {
		if k == gvk {
			return true
		}
	}
	return false
}

// writtenCopier is a codec that can give what decoding an object's
// encoding gives without the decode: after a create or an update, the
// store returns a copy of the object it wrote instead of decoding the
// bytes it just wrote.
type writtenCopier interface {
	// copyWritten fills out as decoding obj's encoding into out would,
	// and reports whether it could; out is then left for the decode.
	copyWritten(obj, out runtime.Object) bool
}

// copyWritten stands in for the decode of obj's encoding into out with a
// deep copy, for plain typed objects of a kind registered in c's version,
// the ones the JSON round trip gives back field for field. It does what
// the round trip does besides: selfLink (never stored) goes, TypeMeta is
// emptied as decode empties it, the scheme's defaults are applied as
// Decode applies them, and metadata times lose their sub-second part,
// which JSON does not carry (the encoders drop it anyway; a Table's ages
// would not). Unstructured objects, whose numbers JSON retypes, always
// take the decode.
func (c *jsonCodec) copyWritten(obj, out runtime.Object) bool {
	if !direct(obj) || !direct(out) {
		return false
	}
	ov, iv := reflect.ValueOf(out), reflect.ValueOf(obj)
	if ov.Type() != iv.Type() || ov.Kind() != reflect.Pointer || ov.IsNil() || iv.IsNil() || !c.copies(obj) {
		return false
	}
	m, err := meta.Accessor(out)
	if err != nil {
		return false
	}
	ov.Elem().Set(reflect.ValueOf(obj.DeepCopyObject()).Elem())
	c.scheme.Default(out)
	out.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	m.SetSelfLink("")
	if t := m.GetCreationTimestamp(); !t.IsZero() {
		m.SetCreationTimestamp(jsonTime(t))
	}
	if t := m.GetDeletionTimestamp(); t != nil {
		jt := jsonTime(*t)
		m.SetDeletionTimestamp(&jt)
	}
	for i, mf := range m.GetManagedFields() {
		if mf.Time != nil {
			// The slice is the copy's own.
			jt := jsonTime(*mf.Time)
			m.GetManagedFields()[i].Time = &jt
		}
	}
	return true
}

// jsonTime is t as it comes back from JSON: whole seconds, local time.
func jsonTime(t metav1.Time) metav1.Time {
	return metav1.NewTime(t.Truncate(time.Second).Local())
}

// copies reports whether a copy of obj is what the JSON round trip gives
// back: its type is a kind of c's version (the encoder writes it without
// a conversion, and decode takes the direct path), and roundTrips says
// its fields come back as they are. Worked out once per type.
func (c *jsonCodec) copies(obj runtime.Object) bool {
	t := reflect.TypeOf(obj)
	if v, ok := c.kinds.Load(t); ok {
		return v.(bool)
	}
	ok := false
	if kinds, _, err := c.scheme.ObjectKinds(obj); err == nil {
		for _, k := range kinds {
			if k.GroupVersion() == c.gv {
				ok = roundTrips(t.Elem(), map[reflect.Type]bool{})
				break
			}
		}
	}
	c.kinds.Store(t, ok)
	return ok
}

var (
	objectMetaType = reflect.TypeFor[metav1.ObjectMeta]()
	typeMetaType   = reflect.TypeFor[metav1.TypeMeta]()
	// Leaves whose JSON form carries all they hold.
	exactLeaves = map[reflect.Type]bool{
		reflect.TypeFor[resource.Quantity]():  true, // canonical either way
		reflect.TypeFor[intstr.IntOrString](): true,
		reflect.TypeFor[metav1.FieldsV1]():    true,
	}
	// Leaves JSON truncates (times) or whose content is open (raw
	// objects): a copy would differ from the decode.
	lossyLeaves = map[reflect.Type]bool{
		reflect.TypeFor[metav1.Time]():          true,
		reflect.TypeFor[metav1.MicroTime]():     true,
		reflect.TypeFor[time.Time]():            true,
		reflect.TypeFor[runtime.RawExtension](): true,
	}
	jsonMarshaler   = reflect.TypeFor[stdjson.Marshaler]()
	jsonUnmarshaler = reflect.TypeFor[stdjson.Unmarshaler]()
)

// roundTrips reports whether every value of t comes back from JSON as it
// went in, up to nil versus empty slices and maps (which encode alike):
// no times (JSON keeps whole seconds; ObjectMeta's are truncated by
// copyWritten), no interfaces, no fields JSON skips, no custom encodings
// but the exact ones. seen breaks cycles.
func roundTrips(t reflect.Type, seen map[reflect.Type]bool) bool {
	if t == objectMetaType || t == typeMetaType || exactLeaves[t] {
		return true
	}
	if lossyLeaves[t] {
		return false
	}
	if done, ok := seen[t]; ok {
		return done
	}
	seen[t] = true
	if t.Implements(jsonMarshaler) || t.Implements(jsonUnmarshaler) ||
		reflect.PointerTo(t).Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		seen[t] = false
		return false
	}
	ok := true
	switch t.Kind() {
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
	case reflect.Pointer, reflect.Slice, reflect.Array:
		ok = roundTrips(t.Elem(), seen)
	case reflect.Map:
		ok = roundTrips(t.Key(), seen) && roundTrips(t.Elem(), seen)
	case reflect.Struct:
		for i := 0; i < t.NumField() && ok; i++ {
			f := t.Field(i)
			ok = f.IsExported() && f.Tag.Get("json") != "-" && roundTrips(f.Type, seen)
		}
	default: // interfaces, channels, functions, complex numbers
		ok = false
	}
	seen[t] = ok
	return ok
}

// bytesAsString is b as a string without a copy, for a call that copies
// it straight back into bytes (clientv3.OpPut) and keeps nothing; b must
// not change while the string is in use.
func bytesAsString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

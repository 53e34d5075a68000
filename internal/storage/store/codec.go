package store

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
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

package store

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
)

// NewJSONCodec returns a codec that stores objects as JSON in version gv,
// with apiVersion and kind set, and decodes them back into typed objects.
// scheme must know the stored types (for example client-go's
// kubernetes/scheme).
func NewJSONCodec(scheme *runtime.Scheme, gv schema.GroupVersion) Codec {
	s := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{})
	return serializer.NewCodecFactory(scheme).CodecForVersions(s, s, gv, gv)
}

package api

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// Scheme holds every served type, k8s.io/api's, and meta.k8s.io's Table
// and PartialObjectMetadata.
var Scheme = newScheme()

// Codecs serialize what Scheme holds: JSON, YAML, protobuf and CBOR.
var Codecs = serializer.NewCodecFactory(Scheme)

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	// Query parameters decode into meta.k8s.io/v1's option types.
	metav1.AddToGroupVersion(s, metav1.SchemeGroupVersion)
	if err := metav1.AddMetaToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// ParameterCodec decodes query parameters into option structs.
var ParameterCodec = runtime.NewParameterCodec(Scheme)

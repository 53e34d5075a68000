package openapi

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/util/proto"
)

// TestExplainV2 walks the v2 document the way kubectl explain does: fetch
// it as protobuf through client-go's discovery, load it into proto.Models,
// find the model tagged with the kind and follow field paths.
func TestExplainV2(t *testing.T) {
	srv := newServer(t)
	dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := dc.OpenAPISchema()
	if err != nil {
		t.Fatalf("OpenAPISchema: %v", err)
	}
	models, err := proto.NewOpenAPIData(doc)
	if err != nil {
		t.Fatalf("NewOpenAPIData: %v", err)
	}

	name := modelForGVK(models, deployGVK)
	if name != "io.k8s.api.apps.v1.Deployment" {
		t.Fatalf("model for %v = %q", deployGVK, name)
	}

	cases := []struct {
		name  string
		model string
		path  []string
		want  string // the primitive type at the end, or "" for an object
	}{
		{"spec.replicas", "io.k8s.api.apps.v1.Deployment", []string{"spec", "replicas"}, "integer"},
		{"spec.template.spec.containers.image", "io.k8s.api.apps.v1.Deployment", []string{"spec", "template", "spec", "containers", "image"}, "string"},
		{"metadata.name", "io.k8s.api.core.v1.ConfigMap", []string{"metadata", "name"}, "string"},
		{"scale spec", "io.k8s.api.autoscaling.v1.Scale", []string{"spec"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := models.LookupModel(tc.model)
			if s == nil {
				t.Fatalf("no model %s", tc.model)
			}
			for _, field := range tc.path {
				k, ok := deref(s).(*proto.Kind)
				if !ok {
					t.Fatalf("%s: %T is not an object", field, deref(s))
				}
				if s = k.Fields[field]; s == nil {
					t.Fatalf("no field %s in %s", field, k.GetPath())
				}
			}
			switch end := deref(s).(type) {
			case *proto.Primitive:
				if end.Type != tc.want {
					t.Errorf("type %s, want %s", end.Type, tc.want)
				}
			case *proto.Kind:
				if tc.want != "" {
					t.Errorf("an object, want %s", tc.want)
				}
			default:
				t.Errorf("unexpected %T", end)
			}
			if s.GetDescription() == "" {
				t.Error("no description to explain")
			}
		})
	}
}

// deref follows references and array items to the schema underneath.
func deref(s proto.Schema) proto.Schema {
	for {
		switch x := s.(type) {
		case proto.Reference:
			s = x.SubSchema()
		case *proto.Array:
			s = x.SubType
		default:
			return s
		}
	}
}

// modelForGVK finds a model by its x-kubernetes-group-version-kind, as
// kubectl maps a kind to its schema.
func modelForGVK(models proto.Models, gvk schema.GroupVersionKind) string {
	for _, name := range models.ListModels() {
		list, _ := models.LookupModel(name).GetExtensions()["x-kubernetes-group-version-kind"].([]interface{})
		for _, item := range list {
			m, ok := item.(map[interface{}]interface{})
			if !ok {
				continue
			}
			if m["group"] == gvk.Group && m["version"] == gvk.Version && m["kind"] == gvk.Kind {
				return name
			}
		}
	}
	return ""
}

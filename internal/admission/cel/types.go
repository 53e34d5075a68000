package cel

import (
	"sort"
	"strings"
	"sync"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kpipe/kpipe/internal/api/openapi/generated"
)

// structType is an object type known to the checker: its fields and their
// types. Values of these types are plain maps at runtime (the unstructured
// form of the object), which CEL's field selection reads by key; getters
// are only set for the lazily evaluated composited variables.
type structType struct {
	fields map[string]*types.Type
	getter func(field string) ref.FieldGetter
}

// provider answers the checker's questions about kube's object types (the
// admission request, the namespace object, the OpenAPI schemas of served
// kinds, a policy's variables) on top of CEL's own registry.
type provider struct {
	types.Provider
	local map[string]*structType
}

func (p *provider) lookup(name string) (*structType, bool) {
	if s, ok := p.local[name]; ok {
		return s, true
	}
	if s, ok := staticTypes[name]; ok {
		return s, true
	}
	return schemas.structType(name)
}

// FindStructType implements types.Provider.
func (p *provider) FindStructType(name string) (*types.Type, bool) {
	if _, ok := p.lookup(name); ok {
		return types.NewTypeTypeWithParam(types.NewObjectType(name)), true
	}
	return p.Provider.FindStructType(name)
}

// FindStructFieldNames implements types.Provider.
func (p *provider) FindStructFieldNames(name string) ([]string, bool) {
	if s, ok := p.lookup(name); ok {
		names := make([]string, 0, len(s.fields))
		for n := range s.fields {
			names = append(names, n)
		}
		sort.Strings(names)
		return names, true
	}
	return p.Provider.FindStructFieldNames(name)
}

// FindStructFieldType implements types.Provider.
func (p *provider) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	if s, ok := p.lookup(name); ok {
		t, ok := s.fields[field]
		if !ok {
			return nil, false
		}
		ft := &types.FieldType{Type: t}
		if s.getter != nil {
			ft.IsSet = func(any) bool { return true }
			ft.GetFrom = s.getter(field)
		}
		return ft, true
	}
	return p.Provider.FindStructFieldType(name, field)
}

// Type names of the request and namespace objects, kube's.
const (
	requestTypeName   = "kubernetes.AdmissionRequest"
	namespaceTypeName = "kubernetes.Namespace"
)

var (
	stringList = types.NewListType(types.StringType)
	stringMap  = types.NewMapType(types.StringType, types.StringType)
)

// staticTypes are kube's declarations of `request` and `namespaceObject`
// (BuildRequestType, BuildNamespaceType).
var staticTypes = map[string]*structType{
	"kubernetes.GroupVersionKind":     {fields: map[string]*types.Type{"group": types.StringType, "version": types.StringType, "kind": types.StringType}},
	"kubernetes.GroupVersionResource": {fields: map[string]*types.Type{"group": types.StringType, "version": types.StringType, "resource": types.StringType}},
	"kubernetes.UserInfo": {fields: map[string]*types.Type{
		"username": types.StringType, "uid": types.StringType, "groups": stringList,
		"extra": types.NewMapType(types.StringType, stringList),
	}},
	requestTypeName: {fields: map[string]*types.Type{
		"kind": types.NewObjectType("kubernetes.GroupVersionKind"), "resource": types.NewObjectType("kubernetes.GroupVersionResource"),
		"subResource": types.StringType, "requestKind": types.NewObjectType("kubernetes.GroupVersionKind"),
		"requestResource": types.NewObjectType("kubernetes.GroupVersionResource"), "requestSubResource": types.StringType,
		"name": types.StringType, "namespace": types.StringType, "operation": types.StringType,
		"userInfo": types.NewObjectType("kubernetes.UserInfo"), "dryRun": types.BoolType, "options": types.DynType,
	}},
	"kubernetes.NamespaceSpec": {fields: map[string]*types.Type{"finalizers": stringList}},
	"kubernetes.NamespaceCondition": {fields: map[string]*types.Type{
		"status": types.StringType, "type": types.StringType, "lastTransitionTime": types.TimestampType,
		"message": types.StringType, "reason": types.StringType,
	}},
	"kubernetes.NamespaceStatus": {fields: map[string]*types.Type{
		"conditions": types.NewListType(types.NewObjectType("kubernetes.NamespaceCondition")), "phase": types.StringType,
	}},
	"kubernetes.NamespaceMetadata": {fields: map[string]*types.Type{
		"name": types.StringType, "generateName": types.StringType, "namespace": types.StringType,
		"labels": stringMap, "annotations": stringMap, "UID": types.StringType,
		"creationTimestamp": types.TimestampType, "deletionGracePeriodSeconds": types.IntType,
		"deletionTimestamp": types.TimestampType, "generation": types.IntType,
		"resourceVersion": types.StringType, "finalizers": stringList,
	}},
	namespaceTypeName: {fields: map[string]*types.Type{
		"metadata": types.NewObjectType("kubernetes.NamespaceMetadata"),
		"spec":     types.NewObjectType("kubernetes.NamespaceSpec"),
		"status":   types.NewObjectType("kubernetes.NamespaceStatus"),
	}},
}

// schemaTypes turns the served types' generated OpenAPI definitions into
// CEL object types, as kube's type checker does with the schemas it
// resolves: objects with properties become object types, maps and lists
// keep their element types, int-or-string is dyn, date-time a timestamp.
// Nested inline objects are named after their parent and field.
type schemaTypes struct {
	once  sync.Once
	defs  map[string]common.OpenAPIDefinition
	mu    sync.Mutex
	built map[string]*structType
	// inline holds the schemas of nested inline objects by their name.
	inline map[string]*spec.Schema
}

var schemas = &schemaTypes{}

const refPrefix = "#/definitions/"

func (s *schemaTypes) load() {
	s.once.Do(func() {
		s.defs = generated.GetOpenAPIDefinitions(func(name string) spec.Ref {
			return spec.MustCreateRef(refPrefix + name)
		})
		s.built = map[string]*structType{}
		s.inline = map[string]*spec.Schema{}
	})
}

// HasModel reports a generated definition named name (a Go type's
// OpenAPIModelName, "io.k8s.api.apps.v1.Deployment").
func HasModel(name string) bool {
	schemas.load()
	d, ok := schemas.defs[name]
	return ok && d.Schema.Type.Contains("object") && len(d.Schema.Properties) > 0
}

func (s *schemaTypes) structType(name string) (*structType, bool) {
	s.load()
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.built[name]; ok {
		return t, true
	}
	var sch *spec.Schema
	if d, ok := s.defs[name]; ok && d.Schema.Type.Contains("object") && d.Schema.AdditionalProperties == nil {
		sch = &d.Schema
	} else if in, ok := s.inline[name]; ok {
		sch = in
	} else {
		return nil, false
	}
	t := &structType{fields: map[string]*types.Type{}}
	s.built[name] = t
	for field, prop := range sch.Properties {
		if ft := s.typeOf(&prop, name+"."+field); ft != nil {
			t.fields[field] = ft
		}
	}
	return t, true
}

// typeOf is the CEL type of a schema; nil leaves the field out, as kube
// does for schemas it cannot express. owner names a nested inline object.
// Called with s.mu held.
func (s *schemaTypes) typeOf(sch *spec.Schema, owner string) *types.Type {
	if ref := sch.Ref.String(); ref != "" {
		name := strings.TrimPrefix(ref, refPrefix)
		d, ok := s.defs[name]
		if !ok {
			return nil
		}
		if d.Schema.Type.Contains("object") && d.Schema.AdditionalProperties == nil {
			return types.NewObjectType(name)
		}
		return s.typeOf(&d.Schema, name)
	}
	if len(sch.AllOf) == 1 {
		return s.typeOf(&sch.AllOf[0], owner)
	}
	if sch.Format == "int-or-string" || (len(sch.Type) == 0 && len(sch.OneOf) > 0) {
		// int-or-string and quantities (a oneOf of string and number)
		return types.DynType
	}
	if v, ok := sch.Extensions.GetBool("x-kubernetes-int-or-string"); ok && v {
		return types.DynType
	}
	switch {
	case sch.Type.Contains("array"):
		if sch.Items == nil || sch.Items.Schema == nil {
			return nil
		}
		et := s.typeOf(sch.Items.Schema, owner)
		if et == nil {
			return nil
		}
		return types.NewListType(et)
	case sch.Type.Contains("object"):
		if sch.AdditionalProperties != nil && sch.AdditionalProperties.Schema != nil {
			vt := s.typeOf(sch.AdditionalProperties.Schema, owner)
			if vt == nil {
				return nil
			}
			return types.NewMapType(types.StringType, vt)
		}
		s.inline[owner] = sch
		return types.NewObjectType(owner)
	case sch.Type.Contains("string"):
		switch sch.Format {
		case "byte":
			return types.BytesType
		case "duration":
			return types.DurationType
		case "date", "date-time":
			return types.TimestampType
		}
		return types.StringType
	case sch.Type.Contains("boolean"):
		return types.BoolType
	case sch.Type.Contains("number"):
		return types.DoubleType
	case sch.Type.Contains("integer"):
		return types.IntType
	}
	return nil
}

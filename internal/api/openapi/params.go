package openapi

import (
	"reflect"
	"strings"

	"k8s.io/kube-openapi/pkg/common"
)

// param is one route parameter in kube-openapi's terms.
type param struct {
	name        string
	description string
	required    bool
	kind        common.ParameterKind
	dataType    string
}

var _ common.Parameter = param{}

func (p param) Name() string               { return p.name }
func (p param) Description() string        { return p.description }
func (p param) Required() bool             { return p.required }
func (p param) Kind() common.ParameterKind { return p.kind }
func (p param) DataType() string           { return p.dataType }
func (p param) AllowMultiple() bool        { return false }
func queryParam(name, desc, typ string) param {
	return param{name: name, description: desc, kind: common.QueryParameterKind, dataType: typ}
}
func pathParam(name, desc string) param {
	return param{name: name, description: desc, required: true, kind: common.PathParameterKind, dataType: "string"}
}

// bodyParam's data type is unused: the builders take the schema from the
// route's request sample.
func bodyParam(required bool) param {
	return param{name: "body", required: required, kind: common.BodyParameterKind}
}

var prettyParam = queryParam("pretty", "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget).", "string")

type swaggerDocumented interface{ SwaggerDoc() map[string]string }

// optionParams lists an options struct's top-level scalar fields as query
// parameters named by their JSON names and described by the type's
// SwaggerDoc, which is where kube's dryRun, fieldValidation, labelSelector
// and so on come from. Struct-valued fields (TypeMeta, Preconditions,
// sinceTime) are not query parameters in kube's spec, so they are left out
// here too.
func optionParams(opts interface{}, exclude ...string) []param {
	t := reflect.TypeOf(opts)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var docs map[string]string
	if d, ok := reflect.New(t).Elem().Interface().(swaggerDocumented); ok {
		docs = d.SwaggerDoc()
	}
	var out []param
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || contains(exclude, name) {
			continue
		}
		typ := queryType(f.Type)
		if typ == "" {
			continue
		}
		out = append(out, queryParam(name, docs[name], typ))
	}
	return out
}

// queryType is the JSON type of a query parameter of Go type t, or "" for
// types that are not passed in the query. Lists are described by their
// element type, as kube does.
func queryType(t reflect.Type) string {
	if t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

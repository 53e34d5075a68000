// Package openapi serves /openapi/v2 and /openapi/v3 for the served
// resources, with the paths, operations and definitions kube-apiserver
// publishes, so kubectl's validation, explain and apply work unchanged.
//
// Routes are described here the way kube-apiserver's installer lays them
// out, then kube-openapi's builder and builder3 turn them into documents and
// its handler and handler3 serve them (ETag, protobuf, gzip, hashed v3 URLs).
package openapi

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/go-chi/chi/v5"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/builder"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/handler"
	"k8s.io/kube-openapi/pkg/handler3"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kpipe/kpipe/internal/api/openapi/generated"
	"github.com/kpipe/kpipe/internal/version"
)

// Resource is what the builder needs to know of one served resource.
type Resource struct {
	GroupVersion schema.GroupVersion
	Resource     string // plural, e.g. "deployments"
	Kind         string // "Deployment"
	Namespaced   bool
	Verbs        []string // subset of get list watch create update patch delete deletecollection
	Subresources []Subresource
}

// Subresource is a path below an object, such as status or scale.
type Subresource struct {
	Name string
	Kind string
	// GroupVersion of Kind, e.g. autoscaling/v1 for Scale.
	GroupVersion schema.GroupVersion
	Verbs        []string
}

const (
	v2Path = "/openapi/v2"
	v3Path = "/openapi/v3"
)

// Install serves /openapi/v2 (JSON, and protobuf when Accept asks for
// application/com.github.proto-openapi.spec.v2@v1.0+protobuf, with ETag as
// kube does), /openapi/v3 (the discovery document listing "api/v1",
// "apis/apps/v1", ..., each with a serverRelativeURL carrying a hash) and
// /openapi/v3/<path> (one group-version's document, JSON and protobuf).
// r must be the root router: the v3 handler reads the group-version from
// the full request path.
//
// The documents are built on the first request to either path, not at
// startup: they take a good part of a second and tens of megabytes, and
// most clients never ask for them.
func Install(r chi.Router, resources []Resource) error {
	// What Build would refuse is refused now, cheaply.
	b, err := newRouteBuilder(resources)
	if err != nil {
		return err
	}
	if _, err := b.containers(); err != nil {
		return err
	}
	var (
		once  sync.Once
		inner chi.Router
	)
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		once.Do(func() {
			inner = chi.NewRouter()
			err = install(inner, resources)
		})
		if err != nil {
			http.Error(w, fmt.Sprintf("openapi: %v", err), http.StatusInternalServerError)
			return
		}
		// The inner router routes the full path afresh.
		inner.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), chi.RouteCtxKey, nil)))
	})
	r.Handle(v2Path, h)
	r.Handle(v3Path, h)
	r.Handle(v3Path+"/*", h)
	return nil
}

func install(r chi.Router, resources []Resource) error {
	v2, v3, err := Build(resources)
	if err != nil {
		return err
	}
	handler.NewOpenAPIService(v2).RegisterOpenAPIVersionedService(v2Path, r)

	svc := handler3.NewOpenAPIService()
	known := make(map[string]bool, len(v3))
	for name, doc := range v3 {
		svc.UpdateGroupVersion(name, doc)
		known[name] = true
	}
	return svc.RegisterOpenAPIV3VersionedService(v3Path, v3Mux{Router: r, known: known})
}

// Build returns the v2 document and the v3 documents keyed by their path
// under /openapi/v3 ("api/v1", "apis/apps/v1", "version", ...).
func Build(resources []Resource) (*spec.Swagger, map[string]*spec3.OpenAPI, error) {
	b, err := newRouteBuilder(resources)
	if err != nil {
		return nil, nil, err
	}
	containers, err := b.containers()
	if err != nil {
		return nil, nil, err
	}
	namer := newDefinitionNamer(b.scheme, b.servedGroupVersions())

	v2, err := builder.BuildOpenAPISpecFromRoutes(containers, v2Config(namer))
	if err != nil {
		return nil, nil, fmt.Errorf("openapi v2: %w", err)
	}
	// kube serves v2 without defaults: they are v3-only information.
	v2.Definitions = handler.PruneDefaults(v2.Definitions)

	cfg := v3Config(namer)
	v3 := make(map[string]*spec3.OpenAPI, len(containers))
	for _, c := range containers {
		name := strings.TrimPrefix(c.RootPath(), "/")
		doc, err := builder3.BuildOpenAPISpecFromRoutes([]common.RouteContainer{c}, cfg)
		if err != nil {
			return nil, nil, fmt.Errorf("openapi v3 %s: %w", name, err)
		}
		if gv, ok := groupVersionOfPath(name); ok {
			narrowSharedGVKs(doc, gv)
		}
		v3[name] = doc
	}
	return v2, v3, nil
}

// info is what kube-apiserver puts there: its title and the version
// without build metadata.
func info() *spec.Info {
	return &spec.Info{InfoProps: spec.InfoProps{
		Title:   "Kubernetes",
		Version: strings.SplitN(version.Get().GitVersion, "-", 2)[0],
	}}
}

// Bearer tokens are accepted, so both documents say so as kube's do; every
// operation may also answer 401.
const bearerToken = "BearerToken"

func v2Config(namer *definitionNamer) *common.Config {
	return &common.Config{
		ProtocolList: []string{"https"},
		Info:         info(),
		DefaultResponse: &spec.Response{ResponseProps: spec.ResponseProps{
			Description: "Default Response.",
		}},
		CommonResponses: map[int]spec.Response{
			http.StatusUnauthorized: {ResponseProps: spec.ResponseProps{Description: "Unauthorized"}},
		},
		SecurityDefinitions: &spec.SecurityDefinitions{
			bearerToken: &spec.SecurityScheme{SecuritySchemeProps: spec.SecuritySchemeProps{
				Type: "apiKey", Name: "authorization", In: "header", Description: "Bearer Token authentication",
			}},
		},
		DefaultSecurity:                []map[string][]string{{bearerToken: {}}},
		GetDefinitions:                 generated.GetOpenAPIDefinitions,
		GetDefinitionName:              namer.name,
		GetOperationIDAndTagsFromRoute: operationIDAndTags,
	}
}

func v3Config(namer *definitionNamer) *common.OpenAPIV3Config {
	cfg := &common.OpenAPIV3Config{
		Info: info(),
		DefaultResponse: &spec3.Response{ResponseProps: spec3.ResponseProps{
			Description: "Default Response.",
		}},
		CommonResponses: map[int]*spec3.Response{
			http.StatusUnauthorized: {ResponseProps: spec3.ResponseProps{Description: "Unauthorized"}},
		},
		SecuritySchemes: spec3.SecuritySchemes{
			bearerToken: &spec3.SecurityScheme{SecuritySchemeProps: spec3.SecuritySchemeProps{
				Type: "apiKey", Name: "authorization", In: "header", Description: "Bearer Token authentication",
			}},
		},
		DefaultSecurity:                []map[string][]string{{bearerToken: {}}},
		GetDefinitionName:              namer.name,
		GetOperationIDAndTagsFromRoute: operationIDAndTags,
	}
	// Computed once for all group-versions rather than once per document.
	cfg.Definitions = generated.GetOpenAPIDefinitions(func(name string) spec.Ref {
		n, _ := namer.name(name)
		return spec.MustCreateRef("#/components/schemas/" + common.EscapeJsonPointer(n))
	})
	return cfg
}

// v3Mux gives handler3 the prefix registration chi lacks, and answers 404
// for group-versions it does not have: handler3 alone would send an empty
// 200.
type v3Mux struct {
	chi.Router
	known map[string]bool
}

func (m v3Mux) HandlePrefix(prefix string, h http.Handler) {
	m.Handle(prefix+"*", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !m.known[strings.TrimPrefix(r.URL.Path, prefix)] {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}))
}

// groupVersionOfPath reads "api/v1" or "apis/apps/v1".
func groupVersionOfPath(p string) (schema.GroupVersion, bool) {
	parts := strings.Split(p, "/")
	switch {
	case len(parts) == 2 && parts[0] == "api":
		return schema.GroupVersion{Version: parts[1]}, true
	case len(parts) == 3 && parts[0] == "apis":
		return schema.GroupVersion{Group: parts[1], Version: parts[2]}, true
	}
	return schema.GroupVersion{}, false
}

// sharedKinds are the meta kinds registered into every group-version. As
// kube does, a group-version's v3 document lists only its own entry and
// core/v1's for them, not one per served group-version.
var sharedKinds = map[string]bool{"WatchEvent": true, "DeleteOptions": true}

func narrowSharedGVKs(doc *spec3.OpenAPI, gv schema.GroupVersion) {
	if doc.Components == nil {
		return
	}
	for _, s := range doc.Components.Schemas {
		if s == nil {
			continue
		}
		gvks, ok := s.Extensions[extensionGVK].([]interface{})
		if !ok || len(gvks) < 2 {
			continue
		}
		if first, _ := gvks[0].(map[string]interface{}); !sharedKinds[fmt.Sprint(first["kind"])] {
			continue
		}
		var kept []interface{}
		for _, g := range gvks {
			m, _ := g.(map[string]interface{})
			group, ver := fmt.Sprint(m["group"]), fmt.Sprint(m["version"])
			if (group == gv.Group && ver == gv.Version) || (group == "" && ver == "v1") {
				kept = append(kept, g)
			}
		}
		// A copy: the extensions map may be shared with the definitions
		// other group-versions are built from.
		ext := make(spec.Extensions, len(s.Extensions))
		for k, v := range s.Extensions {
			ext[k] = v
		}
		if len(kept) == 0 {
			delete(ext, extensionGVK)
		} else {
			ext[extensionGVK] = kept
		}
		s.Extensions = ext
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

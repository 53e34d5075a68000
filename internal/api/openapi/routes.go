package openapi

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/version"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kube-openapi/pkg/common"
)

// Media types kube-apiserver lists on its operations (CBOR is off by
// default there).
var (
	mediaTypes      = []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}
	allMediaTypes   = append(append([]string{}, mediaTypes...), "application/json;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch")
	patchMediaTypes = []string{string(types.JSONPatchType), string(types.MergePatchType), string(types.StrategicMergePatchType), string(types.ApplyYAMLPatchType)}
	anyMediaType    = []string{"*/*"}
)

// deleteReturnsObject lists the resources whose delete answers with the
// deleted object rather than a Status in kube-apiserver, so their delete
// operations declare that response.
var deleteReturnsObject = map[schema.GroupResource]bool{
	{Resource: "pods"}:                   true,
	{Resource: "services"}:               true,
	{Resource: "namespaces"}:             true,
	{Resource: "serviceaccounts"}:        true,
	{Resource: "persistentvolumes"}:      true,
	{Resource: "persistentvolumeclaims"}: true,
	{Resource: "resourcequotas"}:         true,
	{Resource: "podtemplates"}:           true,
}

// Kube's verbs for the routes (action verbs, not discovery verbs).
const (
	actGet              = "GET"
	actList             = "LIST"
	actPut              = "PUT"
	actPatch            = "PATCH"
	actPost             = "POST"
	actDelete           = "DELETE"
	actDeleteCollection = "DELETECOLLECTION"
	actWatch            = "WATCH"
	actWatchList        = "WATCHLIST"
)

var knownVerbs = map[string]bool{"get": true, "list": true, "watch": true, "create": true, "update": true, "patch": true, "delete": true, "deletecollection": true}

// route is one operation, in the shape kube-openapi's builders read.
type route struct {
	method, path, operation, doc string
	params                       []param
	consumes, produces           []string
	metadata                     map[string]interface{}
	reads, writes                interface{}
	responses                    []common.StatusCodeResponse
}

var _ common.Route = (*route)(nil)

func (r *route) Method() string                     { return r.method }
func (r *route) Path() string                       { return r.path }
func (r *route) OperationName() string              { return r.operation }
func (r *route) Description() string                { return r.doc }
func (r *route) Consumes() []string                 { return r.consumes }
func (r *route) Produces() []string                 { return r.produces }
func (r *route) Metadata() map[string]interface{}   { return r.metadata }
func (r *route) RequestPayloadSample() interface{}  { return r.reads }
func (r *route) ResponsePayloadSample() interface{} { return r.writes }
func (r *route) StatusCodeResponses() []common.StatusCodeResponse {
	return r.responses
}
func (r *route) Parameters() []common.Parameter {
	out := make([]common.Parameter, len(r.params))
	for i, p := range r.params {
		out[i] = p
	}
	return out
}

type response struct {
	code    int
	message string
	model   interface{}
}

func (r response) Code() int          { return r.code }
func (r response) Message() string    { return r.message }
func (r response) Model() interface{} { return r.model }

func responses(model interface{}, codes ...int) []common.StatusCodeResponse {
	out := make([]common.StatusCodeResponse, len(codes))
	for i, c := range codes {
		out[i] = response{code: c, message: http.StatusText(c), model: model}
	}
	return out
}

// container is one of kube's web services: the routes under one root
// path, which is also one v3 document.
type container struct {
	root   string
	routes []common.Route
}

var _ common.RouteContainer = (*container)(nil)

func (c *container) RootPath() string                   { return c.root }
func (c *container) PathParameters() []common.Parameter { return nil }
func (c *container) Routes() []common.Route             { return c.routes }

type routeBuilder struct {
	scheme    *runtime.Scheme
	resources []Resource
}

func newRouteBuilder(resources []Resource) (*routeBuilder, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	// Status and the discovery types are registered unversioned in core/v1.
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})

	seen := map[schema.GroupVersionResource]bool{}
	for _, r := range resources {
		gvr := r.GroupVersion.WithResource(r.Resource)
		if r.Resource == "" || r.Kind == "" || r.GroupVersion.Version == "" {
			return nil, fmt.Errorf("openapi: resource %v: resource, kind and version are required", gvr)
		}
		if seen[gvr] {
			return nil, fmt.Errorf("openapi: resource %v listed twice", gvr)
		}
		seen[gvr] = true
		if err := checkVerbs(r.Verbs); err != nil {
			return nil, fmt.Errorf("openapi: resource %v: %w", gvr, err)
		}
		for _, sub := range r.Subresources {
			if sub.Name == "" || sub.Kind == "" || sub.GroupVersion.Version == "" {
				return nil, fmt.Errorf("openapi: resource %v: subresource %q: name, kind and version are required", gvr, sub.Name)
			}
			if err := checkVerbs(sub.Verbs); err != nil {
				return nil, fmt.Errorf("openapi: resource %v/%s: %w", gvr, sub.Name, err)
			}
		}
	}
	return &routeBuilder{scheme: s, resources: resources}, nil
}

func checkVerbs(verbs []string) error {
	for _, v := range verbs {
		if !knownVerbs[v] {
			return fmt.Errorf("unknown verb %q", v)
		}
	}
	return nil
}

// servedGroupVersions are the group-versions definitions are tagged
// with: the served ones, those of subresource kinds (autoscaling/v1 Scale)
// and core/v1, where Status lives.
func (b *routeBuilder) servedGroupVersions() map[schema.GroupVersion]bool {
	gvs := map[schema.GroupVersion]bool{{Version: "v1"}: true}
	for _, r := range b.resources {
		gvs[r.GroupVersion] = true
		for _, s := range r.Subresources {
			gvs[s.GroupVersion] = true
		}
	}
	return gvs
}

func (b *routeBuilder) newObject(gvk schema.GroupVersionKind) (runtime.Object, error) {
	obj, err := b.scheme.New(gvk)
	if err != nil {
		return nil, fmt.Errorf("openapi: no type for %v: %w", gvk, err)
	}
	return obj, nil
}

func groupVersionPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "/api/" + gv.Version
	}
	return "/apis/" + gv.Group + "/" + gv.Version
}

// containers lays out every route kube-apiserver would publish for the
// resources, plus the discovery and version endpoints, one container per
// root path, sorted so the documents come out the same every time.
func (b *routeBuilder) containers() ([]common.RouteContainer, error) {
	byRoot := map[string]*container{}
	add := func(root string, rs ...*route) {
		c := byRoot[root]
		if c == nil {
			c = &container{root: root}
			byRoot[root] = c
		}
		for _, r := range rs {
			c.routes = append(c.routes, r)
		}
	}
	discovery := func(path, op, doc string, produces []string, sample interface{}) *route {
		return &route{method: http.MethodGet, path: path, operation: op, doc: doc,
			consumes: produces, produces: produces, writes: sample}
	}

	add("/api", discovery("/api/", "getAPIVersions", "get available API versions", mediaTypes, metav1.APIVersions{}))
	add("/apis", discovery("/apis/", "getAPIVersions", "get available API versions", mediaTypes, metav1.APIGroupList{}))
	add("/version", discovery("/version/", "getCodeVersion", "get the version information for this server", []string{"application/json"}, version.Info{}))

	resources := append([]Resource(nil), b.resources...)
	sort.SliceStable(resources, func(i, j int) bool { return resources[i].Resource < resources[j].Resource })
	for _, r := range resources {
		root := groupVersionPath(r.GroupVersion)
		if byRoot[root] == nil {
			add(root, discovery(root+"/", "getAPIResources", "get available resources", mediaTypes, metav1.APIResourceList{}))
			if g := r.GroupVersion.Group; g != "" && byRoot["/apis/"+g] == nil {
				add("/apis/"+g, discovery("/apis/"+g+"/", "getAPIGroup", "get information of a group", mediaTypes, metav1.APIGroup{}))
			}
		}
		rs, err := b.resourceRoutes(root, r, nil)
		if err != nil {
			return nil, err
		}
		add(root, rs...)
		subs := append([]Subresource(nil), r.Subresources...)
		sort.SliceStable(subs, func(i, j int) bool { return subs[i].Name < subs[j].Name })
		for i := range subs {
			rs, err := b.resourceRoutes(root, r, &subs[i])
			if err != nil {
				return nil, err
			}
			add(root, rs...)
		}
	}

	out := make([]common.RouteContainer, 0, len(byRoot))
	for _, root := range sortedKeys(byRoot) {
		out = append(out, byRoot[root])
	}
	return out, nil
}

// action is one route before its details: kube's verb, the path under the
// group-version and the path parameters.
type action struct {
	verb          string
	path          string
	params        []param
	allNamespaces bool
}

// resourceRoutes mirrors kube-apiserver's installer for one resource or,
// with sub set, one of its subresources: the same paths, operation names,
// parameters, bodies and responses.
func (b *routeBuilder) resourceRoutes(root string, r Resource, sub *Subresource) ([]*route, error) {
	kindGVK := r.GroupVersion.WithKind(r.Kind)
	verbs := r.Verbs
	subName := ""
	if sub != nil {
		kindGVK = sub.GroupVersion.WithKind(sub.Kind)
		verbs = sub.Verbs
		subName = sub.Name
	}
	obj, err := b.newObject(kindGVK)
	if err != nil {
		return nil, err
	}
	has := map[string]bool{}
	for _, v := range verbs {
		has[v] = true
	}
	var list runtime.Object
	if has["list"] {
		if sub != nil {
			return nil, fmt.Errorf("openapi: %s/%s: list on a subresource is not supported", r.Resource, subName)
		}
		if list, err = b.newObject(r.GroupVersion.WithKind(r.Kind + "List")); err != nil {
			return nil, err
		}
	}
	if sub != nil && has["watch"] {
		return nil, fmt.Errorf("openapi: %s/%s: watch on a subresource is not supported", r.Resource, subName)
	}

	// The name parameter is described with the kind served at the path
	// ("name of the Scale"), the docs and operation names with the parent's.
	nameParam := pathParam("name", "name of the "+kindGVK.Kind)
	kind := r.Kind

	var params []param
	resourcePath := r.Resource
	if r.Namespaced {
		params = []param{pathParam("namespace", "object name and auth scope, such as for teams and projects")}
		resourcePath = "namespaces/{namespace}/" + r.Resource
	}
	itemPath := resourcePath + "/{name}"
	nameParams := append(append([]param{}, params...), nameParam)
	resourceParams := params
	if sub != nil {
		itemPath += "/" + subName
		resourcePath = itemPath
		resourceParams = nameParams
	}

	watchList := has["watch"] && has["list"]
	var actions []action
	appendIf := func(ok bool, a action) {
		if ok {
			actions = append(actions, a)
		}
	}
	appendIf(has["list"], action{verb: actList, path: resourcePath, params: resourceParams})
	appendIf(has["create"], action{verb: actPost, path: resourcePath, params: resourceParams})
	appendIf(has["deletecollection"], action{verb: actDeleteCollection, path: resourcePath, params: resourceParams})
	appendIf(watchList, action{verb: actWatchList, path: "watch/" + resourcePath, params: resourceParams})
	appendIf(has["get"], action{verb: actGet, path: itemPath, params: nameParams})
	appendIf(has["update"], action{verb: actPut, path: itemPath, params: nameParams})
	appendIf(has["patch"], action{verb: actPatch, path: itemPath, params: nameParams})
	appendIf(has["delete"], action{verb: actDelete, path: itemPath, params: nameParams})
	appendIf(has["watch"], action{verb: actWatch, path: "watch/" + itemPath, params: nameParams})
	if r.Namespaced && sub == nil {
		// Lists and watches across all namespaces.
		appendIf(has["list"], action{verb: actList, path: r.Resource, allNamespaces: true})
		appendIf(watchList, action{verb: actWatchList, path: "watch/" + r.Resource, allNamespaces: true})
	}

	var deleted interface{} = &metav1.Status{}
	if deleteReturnsObject[schema.GroupResource{Group: r.GroupVersion.Group, Resource: r.Resource}] && sub == nil {
		deleted = obj
	}
	// pods/log is read with PodLogOptions and answers plain text.
	isLog := sub != nil && subName == "log" && r.GroupVersion.Group == "" && r.Resource == "pods"

	subTitle := ""
	if subName != "" {
		subTitle = strings.ToUpper(subName[:1]) + strings.ToLower(subName[1:])
	}
	article := articleFor(kind)
	meta := map[string]interface{}{
		extensionGVK: metav1.GroupVersionKind{Group: kindGVK.Group, Version: kindGVK.Version, Kind: kindGVK.Kind},
	}

	var out []*route
	for _, a := range actions {
		namespaced := ""
		if r.Namespaced && !a.allNamespaces {
			namespaced = "Namespaced"
		}
		suffix := ""
		if a.allNamespaces {
			suffix = "ForAllNamespaces"
		}
		opName := func(verb string) string { return verb + namespaced + kind + subTitle + suffix }
		doc := func(plain, ofSub string) string {
			if sub != nil {
				return ofSub
			}
			return plain
		}
		rt := &route{
			path:     root + "/" + a.path,
			consumes: anyMediaType,
			produces: mediaTypes,
			params:   []param{prettyParam},
		}
		switch a.verb {
		case actGet:
			rt.method = http.MethodGet
			rt.doc = doc("read the specified "+kind, "read "+subName+" of the specified "+kind)
			rt.operation = opName("read")
			rt.writes = obj
			rt.responses = responses(obj, http.StatusOK)
			if isLog {
				rt.produces = append([]string{"text/plain"}, mediaTypes...)
				rt.writes = "string"
				rt.responses = responses("string", http.StatusOK)
				rt.params = append(rt.params, optionParams(corev1.PodLogOptions{})...)
			}
		case actList:
			rt.method = http.MethodGet
			rt.doc = "list objects of kind " + kind
			if has["watch"] {
				rt.doc = "list or watch objects of kind " + kind
			}
			rt.operation = opName("list")
			rt.produces = allMediaTypes
			rt.writes = list
			rt.responses = responses(list, http.StatusOK)
			rt.params = append(rt.params, optionParams(metav1.ListOptions{})...)
		case actPut:
			rt.method = http.MethodPut
			rt.doc = doc("replace the specified "+kind, "replace "+subName+" of the specified "+kind)
			rt.operation = opName("replace")
			rt.reads, rt.writes = obj, obj
			rt.responses = responses(obj, http.StatusOK, http.StatusCreated)
			rt.params = append(rt.params, bodyParam(true))
			rt.params = append(rt.params, optionParams(metav1.UpdateOptions{})...)
		case actPatch:
			rt.method = http.MethodPatch
			rt.doc = doc("partially update the specified "+kind, "partially update "+subName+" of the specified "+kind)
			rt.operation = opName("patch")
			rt.consumes = patchMediaTypes
			rt.reads, rt.writes = metav1.Patch{}, obj
			rt.responses = responses(obj, http.StatusOK, http.StatusCreated)
			rt.params = append(rt.params, bodyParam(true))
			rt.params = append(rt.params, optionParams(metav1.PatchOptions{})...)
		case actPost:
			rt.method = http.MethodPost
			rt.doc = doc("create"+article+kind, "create "+subName+" of"+article+kind)
			rt.operation = opName("create")
			rt.reads, rt.writes = obj, obj
			rt.responses = responses(obj, http.StatusOK, http.StatusCreated, http.StatusAccepted)
			rt.params = append(rt.params, bodyParam(true))
			rt.params = append(rt.params, optionParams(metav1.CreateOptions{})...)
		case actDelete:
			rt.method = http.MethodDelete
			rt.doc = doc("delete"+article+kind, "delete "+subName+" of"+article+kind)
			rt.operation = opName("delete")
			rt.reads, rt.writes = metav1.DeleteOptions{}, deleted
			rt.responses = responses(deleted, http.StatusOK, http.StatusAccepted)
			rt.params = append(rt.params, bodyParam(false))
			rt.params = append(rt.params, optionParams(metav1.DeleteOptions{})...)
		case actDeleteCollection:
			rt.method = http.MethodDelete
			rt.doc = doc("delete collection of "+kind, "delete collection of "+subName+" of a "+kind)
			rt.operation = opName("deletecollection")
			rt.reads, rt.writes = metav1.DeleteOptions{}, &metav1.Status{}
			rt.responses = responses(&metav1.Status{}, http.StatusOK)
			rt.params = append(rt.params, bodyParam(false))
			rt.params = append(rt.params, optionParams(metav1.DeleteOptions{})...)
			rt.params = append(rt.params, optionParams(metav1.ListOptions{}, "watch", "allowWatchBookmarks")...)
		case actWatch:
			rt.method = http.MethodGet
			rt.doc = "watch changes to an object of kind " + kind + ". deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter."
			rt.operation = opName("watch")
			rt.produces = allMediaTypes
			rt.writes = metav1.WatchEvent{}
			rt.responses = responses(metav1.WatchEvent{}, http.StatusOK)
			rt.params = append(rt.params, optionParams(metav1.ListOptions{})...)
		case actWatchList:
			rt.method = http.MethodGet
			rt.doc = "watch individual changes to a list of " + kind + ". deprecated: use the 'watch' parameter with a list operation instead."
			rt.operation = "watch" + namespaced + kind + subTitle + "List" + suffix
			rt.produces = allMediaTypes
			rt.writes = metav1.WatchEvent{}
			rt.responses = responses(metav1.WatchEvent{}, http.StatusOK)
			rt.params = append(rt.params, optionParams(metav1.ListOptions{})...)
		}
		rt.params = append(rt.params, a.params...)
		rt.metadata = map[string]interface{}{extensionAction: strings.ToLower(a.verb)}
		for k, v := range meta {
			rt.metadata[k] = v
		}
		out = append(out, rt)
	}
	return out, nil
}

// articleFor is the article kube's docs put before a kind, padded with
// spaces: none for plurals ("create Endpoints"), "an" before a vowel.
func articleFor(noun string) string {
	if strings.HasSuffix(noun, "s") && !strings.HasSuffix(noun, "ss") {
		return " "
	}
	if strings.ContainsRune("aeiouAEIOU", rune(noun[0])) {
		return " an "
	}
	return " a "
}

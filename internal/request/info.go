package request

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/fields"
)

// RequestInfo is what kube-apiserver derives from a request's path, method and query.
type RequestInfo struct {
	IsResourceRequest bool
	Path              string
	// Verb is the kube verb (get list watch create update patch delete
	// deletecollection, or proxy/watch from a legacy path prefix); for
	// non-resource requests it is the lowercased HTTP method.
	Verb string
	// APIPrefix is "api" or "apis"; like kube it is also set on the
	// non-resource /apis/{group}/{version} discovery path.
	APIPrefix  string
	APIGroup   string
	APIVersion string
	Namespace  string
	Resource   string
	// Subresource is Parts[2] when present, except for the proxy path verb.
	Subresource string
	Name        string
	// Parts is the path from the resource on: resource/name/subresource/...
	Parts []string
	// FieldSelector and LabelSelector are the raw query values, kept only for
	// list, watch and deletecollection (the verbs kube honours selectors for).
	FieldSelector string
	LabelSelector string
}

// Resolver turns requests into RequestInfo following kube's rules.
type Resolver struct {
	APIPrefixes          map[string]bool // without leading and trailing slashes
	GrouplessAPIPrefixes map[string]bool // prefixes whose paths carry no group segment
}

// NewResolver returns a Resolver for the standard kube prefixes.
func NewResolver() *Resolver {
	return &Resolver{
		APIPrefixes:          map[string]bool{"api": true, "apis": true},
		GrouplessAPIPrefixes: map[string]bool{"api": true},
	}
}

// Resolve derives a RequestInfo from req. As in kube, a non-nil error comes
// with the RequestInfo as far as it could be parsed.
//
// Resource paths look like
//
//	/{prefix}[/{group}]/{version}[/{watch|proxy}][/namespaces/{ns}]/{resource}[/{name}[/{subresource}[/...]]]
//
// Anything shorter (/api, /api/v1, /apis/apps/v1) or under another prefix is
// a non-resource request.
func (r *Resolver) Resolve(req *http.Request) (*RequestInfo, error) {
	if req == nil || req.URL == nil {
		return nil, errors.New("request: nil request or URL")
	}
	info := &RequestInfo{
		Path: req.URL.Path,
		Verb: lowerMethod(req.Method),
	}

	// Check the prefix before splitting so /healthz and friends cost nothing.
	trimmed := strings.Trim(req.URL.Path, "/")
	if first, _, _ := strings.Cut(trimmed, "/"); !r.APIPrefixes[first] {
		return info, nil
	}
	all := strings.Split(trimmed, "/")
	// Discovery roots need at least prefix/version/resource to be resources.
	if len(all) < 3 {
		return info, nil
	}
	info.APIPrefix = all[0]
	parts := all[1:]
	if !r.GrouplessAPIPrefixes[info.APIPrefix] {
		// /apis/{group}/{version} is still discovery.
		if len(parts) < 3 {
			return info, nil
		}
		info.APIGroup = parts[0]
		parts = parts[1:]
	}
	info.IsResourceRequest = true
	info.APIVersion = parts[0]
	parts = parts[1:]

	// Deprecated /watch/ and /proxy/ prefixes carry the verb in the path.
	verbViaPath := false
	if p := parts[0]; p == "watch" || p == "proxy" {
		if len(parts) < 2 {
			return info, fmt.Errorf("unable to determine kind and namespace from url %q", req.URL.Path)
		}
		info.Verb = p
		parts = parts[1:]
		verbViaPath = true
	} else {
		info.Verb = methodVerb(req.Method)
	}

	// namespaces/{ns}/{resource}/... is a namespaced resource, while
	// namespaces, namespaces/{ns} and namespaces/{ns}/{status|finalize} are
	// the namespaces resource itself.
	if parts[0] == "namespaces" && len(parts) > 1 {
		info.Namespace = parts[1]
		if len(parts) > 2 && !isNamespaceSubresource(parts[2]) {
			parts = parts[2:]
		}
	}
	info.Parts = parts

	// Parts are resource/name/subresource/...; proxy paths have no subresource.
	n := min(len(parts), 3)
	if info.Verb == "proxy" {
		n = min(n, 2)
	}
	switch n {
	case 3:
		info.Subresource = parts[2]
		fallthrough
	case 2:
		info.Name = parts[1]
		fallthrough
	default:
		info.Resource = parts[0]
	}

	// Kube would accept "/api//pods" as a resource request with an empty
	// version; we reject empty segments wherever they would be interpreted so
	// later stages can rely on non-empty group, version, namespace, resource,
	// name and subresource. Segments past the subresource (proxy/log paths)
	// are opaque and left alone.
	if hasEmpty(all[:len(all)-len(parts)+n]) {
		return info, fmt.Errorf("empty path segment in resource url %q", req.URL.Path)
	}

	// The query is parsed lazily: most named requests never need it.
	var query url.Values
	queryParsed := false
	getQuery := func() url.Values {
		if !queryParsed {
			queryParsed = true
			if req.URL.RawQuery != "" {
				query = req.URL.Query()
			}
		}
		return query
	}

	// A get without a name is a list or watch, possibly of one object named
	// by fieldSelector=metadata.name=<x>.
	if info.Name == "" && info.Verb == "get" {
		resolveListOrWatch(info, getQuery())
	}
	if info.Name == "" && info.Verb == "delete" {
		info.Verb = "deletecollection"
	}

	// Legacy path verbs don't honour selectors consistently, so kube ignores
	// them there.
	if !verbViaPath && (info.Verb == "list" || info.Verb == "watch" || info.Verb == "deletecollection") {
		q := getQuery()
		info.FieldSelector = firstValue(q, "fieldSelector")
		info.LabelSelector = firstValue(q, "labelSelector")
	}
	return info, nil
}

// resolveListOrWatch mirrors kube decoding the query into ListOptions: any
// decode failure is not an error, it just means a plain list (or watch if
// asked) with no name lifted from the field selector.
func resolveListOrWatch(info *RequestInfo, q url.Values) {
	info.Verb = "list"
	if len(q) == 0 {
		return
	}

	name := ""
	decodeOK := true
	if v, ok := q["fieldSelector"]; ok && len(v) > 0 {
		sel, err := fields.ParseSelector(v[0])
		if err != nil {
			decodeOK = false
		} else if n, ok := sel.RequiresExactMatch("metadata.name"); ok && len(content.IsPathSegmentName(n)) == 0 {
			name = n
		}
	}

	// Kube reads watch with EqualFold when decoding succeeds and with ToLower
	// when it fails; the two only disagree on non-ASCII folds such as "ſ".
	decodedWatch, fallbackWatch := false, false
	if v, ok := q["watch"]; ok && len(v) > 0 {
		decodedWatch = !(v[0] == "0" || strings.EqualFold(v[0], "false"))
		lower := strings.ToLower(v[0])
		fallbackWatch = lower != "false" && lower != "0"
	}

	// The rest of the decode only matters if it would change the outcome.
	if decodeOK && (name != "" || decodedWatch != fallbackWatch) {
		decodeOK = otherListParamsValid(q)
	}

	if !decodeOK {
		if fallbackWatch {
			info.Verb = "watch"
		}
		return
	}
	if decodedWatch {
		info.Verb = "watch"
	}
	info.Name = name
}

// otherListParamsValid reports whether the ListOptions query parameters that
// can fail to decode, other than fieldSelector, are well formed.
//
// Kube also fails the decode on a malformed labelSelector. That check needs
// k8s.io/apimachinery/pkg/labels, whose klog dependency is not in go.sum, so
// it is skipped: such a list still lifts the name, and is rejected later when
// the selector is parsed for the list itself.
func otherListParamsValid(q url.Values) bool {
	for _, key := range [...]string{"timeoutSeconds", "limit"} {
		if v, ok := q[key]; ok && len(v) > 0 {
			if _, err := strconv.ParseInt(v[0], 10, 64); err != nil {
				return false
			}
		}
	}
	return true
}

// IsReadOnly reports whether the request cannot change state.
func (i *RequestInfo) IsReadOnly() bool {
	switch i.Verb {
	case "get", "list", "watch":
		return true
	case "head":
		return !i.IsResourceRequest
	}
	return false
}

// IsLongRunning matches kube-apiserver's LongRunningFunc: watch and proxy
// verbs, streaming subresources, and pprof, which can block for a long time.
func (i *RequestInfo) IsLongRunning() bool {
	if i.Verb == "watch" || i.Verb == "proxy" {
		return true
	}
	if i.IsResourceRequest {
		switch i.Subresource {
		case "attach", "exec", "proxy", "log", "portforward":
			return true
		}
		return false
	}
	return strings.HasPrefix(i.Path, "/debug/pprof/")
}

func isNamespaceSubresource(s string) bool {
	return s == "status" || s == "finalize"
}

// methodVerb maps an HTTP method to the kube verb before list/watch/
// deletecollection refinement; unknown methods get no verb, as in kube.
func methodVerb(method string) string {
	switch method {
	case http.MethodPost:
		return "create"
	case http.MethodGet, http.MethodHead:
		return "get"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return ""
}

// lowerMethod avoids an allocation for the common methods.
func lowerMethod(method string) string {
	switch method {
	case http.MethodGet:
		return "get"
	case http.MethodHead:
		return "head"
	case http.MethodPost:
		return "post"
	case http.MethodPut:
		return "put"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	case http.MethodOptions:
		return "options"
	}
	return strings.ToLower(method)
}

func hasEmpty(segments []string) bool {
	for _, s := range segments {
		if s == "" {
			return true
		}
	}
	return false
}

func firstValue(q url.Values, key string) string {
	if v := q[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

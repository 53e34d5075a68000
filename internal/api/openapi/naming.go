package openapi

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

const (
	extensionGVK    = "x-kubernetes-group-version-kind"
	extensionAction = "x-kubernetes-action"
)

// opVerbs are the verbs route operation names start with. The trie
// matches the shortest one, so "deletecollectionNamespacedPod" splits as
// "delete" + "collectionNamespacedPod", which gives kube's
// deleteCoreV1CollectionNamespacedPod.
var opVerbs = util.NewTrie([]string{"get", "log", "read", "replace", "patch", "delete", "deletecollection", "watch", "connect", "proxy", "list", "create"})

// operationIDAndTags turns a route's operation name into kube's operation
// ID by putting the group and version after the verb
// (listNamespacedConfigMap at /api/v1 -> listCoreV1NamespacedConfigMap),
// and tags it with group_version ("core_v1"), as clients generated from
// kube's spec expect.
func operationIDAndTags(r common.Route) (string, []string, error) {
	op := r.OperationName()
	verb, ok := opVerbs.GetPrefix(op)
	if !ok {
		return "", nil, fmt.Errorf("operation %q does not start with a known verb", op)
	}
	rest := op[len(verb):]
	parts := strings.Split(strings.Trim(r.Path(), "/"), "/")
	if parts[0] == "api" {
		parts = append([]string{"apis", "core"}, parts[1:]...)
	}
	var tags []string
	switch {
	case len(parts) >= 2 && parts[0] == "apis":
		group := strings.TrimSuffix(parts[1], ".k8s.io")
		verb += validOperationID(group, true)
		tag := validOperationID(group, false)
		if len(parts) > 2 {
			verb += validOperationID(parts[2], true)
			tag += "_" + validOperationID(parts[2], false)
		}
		tags = append(tags, tag)
	case parts[0] != "":
		tags = append(tags, validOperationID(parts[0], false))
	}
	return verb + validOperationID(rest, true), tags, nil
}

// validOperationID drops what may not appear in an identifier and
// capitalizes the letter after each dropped run: "rbac.authorization" ->
// "RbacAuthorization".
func validOperationID(s string, capitalizeFirst bool) string {
	var b strings.Builder
	upper := capitalizeFirst
	for i, r := range s {
		if unicode.IsLetter(r) || r == '_' || (i != 0 && unicode.IsDigit(r)) {
			if upper {
				r = unicode.ToUpper(r)
				upper = false
			}
			b.WriteRune(r)
		} else {
			upper = true
		}
	}
	return b.String()
}

// definitionNamer keeps the model names openapi-gen produced
// (io.k8s.api.core.v1.ConfigMap) and tags each definition with the kinds
// it is served as, which is how kubectl finds a kind's schema.
type definitionNamer struct {
	gvks map[string][]interface{}
}

func newDefinitionNamer(s *runtime.Scheme, served map[schema.GroupVersion]bool) *definitionNamer {
	byName := map[string][]schema.GroupVersionKind{}
	for gvk := range s.AllKnownTypes() {
		if !served[gvk.GroupVersion()] {
			continue
		}
		name, err := s.ToOpenAPIDefinitionName(gvk)
		if err != nil {
			continue
		}
		byName[name] = append(byName[name], gvk)
	}
	n := &definitionNamer{gvks: make(map[string][]interface{}, len(byName))}
	for name, list := range byName {
		sort.Slice(list, func(i, j int) bool {
			a, b := list[i], list[j]
			if a.Group != b.Group {
				return a.Group < b.Group
			}
			if a.Version != b.Version {
				return a.Version < b.Version
			}
			return a.Kind < b.Kind
		})
		ext := make([]interface{}, 0, len(list))
		for _, gvk := range list {
			ext = append(ext, map[string]interface{}{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind})
		}
		n.gvks[name] = ext
	}
	return n
}

func (n *definitionNamer) name(name string) (string, spec.Extensions) {
	if ext, ok := n.gvks[name]; ok {
		return name, spec.Extensions{extensionGVK: ext}
	}
	return name, nil
}

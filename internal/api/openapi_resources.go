package api

import "github.com/kpipe/kpipe/internal/api/openapi"

// OpenAPIResources describes the registry for the OpenAPI builder.
func (r *Registry) OpenAPIResources() []openapi.Resource {
	out := make([]openapi.Resource, 0, len(r.list))
	for _, res := range r.list {
		o := openapi.Resource{
			GroupVersion: res.GroupVersion, Resource: res.Name, Kind: res.Kind,
			Namespaced: res.Namespaced, Verbs: res.Verbs,
		}
		for _, name := range sortedSubresources(res) {
			sub := res.Subresources[name]
			if sub.Kubelet {
				// kube documents them as connect operations, which the
				// builder does not make yet.
				continue
			}
			o.Subresources = append(o.Subresources, openapi.Subresource{Name: name, Kind: sub.Kind, GroupVersion: sub.GroupVersion, Verbs: sub.Verbs})
		}
		out = append(out, o)
	}
	return out
}

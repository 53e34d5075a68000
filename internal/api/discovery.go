package api

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"

	"github.com/go-chi/chi/v5"
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// aggregatedMediaType is what clients put in Accept to get the whole of
// discovery in one answer (apidiscovery.k8s.io/v2).
// unversioned is how kube encodes discovery documents: apiVersion v1.
var unversioned = schema.GroupVersion{Version: "v1"}

const aggregatedMediaType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// Discovery serves /api, /api/v1, /apis, /apis/<group> and
// /apis/<group>/<version>, in the legacy form and, when Accept asks for
// it, the aggregated form.
type Discovery struct {
	reg *Registry
	// ServerAddress is advertised in serverAddressByClientCIDRs.
	ServerAddress string
}

// NewDiscovery indexes the registry for discovery.
func NewDiscovery(reg *Registry, serverAddress string) *Discovery {
	return &Discovery{reg: reg, ServerAddress: serverAddress}
}

// Install mounts the discovery endpoints.
func (d *Discovery) Install(r chi.Router) {
	r.Get("/api", d.serveCore)
	r.Get("/api/v1", d.serveResources(schema.GroupVersion{Version: "v1"}))
	r.Get("/apis", d.serveGroups)
	for _, g := range d.groups() {
		gv := schema.GroupVersion{Group: g.Name, Version: g.PreferredVersion.Version}
		group := g
		r.Get("/apis/"+g.Name, func(w http.ResponseWriter, r *http.Request) { writeDiscovery(w, r, &group, unversioned) })
		r.Get("/apis/"+gv.String(), d.serveResources(gv))
	}
}

// wantsAggregated reports whether the client asked for APIGroupDiscoveryList.
func wantsAggregated(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		p := strings.ReplaceAll(part, " ", "")
		if strings.Contains(p, "g=apidiscovery.k8s.io") && strings.Contains(p, "v=v2;") && strings.Contains(p, "as=APIGroupDiscoveryList") ||
			strings.HasSuffix(p, "g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList") {
			return true
		}
	}
	return false
}

func (d *Discovery) serveCore(w http.ResponseWriter, r *http.Request) {
	if wantsAggregated(r) {
		d.writeAggregated(w, r, true)
		return
	}
	writeDiscovery(w, r, &metav1.APIVersions{
		Versions:                   []string{"v1"},
		ServerAddressByClientCIDRs: d.addresses(),
	}, unversioned)
}

func (d *Discovery) serveGroups(w http.ResponseWriter, r *http.Request) {
	if wantsAggregated(r) {
		d.writeAggregated(w, r, false)
		return
	}
	writeDiscovery(w, r, &metav1.APIGroupList{Groups: d.groups()}, unversioned)
}

func (d *Discovery) serveResources(gv schema.GroupVersion) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		list := &metav1.APIResourceList{GroupVersion: gv.String()}
		for _, res := range d.reg.All() {
			if res.GroupVersion != gv {
				continue
			}
			list.APIResources = append(list.APIResources, metav1.APIResource{
				Name: res.Name, SingularName: res.SingularName, Namespaced: res.Namespaced, Kind: res.Kind,
				Verbs: res.Verbs, ShortNames: res.ShortNames, Categories: res.Categories,
			})
			for _, name := range sortedSubresources(res) {
				sub := res.Subresources[name]
				ar := metav1.APIResource{Name: res.Name + "/" + name, Namespaced: res.Namespaced, Kind: sub.Kind, Verbs: sub.Verbs}
				if sub.GroupVersion != res.GroupVersion {
					ar.Group, ar.Version = sub.GroupVersion.Group, sub.GroupVersion.Version
				}
				list.APIResources = append(list.APIResources, ar)
			}
		}
		writeDiscovery(w, r, list, unversioned)
	}
}

// groups lists the named groups, each with its one served version.
func (d *Discovery) groups() []metav1.APIGroup {
	seen := map[string]bool{}
	var out []metav1.APIGroup
	for _, res := range d.reg.All() {
		gv := res.GroupVersion
		if gv.Group == "" || seen[gv.Group] {
			continue
		}
		seen[gv.Group] = true
		v := metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version}
		out = append(out, metav1.APIGroup{Name: gv.Group, Versions: []metav1.GroupVersionForDiscovery{v}, PreferredVersion: v})
	}
	return out
}

func (d *Discovery) addresses() []metav1.ServerAddressByClientCIDR {
	return []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: d.ServerAddress}}
}

// writeAggregated answers with an APIGroupDiscoveryList: core alone for
// /api, the named groups for /apis.
func (d *Discovery) writeAggregated(w http.ResponseWriter, r *http.Request, core bool) {
	byGroup := map[string]*apidiscoveryv2.APIGroupDiscovery{}
	var order []string
	for _, res := range d.reg.All() {
		gv := res.GroupVersion
		if (gv.Group == "") != core {
			continue
		}
		g := byGroup[gv.Group]
		if g == nil {
			g = &apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: gv.Group},
				Versions: []apidiscoveryv2.APIVersionDiscovery{{Version: gv.Version, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}}}
			byGroup[gv.Group] = g
			order = append(order, gv.Group)
		}
		scope := apidiscoveryv2.ScopeCluster
		if res.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		rd := apidiscoveryv2.APIResourceDiscovery{
			Resource: res.Name, SingularResource: res.SingularName, Scope: scope,
			ResponseKind: &metav1.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: res.Kind},
			Verbs:        res.Verbs, ShortNames: res.ShortNames, Categories: res.Categories,
		}
		for _, name := range sortedSubresources(res) {
			sub := res.Subresources[name]
			rd.Subresources = append(rd.Subresources, apidiscoveryv2.APISubresourceDiscovery{
				Subresource:  name,
				ResponseKind: &metav1.GroupVersionKind{Group: sub.GroupVersion.Group, Version: sub.GroupVersion.Version, Kind: sub.Kind},
				Verbs:        sub.Verbs,
			})
		}
		g.Versions[0].Resources = append(g.Versions[0].Resources, rd)
	}
	list := &apidiscoveryv2.APIGroupDiscoveryList{}
	for _, name := range order {
		list.Items = append(list.Items, *byGroup[name])
	}
	list.APIVersion, list.Kind = "apidiscovery.k8s.io/v2", "APIGroupDiscoveryList"
	body, err := json.Marshal(list)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", aggregatedMediaType)
	w.Header().Set("Vary", "Accept")
	_, _ = w.Write(body)
}

// writeDiscovery encodes a legacy discovery document as JSON, as kube
// serves discovery.
func writeDiscovery(w http.ResponseWriter, r *http.Request, obj runtime.Object, gv schema.GroupVersion) {
	out, err := NegotiateOutput(r, false)
	if err != nil {
		out, _ = NegotiateOutput(&http.Request{Header: http.Header{}}, false)
	}
	w.Header().Set("Vary", "Accept")
	_ = out.Encode(w, http.StatusOK, obj, gv)
}

func sortedSubresources(res *Resource) []string {
	out := make([]string, 0, len(res.Subresources))
	for n := range res.Subresources {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

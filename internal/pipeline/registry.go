package pipeline

import (
	"fmt"
	"sort"
	"sync"
)

// Registry holds the registered plugins by kind and name. Registration
// order means nothing: the YAML decides execution order.
type Registry struct {
	mu      sync.RWMutex
	plugins map[Kind]map[string]Plugin
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{plugins: map[Kind]map[string]Plugin{}}
}

// Register adds p. A duplicate name within a kind, or a plugin missing its
// name, kind or factory, is an error.
func (r *Registry) Register(p Plugin) error {
	if p.Name == "" || p.Kind == "" || p.New == nil {
		return fmt.Errorf("pipeline: plugin %q (kind %q) needs a name, a kind and New", p.Name, p.Kind)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	byName := r.plugins[p.Kind]
	if byName == nil {
		byName = map[string]Plugin{}
		r.plugins[p.Kind] = byName
	}
	if _, dup := byName[p.Name]; dup {
		return fmt.Errorf("pipeline: %s plugin %q registered twice", p.Kind, p.Name)
	}
	byName[p.Name] = p
	return nil
}

// MustRegister is Register for the listing file, where a failure is a bug.
func (r *Registry) MustRegister(p Plugin) {
	if err := r.Register(p); err != nil {
		panic(err)
	}
}

// Lookup finds a plugin.
func (r *Registry) Lookup(kind Kind, name string) (Plugin, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	p, ok := r.plugins[kind][name]
	return p, ok
}

// List returns every plugin, sorted by kind then name.
func (r *Registry) List() []Plugin {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []Plugin
	for _, byName := range r.plugins {
		for _, p := range byName {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// names lists the plugin names of a kind, for "unknown plugin" errors.
func (r *Registry) names(kind Kind) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.plugins[kind]))
	for n := range r.plugins[kind] {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

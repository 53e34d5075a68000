package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/kpipe/kpipe/config"
)

// maxStages bounds a pipeline so per-request state fits in fixed arrays.
const maxStages = 32

// Instance is one built entry of a list.
type Instance struct {
	Plugin Plugin
	// Label names the entry in errors and /debug/pipeline: `pipeline[4] (authentication)`.
	Label   string
	Enabled bool
	// Config is the decoded config, defaults filled in.
	Config any
	// Value is what the plugin's New returned.
	Value any
	// Nested holds the built nested lists, enabled entries only.
	Nested map[string][]*Instance

	key  string // reuse across reloads: same kind, name and config
	refs int    // generations holding the instance, guarded by Engine.mu
	// holds counts detached long-running requests inside the instance (a
	// stage of theirs); closePending marks one whose generations are all
	// gone, closed when the last hold ends. Guarded by Engine.mu.
	holds        int
	closePending bool

	ctx    context.Context // ends when the instance is closed
	cancel context.CancelFunc
}

// Context ends when the instance is closed. It is nil before Provision.
func (in *Instance) Context() context.Context { return in.ctx }

// Plan is a pipeline built without side effects: what `config validate`
// checks and what the engine provisions and swaps in.
type Plan struct {
	Stages []*Instance // enabled stages, in order
	Hooks  []*Instance // enabled post-start hooks, in order
}

// Plan builds the config's pipeline and post-start hooks. It decodes and
// validates every entry, enabled or not, calls New on the enabled ones, and
// checks the order. Errors name the entry and its index.
func (r *Registry) Plan(cfg *config.Config) (*Plan, error) {
	stages, err := r.BuildList(KindStage, "pipeline", cfg.Pipeline)
	if err != nil {
		return nil, err
	}
	if err := checkOrder(stages); err != nil {
		return nil, err
	}
	hooks, err := r.BuildList(KindPostStartHook, "postStartHooks", cfg.PostStartHooks)
	if err != nil {
		return nil, err
	}
	return &Plan{Stages: stages, Hooks: hooks}, nil
}

// BuildList builds one ordered list of a kind. path is the key of the list
// ("pipeline", or "pipeline[4] (authentication).config.authenticators").
func (r *Registry) BuildList(kind Kind, path string, entries []config.Entry) ([]*Instance, error) {
	seen := map[string]int{}
	var out []*Instance
	for i, e := range entries {
		label := fmt.Sprintf("%s[%d] (%s)", path, i, e.Name)
		if prev, dup := seen[e.Name]; dup {
			return nil, &config.FieldError{Key: label, Msg: fmt.Sprintf("duplicate: %q is already listed at index %d", e.Name, prev)}
		}
		seen[e.Name] = i
		in, err := r.build(kind, label, e)
		if err != nil {
			return nil, err
		}
		if in.Enabled {
			out = append(out, in)
		}
	}
	return out, nil
}

func (r *Registry) build(kind Kind, label string, e config.Entry) (*Instance, error) {
	p, ok := r.Lookup(kind, e.Name)
	if !ok {
		return nil, &config.FieldError{Key: label, Msg: fmt.Sprintf("unknown %s plugin %q; known: %s", kind, e.Name, strings.Join(r.names(kind), ", "))}
	}
	in := &Instance{Plugin: p, Label: label, Enabled: e.IsEnabled(), Nested: map[string][]*Instance{}}

	raw := map[string]any{}
	for k, v := range e.Config {
		raw[k] = v
	}
	// Nested lists are the engine's business: build them here, and hand the
	// rest of the block to the plugin's own struct.
	for _, key := range sortedNestedKeys(p.Nested) {
		list := p.NestedDefaults[key]
		if v, ok := raw[key]; ok {
			if err := config.Decode(v, &list, label+".config."+key); err != nil {
				return nil, err
			}
			delete(raw, key)
		}
		children, err := r.BuildList(p.Nested[key], label+".config."+key, list)
		if err != nil {
			return nil, err
		}
		in.Nested[key] = children
	}

	if p.Config == nil {
		if len(raw) > 0 {
			return nil, &config.FieldError{Key: label + ".config", Msg: fmt.Sprintf("%s takes no config", p.Name)}
		}
	} else {
		in.Config = p.Config()
		if err := config.Decode(raw, in.Config, label+".config"); err != nil {
			return nil, err
		}
		if v, ok := in.Config.(Validator); ok {
			if err := v.Validate(); err != nil {
				return nil, entryError(label, err)
			}
		}
	}
	canon, err := json.Marshal(e.Config)
	if err != nil {
		return nil, &config.FieldError{Key: label + ".config", Msg: err.Error()}
	}
	in.key = string(kind) + "/" + p.Name + "/" + string(canon)
	if !in.Enabled {
		return in, nil
	}
	v, err := p.New(in.Config)
	if err != nil {
		return nil, entryError(label, err)
	}
	in.Value = v
	if kind == KindStage {
		if _, ok := v.(Stage); !ok {
			return nil, fmt.Errorf("%s: plugin %s built a %T, which is not a Stage", label, p.Name, v)
		}
	}
	if kind == KindPostStartHook {
		if _, ok := v.(PostStartHook); !ok {
			return nil, fmt.Errorf("%s: plugin %s built a %T, which is not a PostStartHook", label, p.Name, v)
		}
	}
	return in, nil
}

// entryError puts a plugin's own error under its entry's label. A
// FieldError from the plugin's Validate keeps its key, below .config.
func entryError(label string, err error) error {
	var fe *config.FieldError
	if errors.As(err, &fe) {
		return &config.FieldError{Key: label + ".config." + fe.Key, Msg: fe.Msg}
	}
	return &config.FieldError{Key: label, Msg: err.Error()}
}

// checkOrder enforces the invariants plugins declare: required and earlier
// stages, and one terminal stage, last.
func checkOrder(stages []*Instance) error {
	if len(stages) > maxStages {
		return &config.FieldError{Key: "pipeline", Msg: fmt.Sprintf("%d stages enabled; at most %d are supported", len(stages), maxStages)}
	}
	pos := map[string]int{}
	for i, s := range stages {
		pos[s.Plugin.Name] = i
	}
	for i, s := range stages {
		for _, req := range s.Plugin.Requires {
			j, ok := pos[req]
			if !ok {
				return &config.FieldError{Key: s.Label, Msg: fmt.Sprintf("requires the %s stage, which is not enabled", req)}
			}
			if j > i {
				return &config.FieldError{Key: s.Label, Msg: fmt.Sprintf("must come after %s (%s)", req, stages[j].Label)}
			}
		}
		for _, after := range s.Plugin.After {
			if j, ok := pos[after]; ok && j > i {
				return &config.FieldError{Key: s.Label, Msg: fmt.Sprintf("must come after %s (%s)", after, stages[j].Label)}
			}
		}
		if s.Plugin.Terminal && i != len(stages)-1 {
			return &config.FieldError{Key: stages[i+1].Label, Msg: fmt.Sprintf("comes after the terminal stage %s; nothing may follow it", s.Plugin.Name)}
		}
	}
	if len(stages) == 0 || !stages[len(stages)-1].Plugin.Terminal {
		return &config.FieldError{Key: "pipeline", Msg: "no terminal stage: the last enabled stage must be one that answers requests (etcd-writer)"}
	}
	return nil
}

func sortedNestedKeys(m map[string]Kind) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// walk calls fn on in and every nested instance below it.
func walk(ins []*Instance, fn func(*Instance)) {
	for _, in := range ins {
		for _, key := range sortedNestedKeys(in.Plugin.Nested) {
			walk(in.Nested[key], fn)
		}
		fn(in)
	}
}

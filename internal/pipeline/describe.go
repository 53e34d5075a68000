package pipeline

import "github.com/kpipe/kpipe/config"

// Description is the active pipeline as /debug/pipeline shows it.
type Description struct {
	Generation int64              `json:"generation"`
	Stages     []EntryDescription `json:"stages"`
}

// EntryDescription is one enabled entry and its effective config.
type EntryDescription struct {
	Name   string                        `json:"name"`
	Kind   Kind                          `json:"kind"`
	Config any                           `json:"config,omitempty"`
	Nested map[string][]EntryDescription `json:"nested,omitempty"`
}

// Describe reports the active generation. Configs that hold secrets show
// what their Redacted method returns.
func (e *Engine) Describe() Description {
	g := e.cur.Load()
	if g == nil {
		return Description{}
	}
	return Description{Generation: g.id, Stages: describe(g.stages)}
}

func describe(ins []*Instance) []EntryDescription {
	out := make([]EntryDescription, 0, len(ins))
	for _, in := range ins {
		d := EntryDescription{Name: in.Plugin.Name, Kind: in.Plugin.Kind, Config: config.ToMap(in.Config)}
		if r, ok := in.Config.(Redactor); ok {
			d.Config = config.ToMap(r.Redacted())
		}
		for _, key := range sortedNestedKeys(in.Plugin.Nested) {
			if d.Nested == nil {
				d.Nested = map[string][]EntryDescription{}
			}
			d.Nested[key] = describe(in.Nested[key])
		}
		out = append(out, d)
	}
	return out
}

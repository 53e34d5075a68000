package admission

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/request"
)

// counting is a mutating plugin that counts its calls per round and, in
// the first round, asks for reinvocation when want is set.
type counting struct {
	want   bool
	rounds []bool // IsReinvoke of each call
}

func (c *counting) Admit(_ context.Context, a *Attributes) error {
	c.rounds = append(c.rounds, a.Reinvocation.IsReinvoke())
	if c.want {
		a.Reinvocation.SetShouldReinvoke() // asked in both rounds: only one more is granted
	}
	return nil
}

func TestReinvocation(t *testing.T) {
	admit := func(p Mutator, ctx context.Context, a *Attributes) error { return p.Admit(ctx, a) }
	for _, c := range []struct {
		name       string
		typ        string
		asks       bool
		wantRounds int
	}{
		{"no reinvocation asked", TypeAdmit, false, 1},
		{"asked: the whole list once more", TypeAdmit, true, 2},
		{"never in the validating step", TypeValidate, true, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			first, asker, last := &counting{}, &counting{want: c.asks}, &counting{}
			plugins := []Named[Mutator]{{"first", first}, {"asker", asker}, {"last", last}}
			a := &Attributes{Operation: Create, Info: &request.RequestInfo{Verb: "create"},
				Op: &request.Operation{Resource: &api.Resource{GroupVersion: schema.GroupVersion{Version: "v1"}, Name: "configmaps"}}}
			if err := Run(context.Background(), c.typ, plugins, admit, nil, a); err != nil {
				t.Fatal(err)
			}
			for _, p := range []*counting{first, asker, last} {
				if len(p.rounds) != c.wantRounds || p.rounds[0] || (c.wantRounds == 2 && !p.rounds[1]) {
					t.Fatalf("rounds %v, want %d", p.rounds, c.wantRounds)
				}
			}
		})
	}
}

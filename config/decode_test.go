package config

import (
	"os"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

type sample struct {
	Name    string         `koanf:"name"`
	Count   int            `koanf:"count"`
	Ratio   float64        `koanf:"ratio"`
	On      bool           `koanf:"on"`
	Wait    time.Duration  `koanf:"wait"`
	Tags    []string       `koanf:"tags"`
	Inner   *sample        `koanf:"inner"`
	Entries []Entry        `koanf:"entries"`
	Free    map[string]any `koanf:"free"`
}

func TestDecode(t *testing.T) {
	cases := []struct {
		name    string
		in      map[string]any
		check   func(*sample) bool
		wantErr string
	}{
		{name: "scalars", in: map[string]any{"name": "a", "count": 3, "ratio": 0.5, "on": true, "wait": "2s"},
			check: func(s *sample) bool {
				return s.Name == "a" && s.Count == 3 && s.Ratio == 0.5 && s.On && s.Wait == 2*time.Second
			}},
		{name: "defaults kept", in: map[string]any{}, check: func(s *sample) bool { return s.Count == 7 }},
		{name: "null keeps default", in: map[string]any{"count": nil}, check: func(s *sample) bool { return s.Count == 7 }},
		{name: "nested pointer", in: map[string]any{"inner": map[string]any{"count": 2}}, check: func(s *sample) bool { return s.Inner != nil && s.Inner.Count == 2 }},
		{name: "entries", in: map[string]any{"entries": []any{map[string]any{"name": "x", "enabled": false, "config": map[string]any{"k": 1}}}},
			check: func(s *sample) bool {
				return len(s.Entries) == 1 && !s.Entries[0].IsEnabled() && s.Entries[0].Config["k"] == 1
			}},
		{name: "comma list", in: map[string]any{"tags": "a, b"}, check: func(s *sample) bool { return len(s.Tags) == 2 && s.Tags[1] == "b" }},
		{name: "unknown nested key", in: map[string]any{"inner": map[string]any{"cont": 1}}, wantErr: "p.inner.cont: unknown key"},
		{name: "fraction for int", in: map[string]any{"count": 1.5}, wantErr: "p.count: want an integer, got 1.5"},
		{name: "string for bool", in: map[string]any{"on": "yes"}, wantErr: "p.on: want true or false"},
		{name: "bad list item", in: map[string]any{"entries": []any{"x"}}, wantErr: "p.entries[0]: want a mapping"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &sample{Count: 7}
			err := Decode(c.in, s, "p")
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !c.check(s) {
				t.Errorf("decoded %+v", s)
			}
		})
	}
}

func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		"server:\n  securePort: 6443\n",
		"pipeline:\n  - name: a\n    config: {x: 1}\n",
		"storage:\n  etcd:\n    endpoints: [http://a:1]\n",
		"stateDir: [",
		"tls: {cipherSuites: [a, b]}",
	} {
		f.Add(s)
	}
	// The shipped default, so every key it sets starts in the corpus.
	if b, err := os.ReadFile("../apiserver.yaml"); err == nil {
		f.Add(string(b))
	} else {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		p := t.TempDir() + "/c.yaml"
		if err := writeRaw(p, body); err != nil {
			t.Skip()
		}
		checkLoad(t, p)
	})
}

// checkLoad holds what Load promises of any file: an error names the file
// the bad value came from, and what `config print` writes of an accepted
// config loads again to the same config.
func checkLoad(t *testing.T, p string) {
	t.Helper()
	l, err := Load(Options{File: p, Environ: []string{}})
	if err != nil {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("the error does not name the file %s: %v", p, err)
		}
		return
	}
	printed, err := yaml.Marshal(ToMap(l.Config))
	if err != nil {
		t.Fatalf("printing the loaded config: %v", err)
	}
	again := p + ".printed"
	if err := writeRaw(again, string(printed)); err != nil {
		t.Fatal(err)
	}
	l2, err := Load(Options{File: again, Environ: []string{}})
	if err != nil {
		t.Fatalf("the printed config does not load: %v\n%s", err, printed)
	}
	if reprinted, _ := yaml.Marshal(ToMap(l2.Config)); string(reprinted) != string(printed) {
		t.Fatalf("the printed config loads to another config:\n%s\nthen\n%s", printed, reprinted)
	}
}

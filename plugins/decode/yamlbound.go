package decode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
)

// boundYAML refuses a YAML body (a create, update or delete body in
// application/yaml, or an apply patch) whose aliases would expand it past
// limit bytes once converted to JSON, with a 413 naming the limit. The
// converter kube and kpipe use (sigs.k8s.io/yaml) expands every alias
// into a copy: a 1 MiB body aliasing one large string 200 times becomes
// 200 MiB of JSON, and more in memory. Here the size is counted on the
// node tree first, where an alias is a pointer, so nothing is expanded.
// Other media types pass.
func boundYAML(mediaType string, body []byte, limit int64) error {
	switch mediaType {
	case "application/yaml", string(types.ApplyYAMLPatchType):
	default:
		return nil
	}
	if n, ok := yamlJSONSize(body, limit); ok && n > limit {
		return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d for the YAML body with its aliases expanded", limit))
	}
	return nil
}

// yamlJSONSize counts what the first document of body (the one the
// converter reads) comes to as compact JSON with its aliases expanded,
// counting up to just past limit. Every scalar is counted as the JSON
// string of its text, escapes included; a !!binary one as the escapes of
// its decoded bytes. A number or timestamp may print longer than that
// (1e20 is 21 digits), so the count holds to a small factor there.
//
// Without an alias (no "*" in the body), or as valid JSON, which YAML
// reads without aliases, a body comes to about its own size and is not
// parsed here. ok is false when the body does not parse: the converter
// answers it with its own error.
func yamlJSONSize(body []byte, limit int64) (n int64, ok bool) {
	if !bytes.Contains(body, []byte{'*'}) || json.Valid(body) {
		return 0, false
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(body)).Decode(&doc); err != nil {
		return 0, false
	}
	c := &sizeCounter{cap: limit + 1, sizes: map[*yaml.Node]int64{}}
	return c.size(&doc), true
}

// sizeCounter counts each anchored node once, so an alias costs a map
// lookup however often it is used and however deeply aliases nest. Sizes stop
// at cap, which is enough to tell over the limit from within it.
type sizeCounter struct {
	cap   int64
	sizes map[*yaml.Node]int64
}

func (c *sizeCounter) add(a, b int64) int64 { return min(a+b, c.cap) }

func (c *sizeCounter) size(n *yaml.Node) int64 {
	if n == nil {
		return 0
	}
	// Only an anchored node can be reached twice, through its aliases.
	anchored := n.Anchor != ""
	if anchored {
		if s, ok := c.sizes[n]; ok {
			return s
		}
		// An anchor that contains itself counts as nothing while it is
		// being counted; the converter refuses it.
		c.sizes[n] = 0
	}
	var s int64
	switch n.Kind {
	case yaml.DocumentNode:
		for _, k := range n.Content {
			s = c.add(s, c.size(k))
		}
	case yaml.AliasNode:
		s = c.size(n.Alias)
	case yaml.ScalarNode:
		s = scalarSize(n)
	case yaml.MappingNode, yaml.SequenceNode:
		// The brackets and a comma between entries; in a mapping, whose
		// content is key, value, key, value, a colon after each key.
		entries := len(n.Content)
		if n.Kind == yaml.MappingNode {
			entries /= 2
			s = int64(entries)
		}
		s += 2 + int64(max(entries-1, 0))
		for _, k := range n.Content {
			s = c.add(s, c.size(k))
		}
	}
	s = min(s, c.cap)
	if anchored {
		c.sizes[n] = s
	}
	return s
}

// scalarSize is a scalar as a JSON string: its quotes and its text, with
// what JSON escapes as \uXXXX (controls, <, >, &, invalid UTF-8) counted
// six times and '"', '\', \n, \r and \t twice.
func scalarSize(n *yaml.Node) int64 {
	if n.Tag != "" && n.ShortTag() == "!!binary" {
		// Base64 decodes to three bytes for four; each may be invalid
		// UTF-8, written as \ufffd.
		return 2 + int64(len(n.Value))*3/4*6 + 6
	}
	s := int64(2)
	v := n.Value
	for i := 0; i < len(v); {
		r, w := utf8.DecodeRuneInString(v[i:])
		switch {
		case r == utf8.RuneError && w == 1:
			s += 6
		case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t':
			s += 2
		case r < 0x20 || r == '<' || r == '>' || r == '&' || r == '\u2028' || r == '\u2029':
			s += 6
		default:
			s += int64(w)
		}
		i += w
	}
	return s
}

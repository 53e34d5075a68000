package jwt

import (
	"regexp"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// Claim names that are not CEL identifiers are selected escaped, as in
// kube: claims.example__dot__com__slash__groups is the claim
// "example.com/groups" (claims["example.com/groups"] works too).

// celReserved are CEL's reserved words, selected as __word__.
var celReserved = map[string]bool{
	"true": true, "false": true, "null": true, "in": true, "as": true, "break": true, "const": true,
	"continue": true, "else": true, "for": true, "function": true, "if": true, "import": true, "let": true,
	"loop": true, "package": true, "namespace": true, "return": true, "var": true, "void": true, "while": true,
}

var escapedRun = regexp.MustCompile(`(_{2}[^_]+_{2})`)

// unescape is kube's cel.Unescape: __underscores__, __dot__, __dash__ and
// __slash__ anywhere, __word__ for a whole reserved word.
func unescape(s string) (string, bool) {
	ok := true
	out := escapedRun.ReplaceAllStringFunc(s, func(m string) string {
		inner := m[2 : len(m)-2]
		switch inner {
		case "underscores":
			return "__"
		case "dot":
			return "."
		case "dash":
			return "-"
		case "slash":
			return "/"
		}
		if celReserved[inner] {
			if len(m) != len(s) {
				ok = false
			}
			return inner
		}
		ok = false
		return ""
	})
	return out, ok
}

// unescapeMapper looks a selected name up unescaped when it has escapes.
type unescapeMapper struct{ traits.Mapper }

func (m unescapeMapper) Find(key ref.Val) (ref.Val, bool) {
	if k, ok := key.(types.String); ok {
		if name, ok := unescape(string(k)); ok && name != string(k) {
			key = types.String(name)
		}
	}
	v, found := m.Mapper.Find(key)
	return wrapUnescape(v), found
}

type unescapeLister struct{ traits.Lister }

func (l unescapeLister) Get(i ref.Val) ref.Val { return wrapUnescape(l.Lister.Get(i)) }

// wrapUnescape makes maps, also nested in lists and maps, unescape.
func wrapUnescape(v ref.Val) ref.Val {
	switch t := v.(type) {
	case traits.Mapper:
		return unescapeMapper{t}
	case traits.Lister:
		return unescapeLister{t}
	}
	return v
}

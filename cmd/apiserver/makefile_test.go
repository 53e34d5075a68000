package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const repoRoot = "../.."

// `make fuzz` runs what `make fuzz-list` prints; that list must hold every
// fuzz target in the code, found here by parsing the test files rather
// than by the Makefile's own pattern.
func TestMakeFuzzListsEveryTarget(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not on PATH")
	}
	var want []string
	for _, dir := range []string{"cmd", "config", "internal", "plugins"} {
		err := filepath.WalkDir(filepath.Join(repoRoot, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(repoRoot, filepath.Dir(p))
			for _, decl := range f.Decls {
				if fn, ok := decl.(*ast.FuncDecl); ok && isFuzzTarget(fn) {
					want = append(want, fn.Name.Name+" ./"+filepath.ToSlash(rel)+"/")
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(want) == 0 {
		t.Fatal("found no fuzz targets in the code")
	}
	out, err := exec.Command("make", "-s", "-C", repoRoot, "fuzz-list").Output()
	if err != nil {
		t.Fatalf("make fuzz-list: %v", err)
	}
	var listed []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		listed = append(listed, strings.Join(strings.Fields(line), " "))
	}
	slices.Sort(want)
	slices.Sort(listed)
	if !slices.Equal(want, listed) {
		t.Errorf("make fuzz-list prints\n  %s\nthe code holds\n  %s", strings.Join(listed, "\n  "), strings.Join(want, "\n  "))
	}
}

// isFuzzTarget is go test's rule: a top-level FuzzXxx taking one *testing.F.
func isFuzzTarget(fn *ast.FuncDecl) bool {
	if fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Fuzz") || len(fn.Type.Params.List) != 1 {
		return false
	}
	star, ok := fn.Type.Params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "F"
}

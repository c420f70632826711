package cue

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
)

// TestSelectors: every definition selectors.go names is one the rules
// declare, so that a definition renamed in a .cue file fails here, not in
// the reader that looks it up.
func TestSelectors(t *testing.T) {
	root, err := Load(cuecontext.New())
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), "selectors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, name := range vs.Names {
				def, err := strconv.Unquote(vs.Values[i].(*ast.BasicLit).Value)
				if err != nil {
					t.Fatal(err)
				}
				n++
				if !root.LookupPath(cue.ParsePath(def)).Exists() {
					t.Errorf("%s = %q: the rules declare no such definition", name.Name, def)
				}
			}
		}
	}
	if n < 30 {
		t.Errorf("selectors.go names %d definitions; the parse found too few to trust", n)
	}
}

//go:build unix

package live

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// checkers are the calls that skip a live test when its harness is not
// under test and record its outcome for the results file.
var checkers = map[string]bool{"harness": true, "needs": true, "newWorld": true, "newWorldFor": true, "eachHarness": true}

// Every live test calls harness, needs or newWorld before it starts a
// subtest. A test that starts subtests first says PASS when every subtest
// skipped (go test reports a parent passed unless it skips itself), and is
// missing from the results file that proves the provider tables.
func TestEveryTestChecksItsHarness(t *testing.T) {
	paths, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var n int
	for _, path := range paths {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || len(fd.Name.Name) < 5 || fd.Name.Name[:4] != "Test" ||
				fd.Name.Name == "TestMain" || fd.Name.Name == t.Name() || fd.Body == nil {
				continue
			}
			n++
			// A test looping over the providers checks that this run
			// proves one of them (needs): harness would skip it whole on
			// a run of the other.
			want := checkers
			if rangesOver(fd.Body, "providers") || rangesOver(fd.Body, "probed") ||
				rangesOver(fd.Body, "verifiable") || rangesOver(fd.Body, "crashable") {
				want = map[string]bool{"needs": true, "needsUntabled": true}
			}
			checked := false
			for _, st := range fd.Body.List {
				if calls(st, func(c *ast.CallExpr) bool {
					id, ok := c.Fun.(*ast.Ident)
					return ok && want[id.Name]
				}) {
					checked = true
					break
				}
				if calls(st, func(c *ast.CallExpr) bool {
					sel, ok := c.Fun.(*ast.SelectorExpr)
					return ok && sel.Sel.Name == "Run"
				}) {
					break
				}
			}
			if !checked {
				t.Errorf("%s: %s starts no harness check (%s) before its first subtest",
					fset.Position(fd.Pos()), fd.Name.Name, strings.Join(slices.Sorted(maps.Keys(want)), ", "))
			}
		}
	}
	if n < 20 {
		t.Errorf("found %d live tests; the walk is broken", n)
	}
}

// rangesOver reports whether n holds a range loop over the identifier name.
func rangesOver(n ast.Node, name string) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if r, ok := n.(*ast.RangeStmt); ok {
			if id, ok := r.X.(*ast.Ident); ok && id.Name == name {
				found = true
			}
		}
		return !found
	})
	return found
}

// calls reports whether n holds a call for which match is true.
func calls(n ast.Node, match func(*ast.CallExpr) bool) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok && match(c) {
			found = true
		}
		return !found
	})
	return found
}

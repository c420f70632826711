package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"dalo/plan"
)

// TestDocLayout: the layout of $DALO_HOME in doc.go names every entry the
// store's code puts at its top (the first name of each s.path call) and
// every entry of plan's the store holds, so that the one description of
// the layout does not fall behind the code.
func TestDocLayout(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(src)
	// The constants the store names top entries by.
	consts := map[string]string{
		"LocalTablesDir": LocalTablesDir, "gitDir": gitDir, "dispatchersDir": dispatchersDir,
		"plan.PendingDir": plan.PendingDir, "plan.ProjectsDir": plan.ProjectsDir,
		"plan.DispatchLock": plan.DispatchLock,
	}
	// Entries below the top, named anywhere in the layout.
	inner := []string{projectFile, journalFile}
	// Top entries, each starting a line of the layout: the first name of
	// every s.path call, and what plan keeps in the store.
	want := map[string]string{plan.StopsDir: "plan.StopsDir"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "path" {
				return true
			}
			at := fset.Position(call.Pos()).String()
			switch a := call.Args[0].(type) {
			case *ast.BasicLit:
				s, _ := strconv.Unquote(a.Value)
				want[s] = at
			case *ast.Ident:
				if v, ok := consts[a.Name]; ok {
					want[v] = at
				} else if call.Ellipsis == token.NoPos {
					t.Errorf("%s: s.path(%s, ...): name its value in this test's consts", at, a.Name)
				}
			case *ast.SelectorExpr:
				k := a.X.(*ast.Ident).Name + "." + a.Sel.Name
				if v, ok := consts[k]; ok {
					want[v] = at
				} else {
					t.Errorf("%s: s.path(%s, ...): name its value in this test's consts", at, k)
				}
			}
			return true
		})
	}
	if len(want) < 15 {
		t.Fatalf("found %d top entries of the store: too few to trust the scan", len(want))
	}
	for entry, at := range want {
		if !strings.Contains(doc, "//\t"+entry+"/") && !strings.Contains(doc, "//\t"+entry+" ") {
			t.Errorf("doc.go's layout has no line for %s (%s)", entry, at)
		}
	}
	for _, entry := range inner {
		if !strings.Contains(doc, " "+entry+" ") {
			t.Errorf("doc.go's layout does not name %s", entry)
		}
	}
}

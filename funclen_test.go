package dalo_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxFuncLines is the most lines a function of dalo's (its tests too,
// generated files aside) may span, and maxLongFuncs how many may pass it.
// A function longer than a screenful is read as a list of steps without
// names; split along its seams, each step gets a name and a comment that
// says why it is there. A test is read the same way: its table of cases
// is a variable of its own, and its checks are named.
const (
	maxFuncLines = 120
	maxLongFuncs = 1
)

// TestFunctionLength fails when more than maxLongFuncs functions span
// more than maxFuncLines lines, and lists them, longest first.
func TestFunctionLength(t *testing.T) {
	long, err := longFuncs(".", maxFuncLines)
	if err != nil {
		t.Fatal(err)
	}
	if len(long) > maxLongFuncs {
		t.Errorf("%d functions span more than %d lines, at most %d may:\n\t%s", len(long), maxFuncLines, maxLongFuncs, strings.Join(long, "\n\t"))
	}
}

// longFuncs lists the functions of the Go files under root, generated
// files aside, that span more than max lines, longest first:
// "file:line: name (n lines)".
func longFuncs(root string, max int) ([]string, error) {
	type fn struct {
		at    string
		lines int
	}
	var found []fn
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		for _, decl := range f.Decls {
			d, ok := decl.(*ast.FuncDecl)
			if !ok || d.Body == nil {
				continue
			}
			start, end := fset.Position(d.Pos()), fset.Position(d.End())
			if n := end.Line - start.Line + 1; n > max {
				found = append(found, fn{fmt.Sprintf("%s:%d: %s", path, start.Line, d.Name.Name), n})
			}
		}
		return nil
	})
	sort.SliceStable(found, func(i, j int) bool { return found[i].lines > found[j].lines })
	var out []string
	for _, f := range found {
		out = append(out, fmt.Sprintf("%s (%d lines)", f.at, f.lines))
	}
	return out, err
}

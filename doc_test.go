package dalo_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportedDocumented fails for an exported identifier of a library
// package that has no doc comment: a type, function, method of an exported
// type, constant or variable (a comment on its group counts). What a
// package exports is what another package's author reads first, in go doc;
// it says what the name holds and why. Generated files, tests and
// commands (package main) are left out.
func TestExportedDocumented(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" || ast.IsGenerated(f) {
			return nil
		}
		for _, name := range undocumented(f) {
			t.Errorf("%s: exported %s has no doc comment", fset.Position(name.Pos()), name.Name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// undocumented returns the exported names f declares without a doc
// comment. A method counts only when its receiver's type is exported:
// go doc shows no other.
func undocumented(f *ast.File) []*ast.Ident {
	var out []*ast.Ident
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() && d.Doc == nil && (d.Recv == nil || exportedReceiver(d.Recv)) {
				out = append(out, d.Name)
			}
		case *ast.GenDecl:
			if d.Doc != nil {
				continue
			}
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() && s.Doc == nil {
						out = append(out, s.Name)
					}
				case *ast.ValueSpec:
					if s.Doc != nil || s.Comment != nil {
						continue
					}
					for _, n := range s.Names {
						if n.IsExported() {
							out = append(out, n)
						}
					}
				}
			}
		}
	}
	return out
}

// exportedReceiver says whether a method's receiver type is exported.
func exportedReceiver(recv *ast.FieldList) bool {
	t := recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}

// TestReadmeMap fails for a package the README's package map ("What is
// where") does not name: by its directory (store/gitrepo) or, within its
// parent's entry, by its last element (live/probe, scenario). A newcomer
// reads the map before any code.
func TestReadmeMap(t *testing.T) {
	src, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(src), "\n## What is where\n")
	if !ok {
		t.Fatal("README.md has no section \"What is where\"")
	}
	block, _, _ = strings.Cut(block, "\n## ")
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(block, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '/' || r == '_' || r == '-')
	}) {
		words[strings.Trim(w, "/")] = true
		if i := strings.LastIndexByte(strings.Trim(w, "/"), '/'); i >= 0 {
			words[strings.Trim(w, "/")[i+1:]] = true
		}
	}
	n := 0
	for _, pkg := range strings.Fields(goList(t, "./...")) {
		dir, ok := strings.CutPrefix(pkg, "dalo/")
		if !ok {
			continue // the module's root package
		}
		n++
		last := dir[strings.LastIndexByte(dir, '/')+1:]
		if !strings.Contains(block, dir) && !words[last] {
			t.Errorf("the README's package map does not name %s", dir)
		}
	}
	if n < 30 {
		t.Fatalf("go list found %d packages: too few to trust", n)
	}
}

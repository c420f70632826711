package dalo_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// rawCallers are the files whose system calls are many and short: the
// validator's walk of package and skill directories and the reads of
// manifests and member files, and bench/walkfloor, which measures what
// that walk costs at the least. They make them raw, through package
// rawsys (see there why), and call no function of package syscall or
// unix, whose calls enter the scheduler.
var rawCallers = []string{
	"bench/walkfloor/main.go",
	"engine/walkdir_linux.go",
	"internal/regular/regular.go",
	"internal/regular/sys_linux.go",
}

func TestRawSystemCalls(t *testing.T) {
	for _, name := range rawCallers {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && (pkg.Name == "unix" || pkg.Name == "syscall") {
				t.Errorf("%s: %s.%s enters the scheduler; call rawsys", fset.Position(call.Pos()), pkg.Name, sel.Sel.Name)
			}
			return true
		})
	}
}

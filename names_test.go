package dalo_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"dalo/providers"
)

// otherMeanings are the string literals that spell a value of one of the
// rules' enumerations but mean something else, by file: each says what.
var otherMeanings = map[string]map[string]string{
	"bench/measure/main.go": {"before": "the name of a flag"},
	"claudeplugin/convert.go": {
		"prompt": "a type of Claude Code hook",
	},
	"claudeplugin/reach.go": {
		"node":   "an interpreter a script's first line names",
		"python": "an interpreter a script's first line names",
	},
	"internal/scenario/matrixbash.go": {
		"session":        "the name of a live subtest a scenario is",
		"rewrite_input":  "the name of a live subtest a scenario is",
		"replace_output": "the name of a live subtest a scenario is",
	},
	"internal/scenario/matrixclaude_more.go": {
		"prompt": "an argument of Claude Code's WebFetch and Agent tools",
	},
	"internal/scenario/scenario.go": {
		"session": "a scenario's name",
		"deny":    "the name of a prompt-gate scenario",
	},
	"plan/canonical.go": {
		"required":   "the json name of PlannedInput.Required, written by hand",
		"executable": "the json name of FileDigest.Executable, written by hand",
	},
	"plan/decode.go": {
		"required":   "the json name of PlannedInput.Required, read by hand",
		"executable": "the json name of FileDigest.Executable, read by hand",
	},
	"plan/plan.go": {
		"user": "the user's channel beside the parts of a composed outcome (PartUser)",
	},
	"providers/table.go": {"deny": "what a harness does with a failed hook command (FailedDeny)"},
}

// TestEnumLiterals fails when a Go file of dalo spells a value of an
// enumeration of the rules (a subject, phase, effect, failure policy,
// visibility, result kind or runtime) as a string literal instead of
// naming it by the constant go generate writes into plan/known.go
// (plan.PolicyFailClosed, plan.KindDeny...): a value is stated once, in
// CUE, and a rule renamed there fails the build wherever Go uses it.
// Tests, which state what they expect, and generated files are left out;
// otherMeanings lists the literals that only look like a value.
func TestEnumLiterals(t *testing.T) {
	enums, err := providers.Enums()
	if err != nil {
		t.Fatal(err)
	}
	of := map[string]string{} // value → the definitions it is a value of
	for def, vals := range enums {
		for _, v := range vals {
			of[v] = strings.TrimPrefix(of[v]+" or "+def, " or ")
		}
	}
	if len(of) < 20 {
		t.Fatalf("the rules' enumerations hold %d values: too few to trust", len(of))
	}
	lits, err := stringLiterals(".", func(path, s string) bool {
		_, ok := of[s]
		return ok && otherMeanings[filepath.ToSlash(path)][s] == ""
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lits {
		t.Errorf("%s: %s is a value of %s: name it by its constant in plan/known.go", l.at, strconv.Quote(l.s), of[l.s])
	}
}

// defName matches a string literal that names a definition of the rules,
// alone or as the start of a path: "#Manifest", "#Capability.requirement".
var defName = regexp.MustCompile(`^#[A-Z][A-Za-z0-9_]*(\.|$)`)

// TestDefinitionNames fails when a Go file of dalo other than
// cue/selectors.go spells the name of a definition of the rules: Go looks
// a definition up by the constant of the cue package that names it
// (defs.Manifest), so that renaming one in CUE is one edit in Go.
func TestDefinitionNames(t *testing.T) {
	lits, err := stringLiterals(".", func(path, s string) bool {
		return filepath.ToSlash(path) != "cue/selectors.go" && defName.MatchString(s)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lits {
		t.Errorf("%s: %s names a definition of the rules: use its constant in cue/selectors.go", l.at, strconv.Quote(l.s))
	}
}

type literal struct{ at, s string }

// stringLiterals lists the string literals of the Go files under root,
// tests and generated files aside, for which match, given the file and the
// literal's value, reports true.
func stringLiterals(root string, match func(path, s string) bool) ([]literal, error) {
	var out []literal
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
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if _, ok := n.(*ast.ImportSpec); ok {
				return false // a package's path: "context" is no #Part
			}
			l, ok := n.(*ast.BasicLit)
			if !ok || l.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(l.Value)
			if err == nil && match(path, s) {
				p := fset.Position(l.Pos())
				out = append(out, literal{fmt.Sprintf("%s:%d:%d", path, p.Line, p.Column), s})
			}
			return true
		})
		return nil
	})
	slices.SortFunc(out, func(a, b literal) int { return strings.Compare(a.at, b.at) })
	return out, err
}

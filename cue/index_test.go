package cue

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
)

var updateIndex = flag.Bool("update-index", false, "rewrite docs/rules.md from the rules")

// indexFile is where a newcomer looks a rule up by its name.
const indexFile = "../docs/rules.md"

// rule is one definition of the rules: its name, the file that states it
// and the first sentence of its doc comment.
type rule struct{ name, file, doc string }

// rules lists every exported definition of the embedded files (a name
// after '#' that starts with a capital), sorted by name.
func rules(t *testing.T) []rule {
	names, err := fs.Glob(files, "*.cue")
	if err != nil {
		t.Fatal(err)
	}
	var out []rule
	for _, name := range names {
		src, err := fs.ReadFile(files, name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(name, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.Field)
			if !ok {
				continue
			}
			label, _, _ := ast.LabelName(fd.Label)
			def, ok := strings.CutPrefix(label, "#")
			if !ok || def == "" || !unicode.IsUpper(rune(def[0])) {
				continue
			}
			r := rule{name: label, file: "cue/" + name}
			for _, c := range ast.Comments(fd) {
				if c.Doc {
					r.doc = firstSentence(c.Text())
				}
			}
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b rule) int { return strings.Compare(a.name, b.name) })
	// A definition stated in several files is one rule (#Tables, to which
	// each file adds the checks that its tables agree), described by the
	// comment that says what it is: the one that starts with its name.
	var merged []rule
	for _, r := range out {
		n := len(merged)
		if n == 0 || merged[n-1].name != r.name {
			merged = append(merged, r)
			continue
		}
		m := &merged[n-1]
		if !strings.Contains(m.file, r.file) {
			m.file += ", " + r.file
		}
		if !strings.HasPrefix(m.doc, m.name+" ") && (m.doc == "" || strings.HasPrefix(r.doc, r.name+" ")) {
			m.doc = r.doc
		}
	}
	return merged
}

// firstSentence is text up to its first full stop that ends a sentence,
// on one line.
func firstSentence(text string) string {
	s := strings.Join(strings.Fields(text), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return s
}

// TestRulesIndex: every exported definition of the rules has a doc
// comment and is stated in one file, and docs/rules.md, the index by name,
// lists each with its file and what it is. -update-index rewrites it.
func TestRulesIndex(t *testing.T) {
	rs := rules(t)
	if len(rs) < 60 {
		t.Fatalf("the rules hold %d exported definitions: too few to trust the parse", len(rs))
	}
	var b bytes.Buffer
	b.WriteString("# The rules by name\n\n" +
		"Every definition of the rules, the file of `cue/` that states it, and the\n" +
		"first sentence of its doc comment. Go looks a definition up by the constant\n" +
		"`cue/selectors.go` names it by; `go generate ./providers` writes the values Go\n" +
		"uses into `plan/known.go`. Generated: `go test ./cue -run TestRulesIndex -update-index`.\n\n" +
		"| definition | file | what it is |\n|---|---|---|\n")
	for _, r := range rs {
		if r.doc == "" {
			t.Errorf("%s in %s has no doc comment: say what it is", r.name, r.file)
		}
		if strings.Contains(r.file, ", ") {
			t.Errorf("%s is stated in %s: state a rule in one file, where a reader looks it up", r.name, r.file)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.name, r.file, strings.ReplaceAll(r.doc, "|", `\|`))
	}
	if *updateIndex {
		if err := os.WriteFile(indexFile, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(indexFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, b.Bytes()) {
		t.Errorf("%s is not what the rules say: run go test ./cue -run TestRulesIndex -update-index", indexFile)
	}
}

package dalo_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// conformanceDoc maps each requirement of draft 0.1 to the tests that
// prove it. Its citations are code spans: a file of this module, and for
// a Go test file the test function after it.
const conformanceDoc = "docs/conformance.md"

// minConformanceFiles is how many distinct test files the document cites
// at least: fewer means requirements lost their proof in an edit.
const minConformanceFiles = 60

// citationRE is a code span that cites a test: a path ending in .go or
// .txtar, then for a .go file the name of a test, fuzz target or
// benchmark declared in it.
var citationRE = regexp.MustCompile(`^([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*\.(?:go|txtar))(?: ((?:Test|Fuzz|Benchmark)[A-Za-z0-9_]*))?$`)

// codeSpanRE finds code spans, which may wrap across lines in a list item.
var codeSpanRE = regexp.MustCompile("`([^`]+)`")

// citation is one test the document names.
type citation struct {
	file, test string // test is "" for a script
}

// requirement is one list item of docs/conformance.md (a requirement of
// the draft and what proves it) or, with listItem false, a paragraph,
// whose citations are checked too but which need not cite any.
type requirement struct {
	line      int
	listItem  bool
	text      string
	citations []citation
}

// TestConformanceCitations keeps docs/conformance.md true: every file it
// cites exists, every Go test it cites is declared in the file named
// before it, every requirement cites a test or says it is untested, and
// the document cites at least minConformanceFiles distinct files. A test
// renamed, moved or deleted fails here rather than leaving a requirement
// that only looks proved.
func TestConformanceCitations(t *testing.T) {
	data, err := os.ReadFile(conformanceDoc)
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := parseConformance(string(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) == 0 {
		t.Fatalf("%s: no requirement found", conformanceDoc)
	}
	files := map[string]bool{}
	funcs := map[string]map[string]bool{} // Go file -> its top-level functions
	for _, r := range reqs {
		if r.listItem && len(r.citations) == 0 && !strings.Contains(r.text, "**untested**") {
			t.Errorf("%s:%d: requirement cites no test and does not say it is untested: %.80s", conformanceDoc, r.line, r.text)
		}
		for _, c := range r.citations {
			files[c.file] = true
			if err := checkCitation(c, funcs); err != nil {
				t.Errorf("%s:%d: %v", conformanceDoc, r.line, err)
			}
		}
	}
	t.Logf("%d requirements and paragraphs cite %d distinct files", len(reqs), len(files))
	if len(files) < minConformanceFiles {
		t.Errorf("%s cites %d distinct files, want at least %d", conformanceDoc, len(files), minConformanceFiles)
	}
}

// parseConformance reads the list items and paragraphs of the document
// and the citations in each. A code span that looks like a path to a .go or
// .txtar file but is no well-formed citation is an error, so that a typo
// cannot make a citation silently vanish.
func parseConformance(doc string) ([]requirement, error) {
	var reqs []requirement
	var cur *requirement
	flush := func() error {
		if cur == nil {
			return nil
		}
		for _, m := range codeSpanRE.FindAllStringSubmatch(cur.text, -1) {
			span := strings.Join(strings.Fields(m[1]), " ")
			if !strings.Contains(span, ".go") && !strings.Contains(span, ".txtar") {
				continue
			}
			c := citationRE.FindStringSubmatch(span)
			if c == nil {
				return fmt.Errorf("%s:%d: malformed citation `%s`: want `path/file.txtar` or `path/file_test.go TestName`", conformanceDoc, cur.line, span)
			}
			cur.citations = append(cur.citations, citation{file: c[1], test: c[2]})
		}
		reqs = append(reqs, *cur)
		cur = nil
		return nil
	}
	for i, line := range strings.Split(doc, "\n") {
		switch {
		case strings.HasPrefix(line, "- "):
			if err := flush(); err != nil {
				return nil, err
			}
			cur = &requirement{line: i + 1, listItem: true, text: line[2:]}
		case cur != nil && (strings.HasPrefix(line, "  ") || !cur.listItem && line != "" && !strings.HasPrefix(line, "#")):
			cur.text += "\n" + line
		case line == "" || strings.HasPrefix(line, "#"):
			if err := flush(); err != nil {
				return nil, err
			}
		default:
			if err := flush(); err != nil {
				return nil, err
			}
			cur = &requirement{line: i + 1, text: line}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return reqs, nil
}

// checkCitation reports whether c names an existing file and, for a Go
// file, a test function declared in it. funcs caches each file's parse.
func checkCitation(c citation, funcs map[string]map[string]bool) error {
	info, err := os.Stat(filepath.FromSlash(c.file))
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", c.file)
	}
	if !strings.HasSuffix(c.file, ".go") {
		if c.test != "" {
			return fmt.Errorf("%s: a script is cited by its file alone, not with %s", c.file, c.test)
		}
		return nil
	}
	if !strings.HasSuffix(c.file, "_test.go") {
		return fmt.Errorf("%s is not a test file", c.file)
	}
	if c.test == "" {
		return fmt.Errorf("%s: cite the test function after the file", c.file)
	}
	declared, ok := funcs[c.file]
	if !ok {
		f, err := parser.ParseFile(token.NewFileSet(), filepath.FromSlash(c.file), nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		declared = map[string]bool{}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				declared[fd.Name.Name] = true
			}
		}
		funcs[c.file] = declared
	}
	if !declared[c.test] {
		return fmt.Errorf("%s declares no function %s", c.file, c.test)
	}
	return nil
}

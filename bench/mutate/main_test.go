package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseLocate reads a mutants file and finds each mutant's line: the
// only equal line, or the k-th of several; and names the file and line of
// every block it cannot use.
func TestParseLocate(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "a.go")
	os.WriteFile(src, []byte("package a\n\nfunc f(x int) bool {\n\tif x > 0 {\n\t\treturn true\n\t}\n\treturn true\n}\n"), 0o644)
	list := filepath.Join(dir, "mutants.txt")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(list, []byte(strings.ReplaceAll(s, "SRC", filepath.ToSlash(src))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("# a comment\nSRC ./a -run ^TestF$\n- if x > 0 {\n+ if x >= 0 {\n\nSRC@2 ./a\n-   return true\n+ return false\n\nSRC ./a\n- return true\n+\n")
	ms, err := parse(list)
	if err != nil {
		t.Fatal(err)
	}
	err = locate(ms)
	if len(ms) != 3 || ms[0].line != 4 || ms[1].line != 7 || strings.Join(ms[0].args, " ") != "./a -run ^TestF$" || ms[2].new != "" {
		t.Fatalf("parsed %d mutants, lines %d %d", len(ms), ms[0].line, ms[1].line)
	}
	if err == nil || !strings.Contains(err.Error(), ":10: \"return true\" is on lines [5 7]") {
		t.Errorf("a line on two lines: %v", err)
	}
	for _, c := range []struct{ list, want string }{
		{"SRC ./a\n- if x > 0 {\n", "mutants.txt:1: a mutant is a header"},
		{"SRC\n- if x > 0 {\n+ if x < 0 {\n", "the header names the file and the packages"},
		{"SRC ./a\n- if x > 0 {\n+ if x > 0 {\n", "the mutant changes nothing"},
		{"SRC@0 ./a\n- if x > 0 {\n+ if x < 0 {\n", "after @ goes which of equal lines"},
	} {
		write(c.list)
		if _, err := parse(list); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.list, err, c.want)
		}
	}
	write("SRC ./a\n- if y > 0 {\n+ if y < 0 {\n\nSRC@3 ./a\n- return true\n+ return false\n")
	ms, _ = parse(list)
	if err := locate(ms); err == nil || !strings.Contains(err.Error(), "no line of") || !strings.Contains(err.Error(), "is on 2 lines") {
		t.Errorf("lines that are not there: %v", err)
	}
}

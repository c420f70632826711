package engine

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestExpectLimits: an @expect text names a limit by #Limits.NAME, which
// reads as the rules' number, and never writes a limit's number itself:
// a limit changed in cue/limits.cue changes every message that states it.
func TestExpectLimits(t *testing.T) {
	if got, want := expandExpect("at most {#Limits.id_chars} characters, from {#Limits.timeout_min_ms}"), "at most 128 characters, from 100"; got != want {
		t.Errorf("expandExpect = %q, want %q", got, want)
	}
	files, err := filepath.Glob("../cue/*.cue")
	if err != nil {
		t.Fatal(err)
	}
	numbers := map[string]string{}
	for name, v := range limitValues() {
		numbers[v] = name
	}
	expect := regexp.MustCompile(`@expect\(("(?:[^"\\]|\\.)*")\)`)
	// A bound is written "at most N", "at least N", "from N to N".
	bound := regexp.MustCompile(`\b(?:at most|at least|from|to) (\d+)\b`)
	n := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range expect.FindAllStringSubmatch(string(src), -1) {
			s, err := strconv.Unquote(m[1])
			if err != nil {
				t.Fatalf("%s: %s: %v", f, m[0], err)
			}
			n++
			if got := expandExpect(s); strings.Contains(got, "{#") {
				t.Errorf("%s: @expect(%q) names a limit #Limits lacks", f, s)
			}
			for _, b := range bound.FindAllStringSubmatch(s, -1) {
				if name, ok := numbers[b[1]]; ok {
					d := b[1]
					t.Errorf("%s: @expect(%q) writes %s, the value of #Limits.%s: write {#Limits.%[4]s}", f, s, d, name)
				}
			}
		}
	}
	if n < 10 {
		t.Errorf("found %d @expect texts: too few to trust the walk", n)
	}
}

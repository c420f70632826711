package engine

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestCodesDocumented keeps docs/diagnostics.md and the codes the engine,
// the CUE rules and package project (dalo.toml, dalo.lock) can emit the same set: a new code needs its entry, and
// an entry without a code is stale.
func TestCodesDocumented(t *testing.T) {
	emitted := map[string]string{} // code → first file that emits it
	// "E031" in Go and CUE, @code(E024) on CUE fields.
	inSource := regexp.MustCompile(`"([EW][0-9]{3})"|@code\(([EW][0-9]{3})\)`)
	for _, glob := range []string{"*.go", "../cue/*.cue", "../project/*.go"} {
		files, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range inSource.FindAllStringSubmatch(string(src), -1) {
				code := m[1] + m[2]
				if _, ok := emitted[code]; !ok {
					emitted[code] = f
				}
			}
		}
	}
	if len(emitted) < 50 {
		t.Fatalf("found only %d codes in engine/ and cue/: is the pattern stale?", len(emitted))
	}
	doc, err := os.ReadFile("../docs/diagnostics.md")
	if err != nil {
		t.Fatal(err)
	}
	// Each code has a heading: ### E031 error: ...
	heading := regexp.MustCompile(`(?m)^### ([EW][0-9]{3}) (error|warning)\b`)
	documented := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(string(doc), -1) {
		code, sev := m[1], m[2]
		if documented[code] {
			t.Errorf("docs/diagnostics.md: %s is documented twice", code)
		}
		documented[code] = true
		if want := map[byte]string{'E': "error", 'W': "warning"}[code[0]]; sev != want {
			t.Errorf("docs/diagnostics.md: %s is documented as %s, want %s", code, sev, want)
		}
	}
	var missing, stale []string
	for code, f := range emitted {
		if !documented[code] {
			missing = append(missing, code+" (in "+f+")")
		}
	}
	for code := range documented {
		if _, ok := emitted[code]; !ok {
			stale = append(stale, code)
		}
	}
	slices.Sort(missing)
	slices.Sort(stale)
	for _, m := range missing {
		t.Errorf("code %s is not documented in docs/diagnostics.md", m)
	}
	for _, s := range stale {
		t.Errorf("docs/diagnostics.md documents %s, which nothing emits", s)
	}
}

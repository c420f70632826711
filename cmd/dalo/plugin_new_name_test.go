package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPluginNewControlInName: a name holding a terminal control (which no
// testscript argument can) is refused as any bad name is, exit 2 with the
// rule of a package name and the name escaped, before anything is
// written; it was an internal error.
func TestPluginNewControlInName(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	if out := validateOut("init", src); !strings.HasSuffix(out, "--- exit 0") {
		t.Fatal(out)
	}
	for _, args := range [][]string{
		{"plugin", "new", "a\x1b[2Kb", "--source", src},
		{"plugin", "new", "a\nb", "--source", src, "--skill"},
		{"plugin", "new", "ok", "--source", src, "--tool", "t\x1b[2K"},
	} {
		out := validateOut(args...)
		if !strings.HasSuffix(out, "--- exit 2") || !strings.Contains(out, `: expected `) || strings.ContainsAny(out, "\x1b") || strings.Contains(out, "a\nb") {
			t.Errorf("dalo %q:\n%s\nwant exit 2, the rule, the name escaped", args, out)
		}
	}
	for _, d := range []string{"plugins", "skills"} {
		if ents, _ := os.ReadDir(filepath.Join(src, d)); len(ents) != 0 {
			t.Errorf("%s holds %d entries; want none", d, len(ents))
		}
	}
}

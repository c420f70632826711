package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestGatherDiagnosticsAllocatesOnce holds the gathering of a report's
// findings to one slice made to size: appended list after list, 160,000
// findings were copied into a growing slice over and over, a sixth of
// the run's CPU. The order is the report's.
func TestGatherDiagnosticsAllocatesOnce(t *testing.T) {
	top := &diagList{file: "plugins"}
	top.errorf("E003", Pos{}, "", "plugins is a symlink")
	var pkgs []*Package
	for i := range 1000 {
		file := fmt.Sprintf("plugins/p%04d/PLUGIN.toml", 999-i)
		p := &Package{diags: diagList{file: file}, refDiags: diagList{file: file}}
		for j := range 40 {
			p.diags.errorf("E042", Pos{Line: 40 - j, Column: 1}, "tool[0].argv[0]", "finding %d", j)
		}
		p.refDiags.warnf("W075", Pos{Line: 1, Column: 1}, "plugin.members[0]", "reference")
		pkgs = append(pkgs, p)
	}
	files := map[string]*diagList{
		"skills/b/SKILL.md": {file: "skills/b/SKILL.md", diags: []Diagnostic{{Severity: Warning, Code: "W080", File: "skills/b/SKILL.md"}}},
		"skills/a/SKILL.md": {file: "skills/a/SKILL.md", diags: []Diagnostic{{Severity: Warning, Code: "W080", File: "skills/a/SKILL.md"}}},
		"skills/c/SKILL.md": {file: "skills/c/SKILL.md"},
	}
	ds := gatherDiagnostics(top, pkgs, files)
	if want := 1 + 1000*41 + 2; len(ds) != want {
		t.Fatalf("gathered %d findings, want %d", len(ds), want)
	}
	if !slices.IsSortedFunc(ds, func(a, b Diagnostic) int {
		if a.File != b.File {
			return strings.Compare(a.File, b.File)
		}
		return a.Line - b.Line
	}) {
		t.Error("findings not in the report's order")
	}
	if ds[0].File != "plugins" || ds[len(ds)-1].File != "skills/b/SKILL.md" {
		t.Errorf("first %q, last %q", ds[0].File, ds[len(ds)-1].File)
	}
	if raceEnabled {
		return
	}
	// One slice of the findings and one of the names of files with
	// findings; the sort allocates nothing.
	if n := testing.AllocsPerRun(5, func() { gatherDiagnostics(top, pkgs, files) }); n > 2 {
		t.Errorf("gathering 41,003 findings made %v allocations, want at most 2", n)
	}
}

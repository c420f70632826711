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

// TestSprintfAgrees holds sprintf to fmt.Sprintf: the verbs findings use,
// and what it leaves to fmt (other verbs, flags, arguments of other
// types, too few or too many).
func TestSprintfAgrees(t *testing.T) {
	for _, c := range []struct {
		format string
		args   []any
	}{
		{"plain", nil},
		{"", nil},
		{"100%%", nil},
		{"%s", []any{"a"}},
		{"only a whole argument ${input.NAME} may interpolate; %q embeds or malforms a substitution", []any{"--opt=${input.dir}"}},
		{"%q %v %d %v", []any{"tab\there \"quoted\" é \x00", "v", -12, 7}},
		{"%s", []any{Warning}},      // a named string type: fmt's
		{"%x", []any{"hex"}},        // another verb: fmt's
		{"%-5s|", []any{"pad"}},     // a flag
		{"%02x", []any{[]byte{1}}},  // another type
		{"%d", []any{int64(3)}},     // int64 is fmt's
		{"%s %s", []any{"one"}},     // too few
		{"%s", []any{"one", "two"}}, // too many
		{"trailing %", []any{"x"}},
		{"%q", []any{3}},
		{"%d", []any{"s"}},
		{"%v", []any{nil}},
	} {
		if got, want := sprintf(c.format, c.args...), fmt.Sprintf(c.format, c.args...); got != want {
			t.Errorf("sprintf(%q, %#v) = %q, fmt says %q", c.format, c.args, got, want)
		}
	}
}

func FuzzSprintf(f *testing.F) {
	f.Add("%s and %q, %d%%", "a\"b", "\xff", 3)
	f.Add("%v %v %s", "x", "", -1)
	f.Fuzz(func(t *testing.T, format, a, b string, n int) {
		for _, args := range [][]any{{a, b, n}, {a, n}, {n, a, b}, {a}, nil} {
			if got, want := sprintf(format, args...), fmt.Sprintf(format, args...); got != want {
				t.Fatalf("sprintf(%q, %#v) = %q, fmt says %q", format, args, got, want)
			}
		}
	})
}

var messageSink string

// BenchmarkFindingMessage is what a finding's message costs to write.
func BenchmarkFindingMessage(b *testing.B) {
	const format = "only a whole argument ${input.NAME} may interpolate; %q embeds or malforms a substitution"
	b.Run("sprintf", func(b *testing.B) {
		for b.Loop() {
			messageSink = sprintf(format, "--opt0=${input.dir}")
		}
	})
	b.Run("fmt", func(b *testing.B) {
		for b.Loop() {
			messageSink = fmt.Sprintf(format, "--opt0=${input.dir}")
		}
	})
}

// TestWarnTextOnceIndexed holds warnTextOnce with its index (indexOnce)
// to the same findings as without it: a warning is added once for each
// code, field and message, whatever came before the index was made.
func TestWarnTextOnceIndexed(t *testing.T) {
	add := func(l *diagList) {
		for range 2 {
			for _, w := range [][3]string{
				{"W101", "hook[0].matcher.tool_names[0]", "no table has Edit|Write"},
				{"W101", "hook[0].matcher.tool_names[0]", "codex has none of these"},
				{"W101", "hook[0].matcher.tool_names[0]", "gemini has none of these"},
				{"W102", "hook[0].matcher.tool_names[0]", "no table has Edit|Write"},
				{"W101", "hook[0].matcher.tool_names[1]", "no table has Edit|Write"},
				{"W101", "hook[1].matcher.tool_names[0]", ""},
				{"W101", "hook[1].matcher.tool_names[0]", ""},
			} {
				l.warnTextOnce(w[0], Pos{Line: 1, Column: 1}, w[1], w[2])
			}
		}
	}
	var plain diagList
	plain.errorf("E041", Pos{}, "hook[0]", "an error is never a warning to skip")
	plain.warnTextOnce("W101", Pos{}, "hook[0].matcher.tool_names[0]", "codex has none of these")
	indexed := diagList{diags: slices.Clone(plain.diags)}
	add(&plain)
	done := indexed.indexOnce()
	add(&indexed)
	done()
	if len(plain.diags) != 7 {
		t.Errorf("without the index, %d findings, want 7: %v", len(plain.diags), plain.diags)
	}
	if !slices.Equal(plain.diags, indexed.diags) {
		t.Errorf("with the index:\n%v\nwithout:\n%v", indexed.diags, plain.diags)
	}
}

// BenchmarkSortDiagnosticsInOrder sorts the findings of 1,000 skills of
// forty findings each, gathered in order as most reports are.
func BenchmarkSortDiagnosticsInOrder(b *testing.B) {
	var in []Diagnostic
	for i := range 1000 {
		file := fmt.Sprintf("skills/s%04d/SKILL.md", i)
		for j := range 40 {
			in = append(in, Diagnostic{Severity: Warning, Code: "W087", File: file, Line: 3 + j, Column: 1, Message: "unknown front matter key"})
		}
	}
	ds := make([]Diagnostic, len(in))
	for b.Loop() {
		copy(ds, in)
		sortDiagnostics(ds)
	}
}

package main

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"dalo/bench/sourcegen"
	"dalo/engine"
	"dalo/providers"
)

// TestGridNamesAHookOnce: the capability grid of a source costs a few
// allocations a hook, not a few a hook on each provider (a row's name was
// made once a provider: a tenth of the grid's cost at 12,000 hooks).
func TestGridNamesAHookOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates beside the code")
	}
	const hooks = 200
	provs := []string{"a@1", "b@1", "c@1", "d@1", "e@1", "f@1", "g@1"}
	answers := make([]providers.Capability, len(provs))
	for i := range answers {
		answers[i].Status = "supported"
	}
	rep := &engine.Report{Capabilities: engine.Capabilities{Providers: provs}}
	for i := range hooks {
		rep.Capabilities.Rows = append(rep.Capabilities.Rows, engine.CapabilityRow{
			Package: fmt.Sprintf("pkg-%04d", i/4), Hook: fmt.Sprintf("hook-%d", i%4), Answers: answers,
		})
	}
	allocs := testing.AllocsPerRun(5, func() { printGrid(io.Discard, rep, false) })
	if allocs > 4*hooks {
		t.Errorf("the grid of %d hooks on 7 providers allocates %v times, want at most %d", hooks, allocs, 4*hooks)
	}
}

// countingWriter counts the writes made to it.
type countingWriter struct{ writes, bytes int }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	w.bytes += len(p)
	return len(p), nil
}

// TestReportWritesFew: validate writes a large report in writes of
// reportBuffer bytes, each a system call on a terminal or file.
func TestReportWritesFew(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "source")
	if err := sourcegen.WriteToolbox(dir, 40); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	var out countingWriter
	var stderr strings.Builder
	if code := run([]string{"plugin", "validate", "--no-cache", dir}, &env{stdin: strings.NewReader(""), stdout: &out, stderr: &stderr}); code != exitOK {
		t.Fatalf("validate exited %d: %s", code, stderr.String())
	}
	if out.bytes < 2*reportBuffer {
		t.Fatalf("the report is %d bytes, want more than %d to count its writes", out.bytes, 2*reportBuffer)
	}
	if want := out.bytes/reportBuffer + 1; out.writes > want {
		t.Errorf("a report of %d bytes took %d writes, want at most %d", out.bytes, out.writes, want)
	}
}

// TestReportLinesAllocateNothing proves that the findings of a report are
// written without an allocation each, and escaped where they hold what a
// terminal would act on.
func TestReportLinesAllocateNothing(t *testing.T) {
	rep := &engine.Report{Source: engine.SourceInfo{Path: "src"}, Valid: true}
	for i := range 500 {
		rep.Diagnostics = append(rep.Diagnostics, engine.Diagnostic{Severity: engine.Warning, Code: "W087", File: fmt.Sprintf("skills/s-%d/SKILL.md", i), Line: 8, Column: 1, Field: "context", Message: "unknown front matter key context"})
	}
	rep.Diagnostics = append(rep.Diagnostics, engine.Diagnostic{Severity: engine.Error, Code: "E070", File: "a\x1b[31mb", Message: "cannot be read"})
	var out strings.Builder
	printReport(&out, rep)
	if !strings.Contains(out.String(), "skills/s-499/SKILL.md:8:1: warning W087 context: unknown front matter key context\n") || !strings.Contains(out.String(), `a\x1b[31mb: error E070: cannot be read`) {
		t.Fatalf("report:\n%s", out.String())
	}
	if raceEnabled {
		t.Skip("the race detector allocates beside the code")
	}
	w := bufio.NewWriterSize(io.Discard, reportBuffer)
	if n := testing.AllocsPerRun(10, func() { printReport(w, rep) }); n > 50 {
		t.Errorf("writing a report of %d findings made %v allocations, want at most 50", len(rep.Diagnostics), n)
	}
}

// TestBlockedCellNamesFew: a blocked package's cell in the grid names up
// to three references, else two and how many more, whatever the package
// requires: each row of the grid is padded to its widest cell.
func TestBlockedCellNamesFew(t *testing.T) {
	refs := func(n int) []engine.Reference {
		var rs []engine.Reference
		for i := range n {
			rs = append(rs, engine.Reference{Ref: fmt.Sprintf("skill:s%d", i)})
		}
		return rs
	}
	for _, c := range []struct {
		refs []engine.Reference
		want string
	}{
		{refs(1), "blocked by skill:s0"},
		{refs(3), "blocked by skill:s0, skill:s1, skill:s2"},
		{refs(4), "blocked by skill:s0, skill:s1 and 2 more"},
		{refs(200), "blocked by skill:s0, skill:s1 and 198 more"},
		{[]engine.Reference{{Ref: "skill:a\x1b[2Jb"}}, `blocked by skill:a\x1b[2Jb`},
	} {
		if got := blockedCell(c.refs); got != c.want {
			t.Errorf("%d references: %q, want %q", len(c.refs), got, c.want)
		}
	}
}

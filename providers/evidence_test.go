package providers

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

// EVIDENCE.md is what EvidenceReport writes from the embedded tables
// today: a table changed without refreshing it fails here.
func TestEvidenceReportIsCurrent(t *testing.T) {
	want, err := EvidenceReport()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("EVIDENCE.md")
	if err != nil {
		t.Fatalf("%v; write it with: %s", err, RefreshCommand)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("providers/EVIDENCE.md is stale: a provider table changed since it was written.\nRefresh it with: %s", RefreshCommand)
	}
}

// The report lists every claim once, with the kinds and tests it cites,
// and lists a claim under documentation only exactly when it has no other
// evidence.
func TestEvidenceReportClaims(t *testing.T) {
	ts := mustLoad(t)
	claude, _ := ts.Lookup("claude", "2.1.233")
	claims, err := claude.Claims()
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]ClaimEvidence{}
	for _, c := range claims {
		if _, dup := byPath[c.Path]; dup {
			t.Errorf("claim %s listed twice", c.Path)
		}
		byPath[c.Path] = c
	}
	for _, tc := range []struct {
		path    string
		kinds   []string
		tests   []string
		docOnly bool
	}{
		{"config.home", []string{"test", "run"}, []string{"internal/live TestSession/claude"}, false},
		{"rows.prompt.before.effects.gate", []string{"test", "doc"}, []string{"internal/live TestPromptGate/claude/deny"}, false},
		{`events.SessionStart.payload.fields."session.id"`, []string{"test", "recording"}, []string{"internal/live TestMatrixClaude/fields", "internal/live TestSession/claude"}, false},
		{"tools.Edit", []string{"test", "doc"}, []string{"internal/live TestProbeClaudeTools"}, false},
		{"tools.NotebookEdit", []string{"test", "doc"}, []string{"internal/live TestMatrixClaude/native_tools"}, false},
		{"events.PreToolUse.payload.actor", []string{"test", "run", "doc"}, []string{"internal/live TestMatrixClaude/actor"}, false},
		{"events.UserPromptSubmit.channels.deny.user_only", []string{"test", "run"}, []string{"internal/live TestPromptGate/claude/deny", "internal/live TestPromptGate/claude/crash_fail_closed"}, false},
		{"config.skills[0]", []string{"test", "run"}, []string{"internal/live TestSession/claude"}, false},
	} {
		c, ok := byPath[tc.path]
		if !ok {
			t.Errorf("claim %s not found", tc.path)
			continue
		}
		if !slices.Equal(c.Kinds(), tc.kinds) || !slices.Equal(c.Tests(), tc.tests) || c.DocOnly() != tc.docOnly {
			t.Errorf("%s: kinds %v, tests %v, doc only %v; want %v, %v, %v", tc.path, c.Kinds(), c.Tests(), c.DocOnly(), tc.kinds, tc.tests, tc.docOnly)
		}
	}
	report, err := EvidenceReport()
	if err != nil {
		t.Fatal(err)
	}
	_, docSection, ok := strings.Cut(string(report), "### claude@2.1.233: claims proved by documentation only")
	if !ok {
		t.Fatal("no documentation-only section for claude@2.1.233")
	}
	docSection, _, _ = strings.Cut(docSection, "\n## ")
	for _, c := range claims {
		listed := strings.Contains(docSection, "- `"+c.Path+"`\n")
		if listed != c.DocOnly() {
			t.Errorf("%s (kinds %v) listed under documentation only = %v", c.Path, c.Kinds(), listed)
		}
	}
}

// Every test: evidence names a package directory of this module and a
// top-level test function in it, and each subtest name is a string literal
// or a provider name in the file that declares the function: a renamed
// test fails here, not silently in the tables.
func TestEvidenceTestsExist(t *testing.T) {
	ts := mustLoad(t)
	var names []string
	for _, tb := range ts.All() {
		names = append(names, tb.Name)
	}
	tc := newTestChecker(names)
	for _, tb := range ts.All() {
		claims, err := tb.Claims()
		if err != nil {
			t.Fatal(err)
		}
		var n int
		for _, c := range claims {
			for _, ev := range c.Evidence {
				if !strings.HasPrefix(ev, "test: ") {
					continue
				}
				n++
				if err := tc.check(ev); err != nil {
					t.Errorf("%s %s: %v", tb.Key(), c.Path, err)
				}
			}
		}
		if n < 20 {
			t.Errorf("%s: only %d test evidence references found; the walk is broken", tb.Key(), n)
		}
	}
}

// A reference to a test that does not exist is caught.
func TestEvidenceTestsCheck(t *testing.T) {
	tc := newTestChecker([]string{"claude", "codex"})
	for _, c := range []struct {
		ref, err string
	}{
		{"test: internal/live TestSession/claude", ""},
		{"test: internal/live TestPromptGate/codex/crash_fail_closed", ""},
		{"test: internal/live TestCodexTrust", ""},
		{"test: internal/live TestSessions/claude", "no top-level function TestSessions"},
		{"test: internal/nolive TestSession", "internal/nolive"},
		{"test: internal/live TestPromptGate/claude/refuse", `subtest "refuse"`},
		{"test: internal/live harness", "not 'test: <package dir> <TestName>[/<subtest>...]'"},
		{"test: ../outside TestX", "not 'test: <package dir>"},
	} {
		err := tc.check(c.ref)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.ref, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one saying %q", c.ref, err, c.err)
		}
	}
}

// A testChecker resolves test: references against the module's Go files,
// parsing each package directory once.
type testChecker struct {
	providers []string
	pkgs      map[string]map[string]*ast.File // dir → file name → file
}

func newTestChecker(providers []string) *testChecker {
	return &testChecker{providers: providers, pkgs: map[string]map[string]*ast.File{}}
}

var testRef = regexp.MustCompile(`^test: ([a-z0-9_-]+(?:/[a-z0-9_.-]+)*) (Test[A-Za-z0-9_]*)((?:/[A-Za-z0-9_.-]+)*)$`)

func (tc *testChecker) check(ref string) error {
	m := testRef.FindStringSubmatch(ref)
	if m == nil || slices.Contains(strings.Split(m[1], "/"), "..") {
		return fmt.Errorf("%q is not 'test: <package dir> <TestName>[/<subtest>...]'", ref)
	}
	dir, name := m[1], m[2]
	files, err := tc.parse(dir)
	if err != nil {
		return err
	}
	for fname, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || fd.Name.Name != name {
				continue
			}
			for _, sub := range strings.Split(strings.TrimPrefix(m[3], "/"), "/") {
				if sub == "" || slices.Contains(tc.providers, sub) || hasStringLit(f, sub) {
					continue
				}
				if ok, err := tc.scenarioLit(f, sub); err != nil {
					return err
				} else if !ok {
					return fmt.Errorf("%s: subtest %q is neither a provider name nor a string literal of %s or of the scenarios it plays", ref, sub, fname)
				}
			}
			return nil
		}
	}
	return fmt.Errorf("%s: no top-level function %s in %s", ref, name, dir)
}

// scenarioLit reports whether f, a test file that plays the scenarios of
// internal/scenario, may name a subtest s for one of them: s is a string
// literal of that package (a scenario's case names its subtest there).
func (tc *testChecker) scenarioLit(f *ast.File, s string) (bool, error) {
	if !slices.ContainsFunc(f.Imports, func(i *ast.ImportSpec) bool { return i.Path.Value == `"dalo/internal/scenario"` }) {
		return false, nil
	}
	files, err := tc.parse("internal/scenario")
	if err != nil {
		return false, err
	}
	for _, sf := range files {
		if hasStringLit(sf, s) {
			return true, nil
		}
	}
	return false, nil
}

// parse parses the Go files of dir, a package directory relative to the
// module root (the parent of this package's directory).
func (tc *testChecker) parse(dir string) (map[string]*ast.File, error) {
	if files, ok := tc.pkgs[dir]; ok {
		return files, nil
	}
	path := filepath.Join("..", filepath.FromSlash(dir))
	names, err := filepath.Glob(filepath.Join(path, "*.go"))
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("package directory %s: no Go files", dir)
	}
	files := map[string]*ast.File{}
	fset := token.NewFileSet()
	for _, n := range names {
		f, err := parser.ParseFile(fset, n, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("package directory %s: %w", dir, err)
		}
		files[filepath.Base(n)] = f
	}
	tc.pkgs[dir] = files
	return files, nil
}

// hasStringLit reports whether f holds the string literal s.
func hasStringLit(f *ast.File, s string) bool {
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if v, err := strconv.Unquote(lit.Value); err == nil && v == s {
				found = true
			}
		}
		return !found
	})
	return found
}

// A local table says it was verified on this machine and cites verified:
// evidence; LoadFS takes it. The shipped tables never may: loading them
// (Load's fallback, Compile, the evidence report) refuses either, naming
// the file and the claim.
func TestVerifiedOnlyLocal(t *testing.T) {
	src := readEmbedded(t, "claude/2.1.233.cue")
	const held = `evidence: ["run: providers/testdata/README.md finding 25", _live.session]`
	verifiedField := strings.Replace(src, `harness: "Claude Code"`, "harness: \"Claude Code\"\nverified: {date: \"2026-12-02\", dalo: \"0.1.0\"}", 1)
	verifiedEvidence := strings.Replace(src, held, `evidence: ["verified: session 2026-12-02"]`, 1)
	for _, tc := range []struct {
		name, src string
		shipped   string // the error loading it as a shipped table, "" when it loads
	}{
		{"plain", src, ""},
		{"verified field", verifiedField, "provider table claude/2.1.233.cue: verified: a shipped table never says"},
		{"verified evidence", verifiedEvidence, `provider table claude/2.1.233.cue: version_output.evidence: "verified: session 2026-12-02": a shipped table cites`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.src == src && tc.shipped != "" {
				t.Fatal("mutation did not apply")
			}
			fsys := fstest.MapFS{"claude/2.1.233.cue": {Data: []byte(tc.src)}}
			ts, err := LoadFS(fsys)
			if err != nil {
				t.Fatalf("LoadFS: %v", err)
			}
			if tb, _ := ts.Lookup("claude", "2.1.233"); (tb.Verified != nil) != (tc.src == verifiedField) {
				t.Errorf("Verified = %+v", tb.Verified)
			}
			_, err = loadShipped(fsys)
			_, cerr := compileFS(fsys)
			for _, err := range []error{err, cerr} {
				switch {
				case tc.shipped == "" && err != nil:
					t.Errorf("shipped: %v", err)
				case tc.shipped != "" && (err == nil || !strings.Contains(err.Error(), tc.shipped)):
					t.Errorf("shipped: error %v, want one saying %q", err, tc.shipped)
				}
			}
		})
	}
}

// verified: evidence names a scenario and a day; anything else is refused.
func TestVerifiedEvidenceForm(t *testing.T) {
	src := readEmbedded(t, "claude/2.1.233.cue")
	const held = `evidence: ["run: providers/testdata/README.md finding 25", _live.session]`
	for _, tc := range []struct {
		ev string
		ok bool
	}{
		{"verified: session 2026-12-02", true},
		{"verified: prompt_gate/deny 2026-12-02", true},
		{"verified: session", false},
		{"verified: 2026-12-02", false},
		{"verified: session 2026-12-2", false},
		{"verified: session 2026-12-02 again", false},
	} {
		s := strings.Replace(src, held, `evidence: [`+strconv.Quote(tc.ev)+`]`, 1)
		_, err := LoadFS(fstest.MapFS{"claude/2.1.233.cue": {Data: []byte(s)}})
		if (err == nil) != tc.ok {
			t.Errorf("%q: error %v, want accepted %v", tc.ev, err, tc.ok)
		}
	}
	for _, date := range []string{"2026-12-2", "today"} {
		s := strings.Replace(src, `harness: "Claude Code"`, "harness: \"Claude Code\"\nverified: {date: \""+date+"\", dalo: \"0.1.0\"}", 1)
		_, err := LoadFS(fstest.MapFS{"claude/2.1.233.cue": {Data: []byte(s)}})
		if err == nil || !strings.Contains(err.Error(), "verified.date") {
			t.Errorf("verified date %q: error %v, want one naming verified.date", date, err)
		}
	}
	s := strings.Replace(src, `harness: "Claude Code"`, "harness: \"Claude Code\"\nverified: {date: \"2026-12-02\", dalo: \"0.1\\u001b[31m\"}", 1)
	if _, err := LoadFS(fstest.MapFS{"claude/2.1.233.cue": {Data: []byte(s)}}); err == nil || !strings.Contains(err.Error(), "verified.dalo") {
		t.Errorf("verified dalo with an escape: error %v, want one naming verified.dalo", err)
	}
}

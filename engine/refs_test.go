package engine

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"dalo/bench/sourcegen"
)

// TestCheckText proves that an instruction's bytes are checked as text at
// the first bad byte's line and byte column, also when a rune or the bad
// byte straddles two reads.
func TestCheckText(t *testing.T) {
	tests := []struct {
		name string
		src  string
		pos  Pos
		what string
	}{
		{"empty", "", Pos{}, ""},
		{"markdown", "# Style\n\nKeep it short.\n", Pos{}, ""},
		{"multi-byte", "# 設計\nПиши коротко. \u3000\n", Pos{}, ""},
		{"NUL", "# Style\nab\x00c", Pos{2, 3}, "NUL byte"},
		{"invalid byte", "# Style\né\xffx", Pos{2, 3}, "invalid UTF-8 (byte 0xff)"},
		{"truncated rune at the end", "ab\xe8\xa8", Pos{1, 3}, "invalid UTF-8 (byte 0xe8)"},
		{"surrogate", "a\xed\xa0\x80", Pos{1, 2}, "invalid UTF-8 (byte 0xed)"},
		{"NUL past the first read", strings.Repeat("line of text\n", 7000) + "é\x00", Pos{7001, 3}, "NUL byte"},
		{"rune across reads", strings.Repeat("x", 64<<10-1) + "é\n\xff", Pos{2, 1}, "invalid UTF-8 (byte 0xff)"},
	}
	for _, tt := range tests {
		for _, read := range []struct {
			name string
			r    func(string) io.Reader
		}{
			{"whole", func(s string) io.Reader { return strings.NewReader(s) }},
			{"byte at a time", func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) }},
			{"half at a time", func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) }},
		} {
			t.Run(tt.name+"/"+read.name, func(t *testing.T) {
				pos, what, err := checkText(read.r(tt.src))
				if err != nil {
					t.Fatal(err)
				}
				if what != tt.what || (what != "" && pos != tt.pos) {
					t.Errorf("got %q at %v, want %q at %v", what, pos, tt.what, tt.pos)
				}
			})
		}
	}
}

// TestCheckTextAgrees holds checkText to the plainest reading of its
// rule, a rune at a time over the whole text, on text cut at every
// place a read can end.
func TestCheckTextAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// Long pieces as well as short: a text of 32 bytes or more is checked
	// 32 bytes a step (github.com/segmentio/asm/utf8), and a fault may
	// fall anywhere in a step.
	pieces := []string{"a", "bc\n", "\n", "é", "設", "😀", "\x00", "\xff", "\xe8\xa8", "\xed\xa0\x80", "\t", " ",
		"\xc0\xaf", "\xf4\x90\x80\x80", "\xef\xbf\xbf", "Keep the reply short; ", strings.Repeat("x", 31), "über naïve café straße ", "日本語のテキスト → ∑ ", strings.Repeat("y", 700)}
	for i := range 4000 {
		var b strings.Builder
		for range rng.IntN(40 + i%3*40) {
			p := pieces[rng.IntN(len(pieces))]
			if i%2 == 0 && (p == "\x00" || p[0] >= 0x80 && !utf8.ValidString(p)) {
				p = "z" // half the texts valid, so that their ends are compared too
			}
			b.WriteString(p)
		}
		s := b.String()
		for _, r := range []io.Reader{strings.NewReader(s), iotest.OneByteReader(strings.NewReader(s)), iotest.HalfReader(strings.NewReader(s)), iotest.DataErrReader(strings.NewReader(s))} {
			pos, what, err := checkText(r)
			if err != nil {
				t.Fatal(err)
			}
			wpos, wwhat := textFault(s)
			if what != wwhat || pos != wpos {
				t.Fatalf("%q: got %q at %v, want %q at %v", s, what, pos, wwhat, wpos)
			}
		}
	}
}

// TestLastByteAgrees: lastByte finds what bytes.LastIndexByte finds, in
// texts shorter and longer than its window, wherever the byte is.
func TestLastByteAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		s := make([]byte, rng.IntN(3000))
		for i := range s {
			s[i] = 'a'
		}
		for range rng.IntN(4) {
			if len(s) > 0 {
				s[rng.IntN(len(s))] = '\n'
			}
		}
		if got, want := lastByte(s, '\n'), bytes.LastIndexByte(s, '\n'); got != want {
			t.Fatalf("in %d bytes with newlines at %v: got %d, want %d", len(s), newlines(s), got, want)
		}
	}
}

func newlines(s []byte) []int {
	var at []int
	for i, c := range s {
		if c == '\n' {
			at = append(at, i)
		}
	}
	return at
}

// textFault is checkText's rule read the plainest way: a rune at a time
// over the whole text.
func textFault(s string) (Pos, string) {
	pos := Pos{1, 1}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case s[i] == 0:
			return pos, "NUL byte"
		case r == utf8.RuneError && n <= 1:
			return pos, fmt.Sprintf("invalid UTF-8 (byte 0x%02x)", s[i])
		case s[i] == '\n':
			pos = Pos{pos.Line + 1, 1}
		default:
			pos.Column += n
		}
		i += n
	}
	return pos, ""
}

// FuzzCheckText holds checkText to textFault on any bytes, read whole
// and a byte at a time.
func FuzzCheckText(f *testing.F) {
	for _, s := range []string{"", "# 設計\nKeep it short.\n", strings.Repeat("über ", 12) + "\xed\xa0\x80", strings.Repeat("a", 40) + "\xf4\x90\x80\x80", strings.Repeat("é", 20) + "\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := string(b)
		wpos, wwhat := textFault(s)
		for _, r := range []io.Reader{strings.NewReader(s), iotest.OneByteReader(strings.NewReader(s))} {
			pos, what, err := checkText(r)
			if err != nil {
				t.Fatal(err)
			}
			if what != wwhat || pos != wpos {
				t.Fatalf("%q: got %q at %v, want %q at %v", s, what, pos, wwhat, wpos)
			}
		}
	})
}

// TestCheckTextByRunes proves that text is checked a read at a time, not
// a byte at a time: only a read that holds a fault is stepped through.
func TestCheckTextByRunes(t *testing.T) {
	before := textStepped.Load()
	if _, what, err := checkText(strings.NewReader(strings.Repeat("# 設計\nKeep it short.\n", 20000))); err != nil || what != "" {
		t.Fatalf("got %q, %v", what, err)
	}
	if n := textStepped.Load() - before; n != 0 {
		t.Errorf("%d reads of valid text stepped through a byte at a time, want none", n)
	}
}

// TestShortestCycle proves that every package on a cycle gets the cycle
// through it, named from itself round, and a package that only leads into
// a cycle gets none.
func TestShortestCycle(t *testing.T) {
	graph := func(pairs ...string) map[string][]edge {
		g := map[string][]edge{}
		for i := 0; i < len(pairs); i += 2 {
			from := pairs[i]
			g[from] = append(g[from], edge{to: pairs[i+1], field: "plugin.requires[" + string(rune('0'+len(g[from]))) + "].ref"})
		}
		return g
	}
	tests := []struct {
		name  string
		g     map[string][]edge
		start string
		cycle string
		field string
	}{
		{"self", graph("a", "a"), "a", "a -> a", "plugin.requires[0].ref"},
		{"three, from a", graph("a", "b", "b", "c", "c", "a"), "a", "a -> b -> c -> a", "plugin.requires[0].ref"},
		{"three, from c", graph("a", "b", "b", "c", "c", "a"), "c", "c -> a -> b -> c", "plugin.requires[0].ref"},
		{"leads into a cycle", graph("x", "a", "a", "b", "b", "a"), "x", "", ""},
		{"shortest of two", graph("a", "b", "b", "c", "c", "a", "a", "d", "d", "a"), "a", "a -> d -> a", "plugin.requires[1].ref"},
		{"no cycle", graph("a", "b", "b", "c"), "a", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var members []string
			for from, es := range tt.g {
				members = append(members, from)
				for _, e := range es {
					members = append(members, e.to)
				}
			}
			slices.Sort(members)
			c := newRequiresComponent(slices.Compact(members), tt.g)
			cyc, field := c.shortestCycle(c.index[tt.start])
			if got := strings.Join(cyc, " -> "); got != tt.cycle || field != tt.field {
				t.Errorf("got %q at %q, want %q at %q", got, field, tt.cycle, tt.field)
			}
		})
	}
	long := make([]string, 101)
	for i := range 100 {
		long[i] = "p" + strings.Repeat("x", i%3)
	}
	long[100] = long[0]
	if got := nameCycle(long); !strings.Contains(got, "(85 more)") || len(got) > 200 {
		t.Errorf("nameCycle of 101: %q", got)
	}
}

// TestLongCycleSearchBounded: the packages of a ring of requires (each
// requires the two before it, the first the last two) are each named on
// the shortest cycle through them while the ring is short; on a long one,
// whose searches would read every package and edge once for each package,
// each is named at its first edge into the ring, with no search at all.
func TestLongCycleSearchBounded(t *testing.T) {
	ring := func(n int) ([]*Package, map[string][]edge) {
		pkgs, edges := make([]*Package, n), map[string][]edge{}
		for i := range n {
			name := fmt.Sprintf("p-%d", i)
			pkgs[i] = &Package{Name: name}
			for k := range 2 {
				edges[name] = append(edges[name], edge{to: fmt.Sprintf("p-%d", (i-1-k+n)%n), field: fmt.Sprintf("plugin.requires[%d].ref", k)})
			}
		}
		return pkgs, edges
	}
	pkgs, edges := ring(10)
	comp := cyclicComponents(pkgs, edges)
	if field, cycle := comp["p-0"].cycleThrough(comp["p-0"].index["p-0"]); field != "plugin.requires[1].ref" || cycle != "p-0 -> p-8 -> p-6 -> p-4 -> p-2 -> p-0" {
		t.Errorf("p-0 of a ring of 10: %q at %s", cycle, field)
	}
	pkgs, edges = ring(2000)
	before := cycleSearchSteps.Load()
	comp = cyclicComponents(pkgs, edges)
	for _, p := range pkgs {
		c := comp[p.Name]
		field, cycle := c.cycleThrough(c.index[p.Name])
		if want := p.Name + " -> " + edges[p.Name][0].to + " -> ... -> " + p.Name + ", through some of the 2000 packages"; field != "plugin.requires[0].ref" || !strings.HasPrefix(cycle, want) {
			t.Fatalf("%s of a ring of 2,000: %q at %s, want %q... at plugin.requires[0].ref", p.Name, cycle, field, want)
		}
	}
	if n := cycleSearchSteps.Load() - before; n > maxCycleSearch {
		t.Errorf("a ring of 2,000 read %d edges in its searches, want at most %d", n, maxCycleSearch)
	}
	// The report says it so, at the require's position.
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, "-- plugins/p-%d/PLUGIN.toml --\nschema_version = 1\n[plugin]\nname = \"p-%d\"\ndescription = \"d\"\n", i, i)
		for k := range 2 {
			fmt.Fprintf(&b, "[[plugin.requires]]\nref = \"plugin:p-%d\"\nrequirement = \"required\"\n", (i-1-k+300)%300)
		}
	}
	root := t.TempDir()
	writeArchive(t, root, b.String())
	rep, err := Validate(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	e077 := 0
	for _, d := range rep.Diagnostics {
		if d.Code == "E077" {
			e077++
			if d.File == "plugins/p-7/PLUGIN.toml" && (d.Line != 6 || d.Column != 7 || !strings.Contains(d.Message, "p-7 -> p-6 -> ... -> p-7, through some of the 300 packages")) {
				t.Errorf("p-7: %v", d)
			}
		}
	}
	if rep.Valid || e077 != 300 {
		t.Errorf("a ring of 300: valid %t with %d E077, want invalid with 300", rep.Valid, e077)
	}
}

// TestOptionalOmission proves that the packages of one source agree with
// the report about a member whose own file fails: its references are
// invalid, the packages that require it are blocked (not invalid: their
// own contract holds), and the source is valid when none requires it.
func TestOptionalOmission(t *testing.T) {
	skill := "-- skills/s1/SKILL.md --\n---\nname: s2\ndescription: Misnamed.\n---\n"
	pkg := func(name, requirement string) string {
		return "-- plugins/" + name + "/PLUGIN.toml --\nschema_version = 1\n[plugin]\nname = \"" + name + "\"\ndescription = \"d\"\n" +
			"members = [{ ref = \"skill:s1\", requirement = \"" + requirement + "\" }]\n"
	}
	tests := []struct {
		name    string
		archive string
		valid   bool
		blocked []string // packages blocked by a reference
		codes   []string // codes of the report, sorted
	}{
		{"optional only", skill + pkg("a", "optional"), true, nil, []string{"W073"}},
		{"two optional", skill + pkg("a", "optional") + pkg("b", "optional"), true, nil, []string{"W073", "W073"}},
		{"required only", skill + pkg("a", "required"), false, []string{"a"}, []string{"E082"}},
		{"required and optional", skill + pkg("a", "optional") + pkg("b", "required"), false, []string{"b"}, []string{"E082", "W073"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeArchive(t, root, tt.archive)
			rep, err := Validate(root, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var blocked, codes []string
			for _, p := range rep.Packages {
				if !p.Valid {
					t.Errorf("package %s reported invalid: its own contract holds", p.Name)
				}
				if len(rep.Blocked(p.Name)) > 0 {
					blocked = append(blocked, p.Name)
				}
			}
			for _, d := range rep.Diagnostics {
				codes = append(codes, d.Code)
			}
			slices.Sort(codes)
			if rep.Valid != tt.valid || !slices.Equal(blocked, tt.blocked) || !slices.Equal(codes, tt.codes) {
				t.Errorf("valid %t, blocked packages %v, codes %v; want %t, %v, %v\n%v", rep.Valid, blocked, codes, tt.valid, tt.blocked, tt.codes, rep.Diagnostics)
			}
			// Every reference to the failing skill is invalid, and says why.
			for _, r := range rep.References {
				if r.Resolution != InvalidRef || r.Target != "skills/s1/SKILL.md" || !strings.Contains(r.Reason, "skills/s1/SKILL.md:2:1: E082") {
					t.Errorf("reference %s of %s: %s (%s) at %s, want invalid with the finding", r.Ref, r.Package, r.Resolution, r.Reason, r.Target)
				}
			}
			// The exit-0 condition agrees with the packages.
			all := len(rep.Packages) > 0
			for _, p := range rep.Packages {
				all = all && p.Valid && len(rep.Blocked(p.Name)) == 0
			}
			if rep.Valid != all {
				t.Errorf("report valid = %t, but every package valid and unblocked = %t", rep.Valid, all)
			}
		})
	}
}

// TestParseRef splits references as SplitN(s, ":", 3) did, without an
// allocation: it runs for every member of every package.
func TestParseRef(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Ref
	}{
		{"skill:review", Ref{Kind: "skill", Selector: "review"}},
		{"agent:team:reviewer", Ref{Kind: "agent", Source: "team", Selector: "reviewer"}},
		{"plugin:a:b:c", Ref{Kind: "plugin", Source: "a", Selector: "b:c"}},
		{"skill", Ref{Kind: "skill"}},
		{"skill:", Ref{Kind: "skill"}},
		{"skill::x", Ref{Kind: "skill", Selector: "x"}},
		{"", Ref{}},
	} {
		if got := ParseRef(tc.in); got != tc.want {
			t.Errorf("ParseRef(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { ParseRef("agent:team:reviewer") }); n != 0 {
		t.Errorf("ParseRef allocates %v times, want 0", n)
	}
}

// TestReferencesSizedOnce: the report's list of references is made at
// the size it ends at, not grown by doubling to up to twice that (a
// source of 1,000 packages of seven members each allocated 3 MB for it).
func TestReferencesSizedOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "source")
	if err := sourcegen.WriteSkills(dir, 20); err != nil {
		t.Fatal(err)
	}
	rep, err := Validate(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.References) != 20*7 {
		t.Fatalf("%d references, want %d: the shape changed", len(rep.References), 20*7)
	}
	if c := cap(rep.References); c != len(rep.References) {
		t.Errorf("the list of %d references holds room for %d", len(rep.References), c)
	}
}

// TestMemberFilesWithoutFindingsKeepNoList proves that validating a
// source keeps a list of findings for no skill, agent or instruction
// without one (a shape's member files with findings, as the commands
// shape's skills have their W087s, each keep theirs), and that a member
// file with one still has its finding reported.
func TestMemberFilesWithoutFindingsKeepNoList(t *testing.T) {
	for _, shape := range generatedShapes {
		dir := filepath.Join(t.TempDir(), shape.name)
		if err := shape.write(dir, 3); err != nil {
			t.Fatal(err)
		}
		before := fileListsKept.Load()
		rep, err := Validate(dir, Options{})
		if err != nil || !rep.Valid {
			t.Fatalf("%s: %v %v", shape.name, err, rep.Diagnostics)
		}
		withFindings := map[string]bool{}
		for _, d := range rep.Diagnostics {
			for _, top := range []string{"skills/", "agents/", "instructions/"} {
				if strings.HasPrefix(d.File, top) {
					withFindings[d.File] = true
				}
			}
		}
		if n := fileListsKept.Load() - before; n != int64(len(withFindings)) {
			t.Errorf("%s: %d member files kept a list of findings, want %d (those with findings)", shape.name, n, len(withFindings))
		}
		if shape.name == "commands" && len(withFindings) != 3*6 {
			t.Errorf("commands: %d member files with findings, want 18 (its skills' W087s): the shape changed", len(withFindings))
		}
	}
	dir := filepath.Join(t.TempDir(), "crew")
	if err := sourcegen.WriteCrew(dir, 1); err != nil {
		t.Fatal(err)
	}
	agent := filepath.Join(dir, "agents", "crew-0000-reviewer-2.md")
	data, err := os.ReadFile(agent)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(agent, []byte(strings.Replace(string(data), "name: crew-0000-reviewer-2\n", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	before := fileListsKept.Load()
	rep, err := Validate(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := fileListsKept.Load() - before; n != 1 {
		t.Errorf("%d member files kept a list of findings, want 1", n)
	}
	var found bool
	for _, d := range rep.Diagnostics {
		// An optional member's findings are told in its omission's.
		found = found || d.Code == "W073" && strings.Contains(d.Message, "agents/crew-0000-reviewer-2.md:1:1: E088")
	}
	if !found {
		t.Errorf("no W073 telling the E088 of the agent without a name: %v", rep.Diagnostics)
	}
}

// TestNearRefsBounded proves that suggestions for references that
// resolve to nothing are sought for the first maxNearRefs of a run only:
// each is measured against every asset of its kind.
func TestNearRefsBounded(t *testing.T) {
	const n = 100
	dir := filepath.Join(t.TempDir(), "skills")
	if err := sourcegen.WriteSkills(dir, n); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		name := fmt.Sprintf("sk-%04d", i)
		f, err := os.OpenFile(filepath.Join(dir, "plugins", name, "PLUGIN.toml"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "\n[[plugin.members]]\nref = \"skill:%s-s9\"\nrequirement = \"optional\"\n", name)
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	before := nearRefsMade.Load()
	rep, err := Validate(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := nearRefsMade.Load() - before; got != maxNearRefs {
		t.Errorf("%d suggestions sought for %d references that resolve to nothing, want %d", got, n, maxNearRefs)
	}
	hinted, unhinted := 0, 0
	for _, d := range rep.Diagnostics {
		if d.Code != "W072" {
			continue
		}
		if strings.Contains(d.Message, "; did you mean skill:sk-") {
			hinted++
		} else {
			unhinted++
		}
	}
	if hinted != maxNearRefs || unhinted != n-maxNearRefs {
		t.Errorf("%d W072 with a suggestion and %d without, want %d and %d", hinted, unhinted, maxNearRefs, n-maxNearRefs)
	}
}

// TestDiagnosticText holds a finding's text to its form: where, severity,
// code, field and message.
func TestDiagnosticText(t *testing.T) {
	for _, tc := range []struct {
		d    Diagnostic
		want string
	}{
		{Diagnostic{Severity: Error, Code: "E071", File: "plugins/a/PLUGIN.toml", Line: 8, Column: 7, Field: "plugin.members[0].ref", Message: "m"}, "plugins/a/PLUGIN.toml:8:7: error E071 plugin.members[0].ref: m"},
		{Diagnostic{Severity: Warning, Code: "W002", File: "plugins/x", Message: "not a package"}, "plugins/x: warning W002: not a package"},
		{Diagnostic{Severity: Error, Code: "E005", Message: "cannot be read"}, ".: error E005: cannot be read"},
		{Diagnostic{Severity: Error, Code: "E001", Line: 2, Column: 3, Message: "x"}, ":2:3: error E001: x"},
	} {
		if got := tc.d.String(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

package engine

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/encoding/yaml"
	"github.com/rogpeppe/go-internal/txtar"

	"dalo/bench/sourcegen"
)

// frontMatterCorpus is every Markdown file of the test data that holds or
// should hold front matter (a skill's SKILL.md or an agent's file, in the
// directories and in the conformance suite's archives), plus cases written
// for the edges of the fast path: front matter that is not a mapping,
// values of every YAML kind, keys CUE would read as hidden or as
// definitions, and keys held twice.
func frontMatterCorpus(t *testing.T) map[string][]byte {
	t.Helper()
	corpus := map[string][]byte{}
	member := func(name string) bool {
		return strings.HasSuffix(name, "SKILL.md") || strings.Contains(name, "agents/") && strings.HasSuffix(name, ".md")
	}
	err := filepath.WalkDir("../testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch {
		case member(path):
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			corpus[path] = data
		case strings.HasSuffix(path, ".txtar"):
			ar, err := txtar.ParseFile(path)
			if err != nil {
				return err
			}
			for _, f := range ar.Files {
				if member(f.Name) {
					corpus[path+":"+f.Name] = f.Data
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, fm := range []string{
		"",
		"name: x\ndescription: d\n",
		"name: x-y\ndescription: d\nlicense: MIT\ncompatibility: any\nmetadata:\n  a: b\nallowed-tools: Bash\n",
		"- a\n- b\n",
		"just a string\n",
		"42\n",
		"null\n",
		"~\n",
		"name: 1\ndescription: true\n",
		"name: [a]\ndescription: {a: b}\n",
		"name: Bad_Name\ndescription: '   '\n",
		"name: " + strings.Repeat("a", 70) + "\ndescription: " + strings.Repeat("long ", 300) + "\n",
		"name: x\ndescription: d\ncompatibility: ''\nmetadata: {a: 1}\n",
		"name: x\ndescription: d\ncompatibility: " + strings.Repeat("c", 600) + "\nmetadata: [1]\n",
		"_hidden: 1\n'#def': 2\n\"$x\": 3\nname: x\ndescription: d\n",
		"name: x\nname: y\ndescription: d\n",
		"name: x\ndescription: d\n# a comment\nextra: 1 # another\n",
		"? complex\n: key\n",
		"name: &a x\ndescription: *a\n",
		"name: !!str 12\ndescription: !!binary aGk=\n",
		"name: x\ndescription: |\n  Use when: asked\n",
		"<<: {name: x}\ndescription: d\n",
	} {
		corpus["case-"+string(rune('a'+i))+"/SKILL.md"] = []byte("---\n" + fm + "---\nbody\n")
	}
	return corpus
}

// TestFrontMatterFastPathAgrees holds the fast path of the front matter
// check (one unification from the YAML's syntax tree) to the diagnostics
// of the whole one (filling dir and the built front matter into the
// definition) for every front matter of the corpus, as a skill and as an
// agent, under its own directory's name and another.
func TestFrontMatterFastPathAgrees(t *testing.T) {
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	v := &sourceCheck{rules: r}
	corpus := frontMatterCorpus(t)
	if len(corpus) < 30 {
		t.Fatalf("the corpus holds %d front matters, want the test data's", len(corpus))
	}
	checked, fastPath := 0, 0
	for name, data := range corpus {
		var head diagList
		fm, line, ok := v.frontMatter(name, textOf(data), &head)
		if !ok {
			continue
		}
		dir := filepath.Base(filepath.Dir(name))
		for _, def := range []struct {
			kind string
			v    cue.Value
		}{{"skill", r.skillFM.def}, {"agent", r.agentFM.def}} {
			for _, dir := range []string{dir, "other-dir"} {
				fast := diagList{file: name}
				slow := diagList{file: name}
				r.checkFrontMatter(fmRule{def: def.v}, dir, name, fm, line, &fast, fmUnify)
				r.checkFrontMatter(fmRule{def: def.v}, dir, name, fm, line, &slow, fmFill)
				if file, err := yaml.Extract(name, []byte(fm)); err == nil {
					if _, ok := r.frontMatterViolations(def.v, dir, file); ok {
						fastPath++
					}
				}
				if !reflect.DeepEqual(fast.diags, slow.diags) {
					t.Errorf("%s as %s in %s:\nfast: %v\nslow: %v", name, def.kind, dir, fast.diags, slow.diags)
				}
				checked++
			}
		}
	}
	t.Logf("%d front matters, %d checks, %d on the fast path", len(corpus), checked, fastPath)
	if fastPath < checked/2 {
		t.Errorf("only %d of %d checks took the fast path", fastPath, checked)
	}
}

// TestFrontMatterProgramAgrees holds the program read from each front
// matter definition (fmprog.go) to CUE's diagnostics, the fmFill way,
// for every front matter of the corpus, as a skill and as an agent, under
// its own directory's name, another and names at the limits; and it must
// answer for most of them itself rather than decline.
func TestFrontMatterProgramAgrees(t *testing.T) {
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	for _, rule := range []fmRule{r.skillFM, r.agentFM} {
		if rule.prog == nil {
			t.Fatal("no program was read from a front matter definition")
		}
	}
	v := &sourceCheck{rules: r}
	corpus := frontMatterCorpus(t)
	for i, fm := range []string{
		"name: caf\u00e9\ndescription: \"tab\\there \\u00e9 \\\"q\\\"\"\n",
		"name: x\ndescription: " + strings.Repeat("\u00e9", 1024) + "\n",
		"name: x\ndescription: " + strings.Repeat("\u00e9", 1025) + "\n",
		"name: x\ndescription: \"  \\n \"\ncompatibility: \" \"\n",
		"name: x\ndescription: d\ncompatibility: " + strings.Repeat("c", 500) + "\n",
		"name: x\ndescription: d\ncompatibility: " + strings.Repeat("c", 501) + "\n",
		"name: " + strings.Repeat("a", 64) + "\ndescription: d\n",
		"name: " + strings.Repeat("a", 65) + "\ndescription: d\n",
		"name: a--b\ndescription: d\n",
		"name: -a\ndescription: d\n",
		"name: null\ndescription: null\ncompatibility: null\nmetadata: null\n",
		"name: x\ndescription: d\nmetadata: {}\n",
		"name: x\ndescription: d\nmetadata: {a: {b: c}}\n",
		"name: x\ndescription: d\nmetadata: {a: null}\n",
		"name: x\ndescription: d\nmetadata: x\n",
		"name: x\ndescription: |\n  multi\n  line \"quoted\" \\ back\n",
		"name: 1.5\ndescription: 2024-01-01\n",
		"{}\n",
		"Name: x\nDESCRIPTION: d\n\"allowed-tools\": a\nlicense: [1]\n",
	} {
		corpus["prog-"+string(rune('a'+i))+"/SKILL.md"] = []byte("---\n" + fm + "---\nbody\n")
	}
	checked, answered := 0, 0
	for name, data := range corpus {
		var head diagList
		fm, line, ok := v.frontMatter(name, textOf(data), &head)
		if !ok {
			continue
		}
		for _, rule := range []struct {
			kind string
			r    fmRule
		}{{"skill", r.skillFM}, {"agent", r.agentFM}} {
			for _, dir := range []string{filepath.Base(filepath.Dir(name)), "other-dir", "x", "café"} {
				prog := diagList{file: name}
				ref := diagList{file: name}
				r.checkFrontMatter(rule.r, dir, name, fm, line, &prog, fmProgramFirst)
				r.checkFrontMatter(rule.r, dir, name, fm, line, &ref, fmFill)
				if file, err := yaml.Extract(name, []byte(fm)); err == nil {
					if _, ok := rule.r.prog.violations(dir, file); ok {
						answered++
					}
				}
				if !reflect.DeepEqual(prog.diags, ref.diags) {
					t.Errorf("%s as %s in %s:\nprogram: %v\nCUE:     %v", name, rule.kind, dir, prog.diags, ref.diags)
				}
				checked++
			}
		}
	}
	t.Logf("%d front matters, %d checks, %d answered by the program", len(corpus), checked, answered)
	if answered < checked*3/4 {
		t.Errorf("the program answered only %d of %d checks", answered, checked)
	}
}

// TestFrontMatterFormsAskNoUnification: front matter the plain reader
// leaves to CUE's decoder, in forms the program still runs on, asks CUE
// to unify none of it. A negative number, which the decoder makes a
// unary minus, made the program decline and CUE unify the whole front
// matter, some 250 us a file.
func TestFrontMatterFormsAskNoUnification(t *testing.T) {
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	for _, fm := range []string{
		"name: x\ndescription: d\nmax_turns: -1e100\n",
		"name: x\ndescription: d\nu: -0x1f\n",
		"name: x\ndescription: d\nrun: {a: -1, b: [-1]}\nc: 1e300\n",
	} {
		if _, _, ok := plainFrontMatter(fm, nil); ok {
			t.Errorf("%q: read plain; the test wants a form left to CUE's decoder", fm)
		}
		for _, rule := range []fmRule{r.skillFM, r.agentFM} {
			before := frontMatterUnified.Load()
			l := diagList{file: "x/SKILL.md"}
			r.checkFrontMatter(rule, "x", "x/SKILL.md", fm, 2, &l, fmProgramFirst)
			if n := frontMatterUnified.Load() - before; n != 0 {
				t.Errorf("%q: CUE unified it %d times, want none (%v)", fm, n, l.diags)
			}
		}
	}
}

// TestGeneratedSkillsAskNoUnification checks that validating a source of
// skills with long front matter (bench/sourcegen's skills shape) asks CUE
// to unify none of them: the program answers each.
func TestGeneratedSkillsAskNoUnification(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "source")
	if err := sourcegen.WriteSkills(dir, 3); err != nil {
		t.Fatal(err)
	}
	before := frontMatterUnified.Load()
	rep, err := Validate(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Valid {
		t.Fatalf("generated source invalid: %v", rep.Diagnostics)
	}
	if n := frontMatterUnified.Load() - before; n != 0 {
		t.Errorf("validating 3 packages of 7 members each unified %d front matters, want 0", n)
	}
}

// FuzzFrontMatterProgram holds the program to CUE on any front matter it
// answers for, as a skill and as an agent, and the plain reader's E078 of
// a key held twice to CUE's tree's.
func FuzzFrontMatterProgram(f *testing.F) {
	for _, fm := range []string{
		"name: x\ndescription: d\n",
		"name: x\ndescription: d\nname: y\n",
		"name: x-y\ndescription: \"a\\tb\"\nlicense: MIT\ncompatibility: any\nmetadata:\n  a: b\nallowed-tools: Bash\n",
		"name: Bad\ndescription: ' '\ncompatibility: ''\nmetadata: {a: 1}\nextra: [1]\n",
		"name: caf\u00e9\ndescription: >-\n  folded\n  text\n",
	} {
		f.Add("x", fm)
	}
	r, err := LoadRules()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, dir, fm string) {
		file, err := extractYAML("SKILL.md", []byte(fm))
		if err != nil {
			return
		}
		_, _, twice, plain := plainFrontMatterKeys(fm, nil)
		for _, rule := range []fmRule{r.skillFM, r.agentFM} {
			if _, ok := rule.prog.violations(dir, file); !ok && !(plain && twice.line > 0) {
				continue
			}
			prog := diagList{file: "SKILL.md"}
			ref := diagList{file: "SKILL.md"}
			r.checkFrontMatter(rule, dir, "SKILL.md", fm, 2, &prog, fmProgramFirst)
			r.checkFrontMatter(rule, dir, "SKILL.md", fm, 2, &ref, fmFill)
			if !reflect.DeepEqual(prog.diags, ref.diags) {
				t.Errorf("dir %q, front matter %q:\nprogram: %v\nCUE:     %v", dir, fm, prog.diags, ref.diags)
			}
		}
	})
}

// TestFrontMatterDecoderPanic: a front matter on which CUE's YAML decoder
// panics is reported as invalid YAML, not a crash of the validator.
func TestFrontMatterDecoderPanic(t *testing.T) {
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	l := diagList{file: "SKILL.md"}
	r.checkFrontMatter(r.skillFM, "x", "SKILL.md", "\r\r00", 2, &l, fmProgramFirst)
	if len(l.diags) != 1 || l.diags[0].Code != "E078" {
		t.Fatalf("diagnostics %v, want one E078 (front matter is not valid YAML)", l.diags)
	}
	t.Log(l.diags[0])
}

// generatedFrontMatter is the front matter of a skill of bench/sourcegen's
// skills shape, read as checkFrontMatter reads it.
func generatedFrontMatter(tb testing.TB) (dir string, fm *fmStruct) {
	tb.Helper()
	path, src := generatedSkill(tb)
	fm, _, ok := plainFrontMatter(src, nil)
	if !ok {
		tb.Fatalf("%s: front matter not plain", path)
	}
	return filepath.Base(filepath.Dir(path)), fm
}

// generatedSkill is the path and front matter of a SKILL.md of
// bench/sourcegen's skills shape.
func generatedSkill(tb testing.TB) (path string, fm string) {
	tb.Helper()
	root := filepath.Join(tb.TempDir(), "source")
	if err := sourcegen.WriteSkills(root, 1); err != nil {
		tb.Fatal(err)
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && path == "" && d.Name() == "SKILL.md" {
			path = p
		}
		return err
	})
	if err != nil || path == "" {
		tb.Fatalf("no generated SKILL.md (%v)", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	src, _, ok := strings.Cut(strings.TrimPrefix(string(data), "---\n"), "---\n")
	if !ok {
		tb.Fatalf("%s: no front matter", path)
	}
	return path, src
}

// textOf is what readHead gives of a file's first bytes data, nil for nil.
func textOf(data []byte) *fmText {
	if data == nil {
		return nil
	}
	t := frontMatterText(data)
	return &t
}

// TestFrontMatterProgramAllocs holds a run of the skill program on a
// front matter it finds nothing in to no allocation: everything the
// definition fixes (literals, limits, patterns, names) is worked out when
// the program is read, not on every skill, and the run's own state is
// reused (it cost 480 bytes a skill).
func TestFrontMatterProgramAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates, and sync.Pool drops at random under it: counted without it")
	}
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	dir, fm := generatedFrontMatter(t)
	for _, rule := range []struct {
		kind string
		r    fmRule
	}{{"skill", r.skillFM}, {"agent", r.agentFM}} {
		if vs, ok := rule.r.prog.violationsOf(dir, fm); !ok || len(vs) != 0 {
			t.Fatalf("%s program on %s: violations %v, ok %t; want none", rule.kind, dir, vs, ok)
		}
		if n := testing.AllocsPerRun(100, func() { rule.r.prog.violationsOf(dir, fm) }); n != 0 {
			t.Errorf("%s program: %v allocations a run, want none", rule.kind, n)
		}
	}
}

// BenchmarkFrontMatterProgram is one run of the skill program on a
// generated skill's front matter, the work checkFrontMatter asks of it
// for each skill of a cold validation.
func BenchmarkFrontMatterProgram(b *testing.B) {
	r, err := LoadRules()
	if err != nil {
		b.Fatal(err)
	}
	dir, fm := generatedFrontMatter(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := r.skillFM.prog.violationsOf(dir, fm); !ok {
			b.Fatal("the program declined")
		}
	}
}

// BenchmarkPlainFrontMatter reads a generated skill's front matter as
// checkFrontMatter does before running the program.
func BenchmarkPlainFrontMatter(b *testing.B) {
	_, src := generatedSkill(b)
	benchPlainFrontMatter(b, src)
}

// benchPlainFrontMatter reads src and releases what it read, as
// checkFrontMatter does, in each round.
func benchPlainFrontMatter(b *testing.B, src string) {
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		fm, lines, ok := plainFrontMatter(src, nil)
		if !ok {
			b.Fatal("front matter not plain")
		}
		releasePlain(fm, lines)
	}
}

// TestFrontMatterProgramDeclinesLazily: a construct the program does not
// run (a call of strings.ToUpper, a name the package lacks) makes a run
// decline only when the run reaches it, as the front matter decides, and
// what is fixed by the definition (a limit, a static message) is the
// package's value.
func TestFrontMatterProgramDeclinesLazily(t *testing.T) {
	root := cuecontext.New().CompileString(`
import "strings"

#Limits: n: 3
#Def: {
	dir: string
	fm: {...}
	let s = fm.name & string
	violations: [
		if fm.name == _|_ {code: "E1", field: "name", message: "no name"},
		if s != _|_ if s == "up" {code: "E2", field: "name", message: "\(strings.ToUpper(s))"},
		if s != _|_ if len(s) > #Limits.n {code: "E3", field: "name", message: "longer than \(#Limits.n) in \(dir)"},
		if s != _|_ if s == "gap" {code: "E4", field: "name", message: "\(#Limits.missing)"},
		for k, _ in fm if k != "name" {code: "W5", field: k, message: "key \(k)"},
	]
}`)
	if err := root.Err(); err != nil {
		t.Fatal(err)
	}
	p := newFMProgram(root, root.LookupPath(cue.ParsePath("#Def")))
	if p == nil {
		t.Fatal("no program read from #Def")
	}
	str := func(s string) fmVal { return fmVal{kind: fmString, s: s} }
	for _, tc := range []struct {
		fm   map[string]fmVal
		want []violation // nil: declines
	}{
		{map[string]fmVal{"name": str("ab")}, []violation{}},
		{map[string]fmVal{}, []violation{{Code: "E1", Field: "name", Message: "no name"}}},
		{map[string]fmVal{"name": str("abcd"), "x": {kind: fmOpaque}}, []violation{
			{Code: "E3", Field: "name", Message: "longer than 3 in d"},
			{Code: "W5", Field: "x", Message: "key x"},
		}},
		{map[string]fmVal{"name": {kind: fmOpaque}}, []violation{}},
		{map[string]fmVal{"name": str("up")}, nil},
		{map[string]fmVal{"name": str("gap")}, nil},
	} {
		fm := &fmStruct{}
		for _, k := range slices.Sorted(maps.Keys(tc.fm)) {
			fm.add(k, tc.fm[k])
		}
		vs, ok := p.violationsOf("d", fm)
		if vs == nil && ok {
			vs = []violation{}
		}
		if ok != (tc.want != nil) || ok && !reflect.DeepEqual(vs, tc.want) {
			t.Errorf("front matter %v: violations %v, answered %t; want %v", tc.fm, vs, ok, tc.want)
		}
		if !ok {
			continue
		}
		// And CUE says the same.
		in := map[string]any{}
		for k, v := range tc.fm {
			in[k] = 1
			if v.kind == fmString {
				in[k] = v.s
			}
		}
		cueVs := []violation{}
		def := root.LookupPath(cue.ParsePath("#Def"))
		out := def.FillPath(cue.ParsePath("dir"), "d").FillPath(cue.ParsePath("fm"), in).LookupPath(cue.ParsePath("violations"))
		if err := out.Decode(&cueVs); err != nil || !reflect.DeepEqual(vs, cueVs) {
			t.Errorf("front matter %v: violations %v, CUE's %v (%v)", tc.fm, vs, cueVs, err)
		}
	}
}

// TestFrontMatterProgramShadowedFM: fm.name is looked up in the front
// matter at once only where fm is the front matter; a for clause that
// binds a key to the name fm hides it, as CUE scopes it.
func TestFrontMatterProgramShadowedFM(t *testing.T) {
	root := cuecontext.New().CompileString(`
#Def: {
	dir: string
	fm: {...}
	violations: [
		if fm.name != _|_ {code: "E1", field: "name", message: "named"},
		for fm, _ in fm if fm.name == _|_ {code: "W2", field: fm, message: "a key"},
	]
}`)
	if err := root.Err(); err != nil {
		t.Fatal(err)
	}
	def := root.LookupPath(cue.ParsePath("#Def"))
	p := newFMProgram(root, def)
	if p == nil {
		t.Fatal("no program read from #Def")
	}
	fm := &fmStruct{}
	fm.add("name", fmVal{kind: fmString, s: "x"})
	vs, ok := p.violationsOf("d", fm)
	want := []violation{{Code: "E1", Field: "name", Message: "named"}, {Code: "W2", Field: "name", Message: "a key"}}
	if !ok || !reflect.DeepEqual(vs, want) {
		t.Errorf("violations %v, answered %t; want %v", vs, ok, want)
	}
	var cueVs []violation
	out := def.FillPath(cue.ParsePath("dir"), "d").FillPath(cue.ParsePath("fm"), map[string]any{"name": "x"}).LookupPath(cue.ParsePath("violations"))
	if err := out.Decode(&cueVs); err != nil || !reflect.DeepEqual(cueVs, want) {
		t.Errorf("CUE's violations %v (%v), want %v", cueVs, err, want)
	}
}

// claudeAgentFrontMatter is the front matter of a subagent as Claude
// Code's users write them in full: a long block list of MCP tools, a
// flow list, a skills list, a hooks block nested four deep and MCP
// servers with their env maps, some 2.6 KB.
func claudeAgentFrontMatter() string {
	var b strings.Builder
	b.WriteString("name: reviewer\ndescription: Use this agent to review a change.\ntools:\n")
	for i := range 60 {
		fmt.Fprintf(&b, "  - mcp__server_%d__tool_%d\n", i%6, i)
	}
	b.WriteString("disallowedTools: [Bash, Write]\nskills:\n  - guide-0\n  - guide-1\npermissionMode: acceptEdits\nmodel: sonnet\ncolor: green\nhooks:\n")
	for _, ev := range []string{"PreToolUse", "PostToolUse", "Stop"} {
		fmt.Fprintf(&b, "  %s:\n    - matcher: \"Edit|Write\"\n      hooks:\n        - type: command\n          command: ./scripts/%s.sh\n          timeout: 30\n", ev, strings.ToLower(ev))
	}
	b.WriteString("mcpServers:\n")
	for i := range 6 {
		fmt.Fprintf(&b, "  server-%d:\n    command: npx\n    args: [\"-y\", \"@team/server-%d\"]\n    env:\n      TOKEN: token-%d\n      MODE: ro\n", i, i, i)
	}
	return b.String()
}

// BenchmarkPlainFrontMatterAgent reads claudeAgentFrontMatter as
// checkFrontMatter does an agent's before running the program.
func BenchmarkPlainFrontMatterAgent(b *testing.B) {
	benchPlainFrontMatter(b, claudeAgentFrontMatter())
}

// BenchmarkPlainFrontMatterLongLine reads a front matter whose
// description was pasted as one 20 KB line: what it costs must stay a
// few byte searches of the line, not a loop over each of its bytes.
func BenchmarkPlainFrontMatterLongLine(b *testing.B) {
	benchPlainFrontMatter(b, "name: long\ndescription: "+strings.Repeat("Use when the change touches the billing code. ", 440)+"end\nlicense: MIT\n")
}

// TestKeyTwiceReadPlain: a front matter that holds a top-level key twice,
// and is otherwise read plain, gets the E078 CUE's tree gets, at the
// second key, without CUE's decoder: an agent whose model line was pasted
// twice cost the decoder's 70 us where the rest of its checks cost 10.
func TestKeyTwiceReadPlain(t *testing.T) {
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	for _, fm := range []string{
		"name: x\ndescription: d\nmodel: sonnet\nmodel: opus\n",
		"name: x\n\"name\": y\ndescription: d\n",
		"name: x\nmetadata:\n  a: b\n# again\nmetadata:\n  c: d\ndescription: d\n",
		"name: x\ndescription: d\nb: y\nname: z\nb: w\n",
		"description: >-\n  folded\n  text\nname: x\ndescription: |\n  block\n",
		"name: x\ntools: [Read, Grep]\ntools:\n  - Read\n",
	} {
		for _, rule := range []fmRule{r.skillFM, r.agentFM} {
			before := yamlExtracted.Load()
			plain := diagList{file: "x/SKILL.md"}
			r.checkFrontMatter(rule, "x", "x/SKILL.md", fm, 2, &plain, fmProgramFirst)
			if n := yamlExtracted.Load() - before; n != 0 {
				t.Errorf("%q: CUE's decoder read it %d times, want none", fm, n)
			}
			ref := diagList{file: "x/SKILL.md"}
			r.checkFrontMatter(rule, "x", "x/SKILL.md", fm, 2, &ref, fmFill)
			if !reflect.DeepEqual(plain.diags, ref.diags) {
				t.Errorf("%q:\nplain: %v\nCUE:   %v", fm, plain.diags, ref.diags)
			}
			if len(ref.diags) != 1 || ref.diags[0].Code != "E078" {
				t.Errorf("%q: CUE's way found %v, want one E078", fm, ref.diags)
			}
		}
	}
	// Read on past the key held twice, a form the plain reader leaves
	// to the decoder is still the decoder's, which says the same.
	fm := "name: x\nname: y\ndescription: &a d\n"
	plain, ref := diagList{file: "x/SKILL.md"}, diagList{file: "x/SKILL.md"}
	r.checkFrontMatter(r.skillFM, "x", "x/SKILL.md", fm, 2, &plain, fmProgramFirst)
	r.checkFrontMatter(r.skillFM, "x", "x/SKILL.md", fm, 2, &ref, fmFill)
	if !reflect.DeepEqual(plain.diags, ref.diags) {
		t.Errorf("%q:\nplain: %v\nCUE:   %v", fm, plain.diags, ref.diags)
	}
}

// TestBigIntegersInListsAreCUEs: an integer past 64 bits, which CUE's
// decoder writes as no number and CUE refuses, is CUE's to say in a list
// or a map too, as it is at a key (found in review; the program took a
// list as opaque whatever it held).
func TestBigIntegersInListsAreCUEs(t *testing.T) {
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	for _, fm := range []string{
		"name: x\ndescription: d\nt:\n  - 99999999999999999999\n",
		"name: x\ndescription: d\nallowed-tools: [99999999999999999999]\n",
		"name: x\ndescription: d\nm: {a: [99999999999999999999]}\n",
		"name: x\ndescription: d\nt: [1, 2.5, -3]\n",
	} {
		for _, rule := range []fmRule{r.skillFM, r.agentFM} {
			prog, ref := diagList{file: "SKILL.md"}, diagList{file: "SKILL.md"}
			r.checkFrontMatter(rule, "x", "SKILL.md", fm, 2, &prog, fmProgramFirst)
			r.checkFrontMatter(rule, "x", "SKILL.md", fm, 2, &ref, fmFill)
			if !reflect.DeepEqual(prog.diags, ref.diags) {
				t.Errorf("%q:\nprogram: %v\nCUE:     %v", fm, prog.diags, ref.diags)
			}
		}
	}
}

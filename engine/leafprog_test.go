package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"cuelang.org/go/cue"

	"dalo/bench/sourcegen"
)

// leafDefs lists every scalar definition #Manifest's fields and list
// elements reach, by the name acceptStruct gives it.
func leafDefs(t testing.TB, r *Rules) map[string]cue.Value {
	t.Helper()
	out := map[string]cue.Value{}
	eachDef(r, r.manifest, "#Manifest", func(def cue.Value, name string) {
		if k := def.IncompleteKind(); k != cue.StructKind && k != cue.ListKind {
			out[name] = def
		}
	})
	if len(out) < 20 {
		t.Fatalf("found %d scalar definitions in #Manifest, want its fields", len(out))
	}
	return out
}

// eachDef calls f with def, named name, and with every definition of its
// fields and lists' elements, to a depth of 8.
func eachDef(r *Rules, def cue.Value, name string, f func(def cue.Value, name string)) {
	var walk func(def cue.Value, name string, depth int)
	walk = func(def cue.Value, name string, depth int) {
		if depth > 8 {
			return
		}
		f(def, name)
		switch def.IncompleteKind() {
		case cue.StructKind:
			for _, fd := range r.structFields(def, name) {
				walk(fd.v, fd.name, depth+1)
			}
		case cue.ListKind:
			if e := r.element(def, name+"[]", cue.AnyIndex); e.v.Exists() {
				walk(e.v, name+"[]", depth+1)
			}
		}
	}
	walk(def, name, 0)
}

func leafCorpus(r *Rules) []any {
	vs := []any{true, false}
	for _, n := range []int64{-1, 0, 1, 2, 99, 100, 101, 119999, 120000, 120001} {
		vs = append(vs, n)
	}
	for _, s := range []string{
		"", " ", "a", "A", "1", "own-0001", "own--1", "-a", "a-", "a.b", "a_b", "a.b-c", "a..b", ".a",
		"skill:x", "skill:src:x", "plugin:a", "instruction:own-0001-guide", ":x", "skill:", "a:b:c:d",
		"skill:a/b", "skill:a#b", `skill:a\b`, "x\x00y", "\x00", "main.py", "lib/util.py", "HOME", "1HOME",
		"_x", "${input.text}", "--mode", "required", "optional", "recommended", "executable", "node",
		"python", "tool_root", "filesystem_read", "network", "linux", "macos", "windows", "inline", "omit",
		"never", "matched_event", "user", "model_and_user", "report", "fail_open", "fail_closed",
		"session", "prompt", "tool_call", "workflow", "start", "before", "stop", "observe", "gate",
		"add_context", "continue_workflow", "string", "path", "integer", "boolean", "Bash", "Bash Read",
		"\u00a0", "a\u00a0", "\u3000", "\t", "tool-0", "Tool.X_1", "a.", "1.0.0",
	} {
		vs = append(vs, s)
	}
	for _, n := range []int{127, 128, 129, 255, 256, r.Limits.StringBytes, r.Limits.StringBytes + 1} {
		vs = append(vs, strings.Repeat("a", n), strings.Repeat("é", n))
	}
	return vs
}

func cueAccepts(r *Rules, def cue.Value, v any) bool {
	return def.Unify(r.ctx.Encode(v)).Validate(cue.Concrete(true)) == nil
}

// TestLeafProgramAgrees holds the leaf program to CUE on every scalar
// definition of #Manifest and values at the edges of each, and to running
// (not declining) the definitions of the fields whose values differ from
// package to package.
func TestLeafProgramAgrees(t *testing.T) {
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	defs := leafDefs(t, r)
	corpus := leafCorpus(r)
	for name, def := range defs {
		answered := 0
		for _, v := range corpus {
			got, ok := r.leaf.accepts(def, v)
			if !ok {
				continue
			}
			answered++
			if want := cueAccepts(r, def, v); got != want {
				t.Errorf("%s, %#.40v: program says %t, CUE %t", name, v, got, want)
			}
		}
		t.Logf("%s: %d of %d answered", name, answered, len(corpus))
	}
	for _, name := range []string{"plugin.name", "plugin.description", "plugin.id", "plugin.version", "plugin.members[].ref", "plugin.requires[].ref", "tool[].id", "tool[].entry", "hook[].id", "hook[].tool", "tool[].inputs[].name",
		// Lists' elements, and a disjunction CUE builds (or() of a
		// comprehension), which every manifest with a tool holds.
		"tool[].runtime", "tool[].env[]", "tool[].argv[]", "tool[].files[]", "tool[].capabilities[]", "hook[].matcher.tool_names[]", "plugin.requires[].requirement"} {
		name = "#Manifest." + name
		def, ok := defs[name]
		if !ok {
			t.Errorf("no definition %s in #Manifest", name)
			continue
		}
		if _, ok := r.leaf.accepts(def, "x"); !ok {
			t.Errorf("%s: the program declines a string", name)
		}
	}
}

// TestLeafProgramCompiled: the program of a field is compiled once, so
// that answering for a scalar allocates nothing and remembers nothing:
// names, ids and descriptions differ from package to package, and
// interpreting the definition's syntax for each, then remembering each
// answer, cost more than the answers.
func TestLeafProgramCompiled(t *testing.T) {
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		v    func(i int) any // a value of the field, a different one for each i
	}{
		{"#Manifest.plugin.name", func(i int) any { return fmt.Sprintf("review-kit-%d", i) }},
		{"#Manifest.plugin.id", func(i int) any { return fmt.Sprintf("acme.review-kit-%d", i) }},
		{"#Manifest.plugin.members[].ref", func(i int) any { return fmt.Sprintf("skill:review-%d", i) }},
		{"#Manifest.hook[].timeout_ms", func(i int) any { return int64(1000 + i) }},
	} {
		fd := manifestField(r, c.name)
		if fd.leaf == nil {
			t.Fatalf("%s: the shape walk's field holds no program", c.name)
		}
		vs := make([]any, 102)
		for i := range vs {
			vs[i] = c.v(i)
		}
		r.acceptLeaf(fd, vs[0])
		learned, i := r.memo.learned, 0
		n := testing.AllocsPerRun(100, func() {
			i++
			if !r.acceptLeaf(fd, vs[i]) {
				t.Fatalf("%s refuses %v", c.name, vs[i])
			}
		})
		if n != 0 {
			t.Errorf("%s: %.0f allocations an answer, want 0", c.name, n)
		}
		if r.memo.learned != learned {
			t.Errorf("%s: %d of the program's answers remembered", c.name, r.memo.learned-learned)
		}
	}
}

// manifestField is the field of #Manifest the shape walk finds at name,
// written as acceptValue names it (#Manifest.plugin.members[].ref).
func manifestField(r *Rules, name string) fieldDef {
	fd := fieldDef{v: r.manifest, name: "#Manifest"}
	for _, k := range strings.Split(strings.TrimPrefix(name, "#Manifest."), ".") {
		list := strings.HasSuffix(k, "[]")
		fd = r.structFields(fd.v, fd.name)[strings.TrimSuffix(k, "[]")]
		if list {
			fd = r.element(fd.v, fd.name+"[]", cue.AnyIndex)
		}
	}
	return fd
}

// TestGeneratedManifestsAskNoLeafUnification: the scalars of generated
// packages whose names, ids and references differ from package to package
// are answered by the leaf program, not by unifying each with its
// definition. What recurs (a list's entries) is asked once a process: a
// second source of more packages asks nothing.
func TestGeneratedManifestsAskNoLeafUnification(t *testing.T) {
	for _, n := range []int{3, 6} {
		dir := filepath.Join(t.TempDir(), "source")
		if err := sourcegen.WriteOwn(dir, n); err != nil {
			t.Fatal(err)
		}
		before := leafUnified.Load()
		rep, err := Validate(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Valid {
			t.Fatalf("generated source invalid: %v", rep.Diagnostics)
		}
		if d := leafUnified.Load() - before; n == 6 && d != 0 {
			t.Errorf("validating %d packages after 3 unified %d scalars with their definitions, want 0", n, d)
		}
	}
}

// FuzzLeafProgram holds the program to CUE on any string or integer it
// answers for, under every scalar definition of #Manifest.
func FuzzLeafProgram(f *testing.F) {
	f.Add("own-0001", int64(100))
	f.Add("skill:src:x", int64(120001))
	f.Add("a\u00a0", int64(-1))
	r, err := LoadRules()
	if err != nil {
		f.Fatal(err)
	}
	defs := leafDefs(f, r)
	f.Fuzz(func(t *testing.T, s string, n int64) {
		for name, def := range defs {
			for _, v := range []any{s, n} {
				if got, ok := r.leaf.accepts(def, v); ok {
					if want := cueAccepts(r, def, v); got != want {
						t.Errorf("%s, %#.40v: program says %t, CUE %t", name, v, got, want)
					}
				}
			}
		}
	})
}

// TestListRulesAgree holds what listRule reads of each list definition
// of #Manifest and of a project's files to CUE's answers about lists of
// every length near their bounds, and requires it to read them all: a
// manifest's lists are then never unified.
func TestListRulesAgree(t *testing.T) {
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	lists := map[string]cue.Value{}
	collect := func(def cue.Value, name string) {
		if def.IncompleteKind() == cue.ListKind {
			lists[name] = def
		}
	}
	eachDef(r, r.manifest, "#Manifest", collect)
	for _, def := range []string{"#Project", "#Lock"} {
		if v := r.root.LookupPath(cue.ParsePath(def)); v.Exists() {
			eachDef(r, v, def, collect)
		}
	}
	if len(lists) < 10 {
		t.Fatalf("found %d list definitions, want every list of #Manifest", len(lists))
	}
	unique := 0
	for name, def := range lists {
		lr := r.listRule(def, name)
		if !lr.known {
			t.Errorf("%s: listRule cannot read it", name)
			continue
		}
		if lr.unique {
			unique++
		}
		for _, n := range []int{0, 1, 2, 3, lr.min - 1, lr.min, lr.min + 1, lr.max - 1, lr.max, lr.max + 1} {
			if n < 0 {
				continue
			}
			want := def.Unify(r.ctx.CompileString("["+strings.Repeat("_, ", n)+"]")).Validate() == nil
			if got := n >= lr.min && (lr.max < 0 || n <= lr.max); got != want {
				t.Errorf("%s, %d elements: listRule says %t, CUE %t", name, n, got, want)
			}
		}
	}
	if unique == 0 {
		t.Errorf("no list definition asks for unique entries: a project's providers do")
	}
}

// TestRepeatedArgvNotUnified proves that a tool whose argv gives a flag
// twice, and lists of every length, are checked without asking CUE: no
// list of #Manifest asks for unique entries.
func TestRepeatedArgvNotUnified(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "toolbox")
	if err := sourcegen.WriteToolbox(dir, 3); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		name := filepath.Join(dir, "plugins", fmt.Sprintf("tb-%04d", i), "PLUGIN.toml")
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		long := `"--include", "a", "--include", "b"` + strings.Repeat(`, "--rule", "x"`, 40*i+7)
		edited := strings.ReplaceAll(string(data), `"--check", `, long+`, "--check", `)
		if edited == string(data) {
			t.Fatal("no argv to edit")
		}
		if err := os.WriteFile(name, []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	forgetAnswers()
	before := listsUnified.Load()
	rep, err := Validate(dir, Options{})
	if err != nil || !rep.Valid {
		t.Fatalf("%v %v", err, rep.Diagnostics)
	}
	if n := listsUnified.Load() - before; n != 0 {
		t.Errorf("%d lists asked of CUE, want none", n)
	}
}

// TestRunesAtMost holds runesAtMost to utf8.RuneCountInString, invalid
// bytes counted one a rune, at every limit around each string's count.
func TestRunesAtMost(t *testing.T) {
	for _, s := range []string{"", "a", "abc", "é", "aé", "日本語", "a\xffb", "\xe6\x97", "é" + strings.Repeat("x", 40)} {
		count := int64(utf8.RuneCountInString(s))
		for n := int64(-1); n <= int64(len(s))+1; n++ {
			if got, want := runesAtMost(s, n), count <= n; got != want {
				t.Errorf("runesAtMost(%q, %d) = %t, want %t", s, n, got, want)
			}
		}
	}
}

// BenchmarkFindingsLongDescription runs a skill's rules on a front matter
// whose description was pasted as one 20 KB line, over the 1,024
// characters the Agent Skills specification allows (W090).
func BenchmarkFindingsLongDescription(b *testing.B) {
	r, err := LoadRules()
	if err != nil {
		b.Fatal(err)
	}
	yaml := "name: long\ndescription: " + strings.Repeat("Use when the change touches the billing code. ", 440) + "end\nlicense: MIT\n"
	if found, ok := r.plainFindings(r.skillFM, "long", yaml, frontMatterLine); !ok || len(found) != 1 || found[0].code != "W090" {
		b.Fatalf("plainFindings = %v, %t; want one W090", found, ok)
	}
	for b.Loop() {
		r.plainFindings(r.skillFM, "long", yaml, frontMatterLine)
	}
}

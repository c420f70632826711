package engine

import (
	"path/filepath"
	"reflect"
	"testing"

	"cuelang.org/go/cue/ast"

	"dalo/bench/sourcegen"
	"dalo/plan"
)

// agreesWithCUE checks that when plainFrontMatter reads src, CUE's YAML
// decoder reads it too, to the same mapping (fmMapping of its syntax
// tree) with every key on the same line, at column 1. It reports whether
// plainFrontMatter read it.
func agreesWithCUE(t *testing.T, src []byte) bool {
	t.Helper()
	fm, lines, ok := plainFrontMatter(src)
	if !ok {
		return false
	}
	file, err := extractYAML("SKILL.md", src)
	if err != nil {
		t.Errorf("%q: read as plain, but CUE's decoder fails: %v", src, err)
		return true
	}
	want, err := fmMapping(file.Decls)
	if err != nil {
		t.Errorf("%q: read as plain, but fmMapping declines CUE's tree: %v", src, err)
		return true
	}
	if !reflect.DeepEqual(fm, want) {
		t.Errorf("%q:\nplain %#v\nCUE   %#v", src, fm, want)
	}
	if len(lines) != len(fm.keys) {
		t.Errorf("%q: %d lines for %d keys", src, len(lines), len(fm.keys))
		return true
	}
	line := map[string]int{}
	for i, k := range fm.keys {
		line[k] = lines[i]
	}
	for _, d := range file.Decls {
		f := d.(*ast.Field)
		name, _, _ := ast.LabelName(f.Label)
		if p := f.Label.Pos(); line[name] != p.Line() || p.Column() != 1 {
			t.Errorf("%q: key %s on line %d, CUE says %d:%d", src, name, line[name], p.Line(), p.Column())
		}
	}
	return true
}

// TestPlainFrontMatter holds plainFrontMatter to CUE's YAML decoder on
// the front matter it must read (what bench/sourcegen writes, each kind
// of block scalar, quoted strings, a metadata mapping), on what it must
// leave to CUE (anything YAML may read as another type or otherwise than
// it looks), and on every front matter of the test data.
func TestPlainFrontMatter(t *testing.T) {
	read := []string{
		"name: x\ndescription: d\n",
		"name: own-0001-skill-0\ndescription: Guidance 0 of package 1, for reviews of its area.\nallowed-tools: Bash(./check.sh:*)\n",
		"name: x\ndescription: >-\n  Use when reviewing. It checks one more thing. \nlicense: Apache-2.0\n",
		"name: x\ndescription: >\n  folded\n  text\n",
		"name: x\ndescription: |\n  literal\n  text:  with: colons # and hashes\n",
		"name: x\ndescription: |-\n    deep\n    text\n",
		"name: x\nmetadata:\n  key-0: \"value 0 of x\"\n  key-1: 'single'\n  k: plain words\n",
		"name: x\ndescription: \"\"\ncompatibility: ''\n",
		"name:    spaced   \ndescription: say \"hi\" and it's {fine} [ok], really\n",
		"Name: x\nDESCRIPTION: d\nnan: inf\n",
		"name: yes please\ndescription: null pointer\n",
	}
	declined := []string{
		"",
		"name: x",
		"name: x\r\ndescription: d\r\n",
		"name: x\tdescription: d\n",
		"name: caf\u00e9\n",
		"name: 1\n",
		"name: 1.2.0\n",
		"name: -a\n",
		"name: .inf\n",
		"name: ~\n",
		"name: yes\n",
		"name: Off\n",
		"name:\n",
		"name: x\nname: y\n",
		"true: x\n",
		"_x: 1\n",
		"'name': x\n",
		"name: x # comment\n",
		"# comment\nname: x\n",
		"name: a: b\n",
		"name: a:\n",
		"name: x\n  continued\n",
		"name: \"esc\\tape\"\n",
		"name: 'it''s'\n",
		"name: \"open\n",
		"name: \"a\" b\n",
		"name: &a x\n",
		"name: !!str x\n",
		"name: [a]\n",
		"name: {a: b}\n",
		"description: |+\n  keep\n",
		"description: |2\n  explicit\n",
		"description: >\n  a\n   more\n",
		"description: >\n  a\n\n  b\n",
		"metadata:\n  a: b\n   c: d\n",
		"metadata:\n  a: 1\n",
		"metadata:\n  a:\n    b: c\n",
		"metadata:\n  a: b\n  a: c\n",
		"- a\n",
		"? a\n: b\n",
	}
	for _, s := range read {
		if !agreesWithCUE(t, []byte(s)) {
			t.Errorf("%q: not read as plain, want it read", s)
		}
	}
	for _, s := range declined {
		if _, _, ok := plainFrontMatter([]byte(s)); ok {
			t.Errorf("%q: read as plain, want it left to CUE's decoder", s)
		}
	}
	v := &sourceCheck{rules: &Rules{Limits: plan.DraftLimits}}
	n, plain := 0, 0
	for name, data := range frontMatterCorpus(t) {
		var head diagList
		fm, _, ok := v.frontMatter(name, data, &head)
		if !ok {
			continue
		}
		n++
		if agreesWithCUE(t, fm) {
			plain++
		}
	}
	t.Logf("%d of the test data's %d front matters read as plain", plain, n)
}

// FuzzPlainFrontMatter holds plainFrontMatter to CUE's YAML decoder on
// anything it reads.
func FuzzPlainFrontMatter(f *testing.F) {
	for _, s := range []string{
		"name: x\ndescription: d\n",
		"name: x\ndescription: >-\n  a\n  b \n",
		"name: x\ndescription: |\n  a: b\n  c\n",
		"name: x\nmetadata:\n  k: \"v\"\n  l: 'w'\n",
		"name: a b c\nallowed-tools: Bash(git diff:*) Read\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		agreesWithCUE(t, []byte(s))
	})
}

// TestGeneratedFrontMatterIsPlain checks that validating sources of every
// bench/sourcegen shape with skills and agents reads no front matter with
// CUE's YAML decoder.
func TestGeneratedFrontMatterIsPlain(t *testing.T) {
	for _, shape := range []struct {
		name  string
		write func(string, int) error
	}{{"own", sourcegen.WriteOwn}, {"skills", sourcegen.WriteSkills}, {"toolbox", sourcegen.WriteToolbox}} {
		dir := filepath.Join(t.TempDir(), shape.name)
		if err := shape.write(dir, 3); err != nil {
			t.Fatal(err)
		}
		before := yamlExtracted.Load()
		rep, err := Validate(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Valid {
			t.Fatalf("%s: generated source invalid: %v", shape.name, rep.Diagnostics)
		}
		if n := yamlExtracted.Load() - before; n != 0 {
			t.Errorf("%s: CUE's YAML decoder read %d front matters, want 0", shape.name, n)
		}
	}
}

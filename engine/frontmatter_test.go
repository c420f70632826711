package engine

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/encoding/yaml"
	"github.com/rogpeppe/go-internal/txtar"
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
		fm, line, ok := v.frontMatter(name, data, &head)
		if !ok {
			continue
		}
		dir := filepath.Base(filepath.Dir(name))
		for _, def := range []struct {
			kind string
			v    cue.Value
		}{{"skill", r.skillDef}, {"agent", r.agentDef}} {
			for _, dir := range []string{dir, "other-dir"} {
				fast := diagList{file: name}
				slow := diagList{file: name}
				r.checkFrontMatter(def.v, dir, name, fm, line, &fast, true)
				r.checkFrontMatter(def.v, dir, name, fm, line, &slow, false)
				if file, err := yaml.Extract(name, fm); err == nil {
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

package engine

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"dalo/bench/sourcegen"
)

// idSources are sources whose answers hang on which package holds an id
// first: a command about one package reads the others only for their ids.
var idSources = map[string]string{
	"earlier package invalid in shape": `
-- plugins/a/PLUGIN.toml --
schema_version = 1
[plugin]
name = "a"
description = "d"
id = "example.same"
unknown = 1
-- plugins/b/PLUGIN.toml --
schema_version = 1
[plugin]
name = "b"
description = "d"
id = "example.same"
-- plugins/c/PLUGIN.toml --
schema_version = 1
[plugin]
name = "c"
description = "d"
id = "example.same"
`,
	"ids spelled otherwise": `
-- plugins/a/PLUGIN.toml --
schema_version = 1
plugin = { name = "a", description = "d", id = "ex\u0061mple.same" }
-- plugins/b/PLUGIN.toml --
schema_version = 1
plugin.name = "b"
plugin.description = "d"
plugin.id = 'example.same'
-- plugins/c/PLUGIN.toml --
schema_version = 1
[plugin]
name = "c"
description = "d"
id = """example.\
same"""
-- plugins/d/PLUGIN.toml --
schema_version = 1
[plugin]
name = "d"
description = "d"
id = "example.other"
`,
	"requires across ids and cycles": `
-- plugins/a/PLUGIN.toml --
schema_version = 1
[plugin]
name = "a"
description = "d"
id = "example.b"
[[plugin.requires]]
ref = "plugin:b"
requirement = "required"
-- plugins/b/PLUGIN.toml --
schema_version = 1
[plugin]
name = "b"
description = "d"
id = "example.b"
[[plugin.requires]]
ref = "plugin:c"
requirement = "optional"
-- plugins/c/PLUGIN.toml --
schema_version = 1
[plugin]
name = "c"
description = "d"
[[plugin.requires]]
ref = "plugin:b"
requirement = "required"
[[plugin.requires]]
ref = "plugin:nosuch"
requirement = "required"
-- plugins/d/PLUGIN.toml --
not toml
`,
}

// TestPackagesAnswerAsWholeSource validates each package of many sources
// alone (Options.Packages, what review, approve and install do) and
// checks that it gets the answer validating the whole source gives it:
// its report, its own diagnostics, its references and what each provider
// does with its hooks. The sources are every one of the conformance
// suite, a generated one and those of idSources.
func TestPackagesAnswerAsWholeSource(t *testing.T) {
	roots := map[string]string{}
	archives, err := filepath.Glob("../testdata/script/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range archives {
		ar, err := txtar.ParseFile(a)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		for _, f := range ar.Files {
			if filepath.IsLocal(f.Name) {
				writeFile(t, dir, f.Name, string(f.Data))
			}
		}
		ms, err := findManifests(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			r := filepath.Dir(filepath.Dir(filepath.Dir(m)))
			rel, _ := filepath.Rel(dir, r)
			roots[filepath.Base(a)+":"+rel] = r
		}
	}
	for name, archive := range idSources {
		dir := t.TempDir()
		writeArchive(t, dir, archive)
		roots[name] = dir
	}
	gen := filepath.Join(t.TempDir(), "gen")
	if err := sourcegen.Write(gen, 40, 0); err != nil {
		t.Fatal(err)
	}
	roots["generated"] = gen
	compared := 0
	for _, name := range slices.Sorted(maps.Keys(roots)) {
		root := roots[name]
		whole, err := Load(root, Options{})
		if err != nil {
			continue // not a source the suite validates (a bad --source-id, ...)
		}
		for i, p := range whole.Packages {
			alone, err := Load(root, Options{Packages: []string{p.Name}})
			if err != nil {
				t.Fatalf("%s: %s alone: %v", name, p.Name, err)
			}
			if got, want := answerOf(alone, p.Name), answerOf(whole, p.Name); got != want {
				t.Errorf("%s: package %s alone:\n%s\nwithin the whole source:\n%s", name, p.Name, got, want)
			}
			if i == 0 && strings.Join(alone.Names, " ") != strings.Join(whole.Names, " ") {
				t.Errorf("%s: names %v alone, %v whole", name, alone.Names, whole.Names)
			}
			compared++
		}
	}
	if compared < 100 {
		t.Fatalf("compared only %d packages", compared)
	}
}

// answerOf is everything validation says of package name in s, as text.
func answerOf(s *Source, name string) string {
	var b strings.Builder
	rep := s.Report
	for _, pr := range rep.Packages {
		if pr.Name == name {
			j, _ := json.Marshal(pr)
			fmt.Fprintf(&b, "package %s\n", j)
			for _, r := range rep.Blocked(name) {
				fmt.Fprintf(&b, "blocked by %s\n", r.Ref)
			}
			for _, d := range rep.Diagnostics {
				if d.File == pr.Path+"/PLUGIN.toml" || strings.HasPrefix(d.File, pr.Path+"/") {
					fmt.Fprintf(&b, "%s\n", d)
				}
			}
		}
	}
	for _, r := range rep.References {
		if r.Package == name {
			j, _ := json.Marshal(r)
			fmt.Fprintf(&b, "reference %s\n", j)
		}
	}
	for _, k := range rep.Capabilities.Providers {
		for _, c := range rep.Capabilities.Of(k) {
			if c.Package == name {
				j, _ := json.Marshal(c)
				fmt.Fprintf(&b, "%s %s\n", k, j)
			}
		}
	}
	return b.String()
}

// TestPackagesChecksOnlyWhatTheyRequire proves that validating one package
// checks it and what it requires, transitively, and no other package:
// another's broken manifest says nothing in the report.
func TestPackagesChecksOnlyWhatTheyRequire(t *testing.T) {
	root := t.TempDir()
	writeArchive(t, root, idSources["requires across ids and cycles"]+`
-- plugins/e/PLUGIN.toml --
schema_version = 1
[plugin]
name = "e"
description = "d"
`)
	for _, tc := range []struct{ want, checked string }{
		{"a", "a b c"},
		{"c", "b c"},
		{"e", "e"},
		{"nosuch", ""},
	} {
		s, err := Load(root, Options{Packages: []string{tc.want}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range s.Report.Packages {
			got = append(got, p.Name)
		}
		if strings.Join(got, " ") != tc.checked {
			t.Errorf("validating %s checked %v, want %s", tc.want, got, tc.checked)
		}
		for _, d := range s.Report.Diagnostics {
			if d.File == "plugins/d/PLUGIN.toml" {
				t.Errorf("validating %s reported on d: %s", tc.want, d)
			}
		}
	}
}

// TestIDScanReadsOnlyEarlierManifests: validating one package reads, of
// the manifests it does not check, only those of packages before it,
// which alone can have taken its id first; the ninth of 40 packages reads
// eight, where every other one was read (39).
func TestIDScanReadsOnlyEarlierManifests(t *testing.T) {
	root := t.TempDir()
	if err := sourcegen.WriteOwn(root, 40); err != nil {
		t.Fatal(err)
	}
	before := manifestsScanned.Load()
	s, err := Load(root, Options{Packages: []string{"own-0008"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Report.Packages) != 1 || !s.Report.Packages[0].Valid {
		t.Fatalf("own-0008: %+v", s.Report.Packages)
	}
	if n := manifestsScanned.Load() - before; n != 8 {
		t.Errorf("scanned %d manifests for ids, want the 8 before own-0008", n)
	}
}

// TestForgetKeepsReferencePositions: a package done with its own checks
// keeps the positions of its id and references and drops its hooks'; a
// package without hooks keeps its index as it is.
func TestForgetKeepsReferencePositions(t *testing.T) {
	at := func(line int) Pos { return Pos{Line: line, Column: 1} }
	refs := map[string]Pos{"plugin.id": at(3), "plugin.members[0].ref": at(7), "plugin.requires[0].ref": at(9)}
	hooked := &Package{Manifest: &Manifest{Hooks: []Hook{{ID: "h"}}}, pos: maps.Clone(refs)}
	hooked.pos["hook[0].timeout_ms"] = at(12)
	hooked.pos["hook[0].matcher.tool_names[1]"] = at(13)
	hooked.forget()
	if !maps.Equal(hooked.pos, refs) {
		t.Errorf("a package with hooks keeps %v, want %v", hooked.pos, refs)
	}
	plain := &Package{Manifest: &Manifest{}, pos: maps.Clone(refs)}
	index := reflect.ValueOf(plain.pos).Pointer()
	plain.forget()
	if !maps.Equal(plain.pos, refs) {
		t.Errorf("a package without hooks keeps %v, want %v", plain.pos, refs)
	}
	if reflect.ValueOf(plain.pos).Pointer() != index {
		t.Errorf("a package without hooks has its positions copied into another index")
	}
}

package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"dalo/bench/sourcegen"
)

// TestLeafKey holds leafKey to the keys fmt wrote before it: a cache keeps
// the answers under them.
func TestLeafKey(t *testing.T) {
	for _, v := range []any{"", "tool-0", "a|b", strings.Repeat("é", 40), int64(0), int64(-30), int64(1 << 40), true, false, 1.5, 1e21, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} {
		want := fmt.Sprintf("leaf|%s|%T|%v", "#Tool.id", v, v)
		if got := string(leafKey(nil, "#Tool.id", v)); got != want {
			t.Errorf("leafKey(%#v) = %q, want %q", v, got, want)
		}
	}
}

// TestRememberedLeafAllocatesNothing: asking the shape walk about a
// scalar it answered before is a map lookup, once per field of every
// manifest of a source; building its key with fmt was a third of the walk.
func TestRememberedLeafAllocatesNothing(t *testing.T) {
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	fd := r.structFields(r.manifest, "#Manifest")["schema_version"]
	var v any = int64(1)
	if !r.acceptLeaf(fd, v) {
		t.Fatal("schema_version = 1 not accepted")
	}
	if n := testing.AllocsPerRun(100, func() { r.acceptLeaf(fd, v) }); n != 0 {
		t.Errorf("a remembered answer costs %v allocations, want 0", n)
	}
}

// TestToolFilesStatedOnce: a tool's entry and files are looked up in what
// the walk of the package's directory saw, not stated again component by
// component, and neither is a member: a skill is resolved by the walk of
// its directory (skillAt), an instruction or agent file by its open
// (instructionAt, agentAt).
func TestToolFilesStatedOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "source")
	if err := sourcegen.WriteOwn(dir, 3); err != nil {
		t.Fatal(err)
	}
	before := lstatsInside.Load()
	rep, err := Validate(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Valid {
		t.Fatalf("generated source invalid: %v", rep.Diagnostics)
	}
	members := 0
	for _, p := range rep.Packages {
		for _, m := range p.Members {
			if ParseRef(m.Ref).Kind != "skill" {
				members++
			}
		}
	}
	if members == 0 {
		t.Fatal("no members but skills: the shape changed")
	}
	if n := lstatsInside.Load() - before; n != 0 {
		t.Errorf("%d paths stated component by component, want none (%d members not skills)", n, members)
	}
}

// TestLayoutDirsStatedOnce: resolving the members of a source states
// each directory of its layout (skills, agents) once a run, and nothing
// of each member: a skill's folder and its SKILL.md are proven by opening
// and listing the folder, which its walk does anyway, and an agent's file
// by the fstat of its open for reading.
func TestLayoutDirsStatedOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "source")
	if err := sourcegen.WriteSkills(dir, 3); err != nil {
		t.Fatal(err)
	}
	before := componentLstats.Load()
	rep, err := Validate(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Valid {
		t.Fatalf("generated source invalid: %v", rep.Diagnostics)
	}
	skills, agents := 0, 0
	for _, p := range rep.Packages {
		for _, m := range p.Members {
			switch ParseRef(m.Ref).Kind {
			case "skill":
				skills++
			case "agent":
				agents++
			}
		}
	}
	if skills == 0 || agents == 0 {
		t.Fatalf("%d skills and %d agents: the shape changed", skills, agents)
	}
	want := int64(2) // skills/ and agents/ once each
	if n := componentLstats.Load() - before; n != want {
		t.Errorf("%d components stated, want %d", n, want)
	}
}

// ownManifest returns the rules and the manifest of a package
// bench/sourcegen's own shape writes.
func ownManifest(t *testing.T) (*Rules, []byte) {
	t.Helper()
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "source")
	if err := sourcegen.WriteOwn(dir, 1); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(dir, "plugins", "own-0000", "PLUGIN.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return r, src
}

// TestAcceptStructCountsRequired: the shape walk proves a struct only
// with every required field there, counting them. Each required field of
// a generated manifest's tables, taken out, leaves it unproved; the
// manifest whole, and with an optional field taken out, is proved.
func TestAcceptStructCountsRequired(t *testing.T) {
	r, src := ownManifest(t)
	var l diagList
	m := decodeManifest(src, &r.Limits, &l)
	if m == nil {
		t.Fatal(l.diags)
	}
	if !r.acceptStruct(r.manifest, "#Manifest", m.data) {
		t.Fatal("generated manifest not proved")
	}
	fields := r.structFields(r.manifest, "#Manifest")
	tables := map[string]string{"": "#Manifest", "plugin": fields["plugin"].name}
	required, optional := 0, 0
	for at, name := range tables {
		tbl := m.data
		def := r.manifest
		if at != "" {
			tbl = m.data[at].(map[string]any)
			def = fields[at].v
		}
		for k, fd := range r.structFields(def, name) {
			x, ok := tbl[k]
			if !ok {
				continue
			}
			delete(tbl, k)
			got := r.acceptStruct(r.manifest, "#Manifest", m.data)
			tbl[k] = x
			switch {
			case fd.required && got:
				t.Errorf("%s without its required %s proved", name, k)
			case fd.required:
				required++
			case !got && k == "description":
				t.Errorf("%s without its optional %s not proved", name, k)
			default:
				optional++
			}
		}
	}
	if required == 0 || optional == 0 {
		t.Fatalf("took out %d required and %d optional fields, want some of each", required, optional)
	}
}

// TestSlowWalkSkipsWhatTheFastPathProves: a manifest CUE refuses is
// walked field by field for its mistakes, and a field whose value the
// fast path proves is not walked, so that a generated manifest with an
// unknown key in every table reports those keys alone and walks only the
// tables that hold them; it walked every value, asking CUE of each
// scalar, and cost twenty times a valid manifest.
func TestSlowWalkSkipsWhatTheFastPathProves(t *testing.T) {
	r, src := ownManifest(t)
	bad := strings.ReplaceAll(string(src), "schema_version = 1\n", "schema_version = 1\nauthor = \"someone\"\n")
	l := &diagList{file: "PLUGIN.toml"}
	m := decodeManifest([]byte(bad), &r.Limits, l)
	if m == nil {
		t.Fatal(l.diags)
	}
	before := valuesWalked.Load()
	if r.checkShape(m, l, func() *Rules { return r }) {
		t.Fatal("a manifest with unknown keys passed")
	}
	tables := strings.Count(bad, "author = ")
	if len(l.diags) != tables {
		t.Errorf("%d findings for %d unknown keys: %v", len(l.diags), tables, l.diags)
	}
	for _, d := range l.diags {
		if d.Code != "E020" {
			t.Errorf("finding %v, want only E020s", d)
		}
	}
	// The tool and hook tables that hold a key each, and their two
	// lists: no value the fast path proves.
	if n, want := valuesWalked.Load()-before, int64(tables-1+2); n != want {
		t.Errorf("walked %d values, want the %d that hold a mistake", n, want)
	}
}

// TestBrokenShapesNotUnifiedWhole: a manifest whose shape the walk finds
// a mistake in (a key misspelt, a string for an integer, a value outside
// its set) is reported from the walk, not first unified whole with
// #Manifest, and its findings are the walk's, at their fields.
func TestBrokenShapesNotUnifiedWhole(t *testing.T) {
	for _, tc := range []struct{ old, new, want string }{
		{`timeout_ms = 5000`, `timeot_ms = 5000`, "E020 hook[0].timeot_ms: unknown field timeot_ms; did you mean timeout_ms?"},
		{`timeout_ms = 5000`, `timeout_ms = "5000"`, "E022 hook[0].timeout_ms: timeout_ms must be"},
		{`effect = "add_context"`, `effect = "add_contxt"`, "E023 hook[0].effect: invalid effect \"add_contxt\""},
	} {
		root := t.TempDir()
		manifest := strings.Replace(validManifest, tc.old, tc.new, 1)
		writeArchive(t, root, baseSource+"-- plugins/design-review/PLUGIN.toml --\n"+manifest)
		rep, n := validateCounted(t, root, &shapesUnified)
		if n != 0 {
			t.Errorf("%s: %d manifests unified whole, want none", tc.new, n)
		}
		var got []string
		for _, d := range rep.Diagnostics {
			got = append(got, d.String())
		}
		if rep.Valid || !strings.Contains(strings.Join(got, "\n"), tc.want) {
			t.Errorf("%s: valid %t, diagnostics\n%s\nwant one holding %q", tc.new, rep.Valid, strings.Join(got, "\n"), tc.want)
		}
	}
}

// TestRepeatedMistakesAskedOnce: a mistake a generator made in every hook
// (a subject and an effect outside their sets) is asked of CUE once each,
// and said at every hook.
func TestRepeatedMistakesAskedOnce(t *testing.T) {
	hook := strings.Index(validManifest, "[[hook]]")
	manifest := validManifest
	for range 49 {
		manifest += "\n" + validManifest[hook:]
	}
	manifest = strings.ReplaceAll(manifest, `subject = "prompt"`, `subject = "tool"`)
	manifest = strings.ReplaceAll(manifest, `effect = "add_context"`, `effect = "add_contxt"`)
	root := t.TempDir()
	writeArchive(t, root, baseSource+"-- plugins/design-review/PLUGIN.toml --\n"+manifest)
	rep, n := validateCounted(t, root, &scalarsAsked)
	if n > 2 {
		t.Errorf("%d findings about scalars made for 50 hooks with the same two mistakes, want 2", n)
	}
	subjects, effects := 0, 0
	for _, d := range rep.Diagnostics {
		switch {
		case d.Code == "E023" && strings.HasSuffix(d.Field, ".subject") && strings.HasPrefix(d.Message, `invalid subject "tool": expected one of session, prompt, tool_call, workflow`):
			subjects++
		case d.Code == "E023" && strings.HasSuffix(d.Field, ".effect") && strings.Contains(d.Message, "did you mean add_context?"):
			effects++
		}
	}
	if subjects != 50 || effects != 50 {
		t.Errorf("%d subjects and %d effects said wrong, want 50 each:\n%v", subjects, effects, rep.Diagnostics)
	}
}

// TestEnumsAgree holds enumOf to CUE: for every scalar definition of
// #Manifest it reads as a set of strings, each string of the leaf corpus,
// each member and each member misspelt is in the set exactly when CUE
// takes it; and it finds the sets of the hook's subject and effect.
func TestEnumsAgree(t *testing.T) {
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	sets := 0
	for name, def := range leafDefs(t, r) {
		e := r.enumOf(def, name)
		if e == nil {
			continue
		}
		sets++
		var vs []string
		for _, v := range leafCorpus(r) {
			if s, ok := v.(string); ok {
				vs = append(vs, s)
			}
		}
		for m := range e.members {
			vs = append(vs, m, m+"x", strings.ToUpper(m), " "+m)
		}
		for _, s := range vs {
			if got, want := e.members[s], cueAccepts(r, def, s); got != want {
				t.Errorf("%s: %q in the set %t, CUE takes it %t", name, s, got, want)
			}
		}
	}
	for _, name := range []string{"#Manifest.hook[].subject", "#Manifest.hook[].effect"} {
		if _, ok := leafDefs(t, r)[name]; !ok {
			t.Errorf("no definition %s", name)
		}
	}
	if sets < 8 {
		t.Errorf("%d definitions read as sets of strings, want the manifest's enumerations", sets)
	}
}

// TestEnumMistakesNotUnified: 50 hooks whose effects are each misspelt
// their own way are each said wrong, with the effect meant, and CUE is
// asked about none of them.
func TestEnumMistakesNotUnified(t *testing.T) {
	hook := strings.Index(validManifest, "[[hook]]")
	manifest := validManifest
	for i := range 49 {
		manifest += "\n" + strings.Replace(validManifest[hook:], `id = "design-context"`+"\ntool", fmt.Sprintf("id = \"h%d\"\ntool", i), 1)
	}
	n := 0
	manifest = regexp.MustCompile(`effect = "add_context"`).ReplaceAllStringFunc(manifest, func(string) string {
		n++
		return fmt.Sprintf(`effect = "add_contxt%d"`, n)
	})
	root := t.TempDir()
	writeArchive(t, root, baseSource+"-- plugins/design-review/PLUGIN.toml --\n"+manifest)
	rep, asked := validateCounted(t, root, &scalarsUnified)
	if asked != 0 {
		t.Errorf("CUE asked about %d values, want none", asked)
	}
	effects := 0
	for _, d := range rep.Diagnostics {
		if d.Code == "E023" && strings.HasSuffix(d.Field, ".effect") && strings.HasPrefix(d.Message, `invalid effect "add_contxt`) && strings.HasSuffix(d.Message, "did you mean add_context?") {
			effects++
		}
	}
	if effects != 50 {
		t.Errorf("%d effects said wrong, want 50:\n%v", effects, rep.Diagnostics)
	}
}

// validateCounted validates the source at root and returns its report and
// how much counter, one of the engine's counters, grew meanwhile.
func validateCounted(t *testing.T, root string, counter *atomic.Int64) (*Report, int64) {
	t.Helper()
	before := counter.Load()
	rep, err := Validate(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep, counter.Load() - before
}

// TestPatternMistakesOfTheirOwn: when every package writes its own
// mistakes of a pattern, each is said wrong from the definition's syntax,
// without asking CUE, and what the findings say of the definition (what
// it expects, the values it admits, its code) is worked out once for it,
// not once a finding.
func TestPatternMistakesOfTheirOwn(t *testing.T) {
	root := t.TempDir()
	archive := baseSource
	for i := range 20 {
		name := fmt.Sprintf("pkg-%d", i)
		m := strings.Replace(validManifest, `name = "design-review"`, fmt.Sprintf("name = %q", name), 1)
		m = strings.Replace(m, `platforms = ["linux", "macos"]`, fmt.Sprintf("platforms = [\"linux\", \"macos\"]\nenv = [\"$HOME_%d\", \"KEY_%d=1\"]", i, i), 1)
		archive += "-- plugins/" + name + "/PLUGIN.toml --\n" + m
	}
	writeArchive(t, root, archive)
	before := scalarsUnified.Load()
	rep, n := validateCounted(t, root, &defsWorded)
	if asked := scalarsUnified.Load() - before; asked != 0 {
		t.Errorf("CUE asked about %d values, want none", asked)
	}
	// Workers that meet the definition at the same time may each work
	// them out; not the 40 findings each.
	if workers := int64(runtime.GOMAXPROCS(0)); n > workers {
		t.Errorf("the words of the env definition worked out %d times, want once a worker at most (%d)", n, workers)
	}
	envs := 0
	for _, d := range rep.Diagnostics {
		if d.Code == "E023" && strings.Contains(d.Field, ".env[") && strings.HasSuffix(d.Message, `: expected a string matching ^[A-Za-z_][A-Za-z0-9_]*$`) {
			envs++
		}
	}
	if envs != 40 {
		t.Errorf("%d env mistakes said, want 40:\n%v", envs, rep.Diagnostics)
	}
}

// TestScalarKindAgrees holds scalarKind to the kind CUE gives each scalar
// TOML decodes to.
func TestScalarKindAgrees(t *testing.T) {
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{"s", "", int64(-3), int64(1) << 62, 1.5, 2.0, true, false} {
		kind, ok := scalarKind(v)
		if want := r.ctx.Encode(cueData(v)).Kind(); !ok || kind != want {
			t.Errorf("%#v: kind %v (%t), CUE says %v", v, kind, ok, want)
		}
	}
	for _, v := range []any{map[string]any{}, []any{}, time.Now()} {
		if _, ok := scalarKind(v); ok {
			t.Errorf("%#v: a kind said, want it left to CUE", v)
		}
	}
}

// TestMissingMembersNotStated: a member that is not there is said missing
// from the failed open relative to its layout directory, in lstatInside's
// words, without stating its path again: a package of two dozen optional
// members not in the source cost two system calls each, one through the
// scheduler (a generator's shape, 4.4x the walk floor).
func TestMissingMembersNotStated(t *testing.T) {
	src := t.TempDir()
	writeFile(t, src, "plugins/a/PLUGIN.toml", `schema_version = 1
[plugin]
name = "a"
description = "d"

[[plugin.members]]
ref = "skill:here"
requirement = "required"

[[plugin.members]]
ref = "skill:ghost"
requirement = "optional"

[[plugin.members]]
ref = "skill:hollow"
requirement = "optional"

[[plugin.members]]
ref = "agent:phantom"
requirement = "optional"

[[plugin.members]]
ref = "instruction:absent"
requirement = "optional"
`)
	writeFile(t, src, "skills/here/SKILL.md", "---\nname: here\ndescription: d\n---\n")
	writeFile(t, src, "skills/hollow/notes.md", "no SKILL.md beside\n")
	writeFile(t, src, "agents/other.md", "---\nname: other\ndescription: d\n---\n")
	writeFile(t, src, "instructions/other.md", "text\n")
	rep, n := validateCounted(t, src, &lstatsInside)
	var got []string
	for _, d := range rep.Diagnostics {
		got = append(got, d.Code+" "+d.Message)
	}
	want := []string{
		"skills/ghost/SKILL.md does not exist: there is no directory skills/ghost",
		"skills/hollow/SKILL.md does not exist",
		"agents/phantom.md does not exist",
		"instructions/absent.md does not exist",
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, w) }) {
			t.Errorf("no finding says %q: %q", w, got)
		}
	}
	if n != 0 {
		t.Errorf("%d paths stated by lstatInside, want none", n)
	}
}

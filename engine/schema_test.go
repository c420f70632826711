package engine

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"cuelang.org/go/cue"
	"github.com/pelletier/go-toml/v2"
	"github.com/rogpeppe/go-internal/txtar"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"dalo/bench/sourcegen"
	defs "dalo/cue"
)

//go:generate go test -run ^Test(Project)?SchemaFile$ -update-schema .

var updateSchema = flag.Bool("update-schema", false, "rewrite plugin-v1.schema.json and dalo-project-v1.schema.json from the CUE definitions")

const (
	schemaFile        = "../plugin-v1.schema.json"
	projectSchemaFile = "../dalo-project-v1.schema.json"
)

// TestSchemaFile checks that the committed plugin-v1.schema.json is exactly
// what 'dalo schema' prints, so that editors never see a stale shape.
func TestSchemaFile(t *testing.T) {
	checkSchemaFile(t, schemaFile, JSONSchema)
}

// TestProjectSchemaFile is TestSchemaFile for dalo.toml's schema, which
// 'dalo schema --project' prints.
func TestProjectSchemaFile(t *testing.T) {
	checkSchemaFile(t, projectSchemaFile, ProjectJSONSchema)
}

func checkSchemaFile(t *testing.T, schemaFile string, JSONSchema func() ([]byte, error)) {
	want, err := JSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	again, err := JSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, again) {
		t.Fatal("JSONSchema is not deterministic: two calls gave different documents")
	}
	if *updateSchema {
		if err := writeFileAtomic(schemaFile, want); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatalf("%v; run 'go generate ./engine' to create it", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: it differs from 'dalo schema'; run 'go generate ./engine'", filepath.Base(schemaFile))
	}
}

func writeFileAtomic(name string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(name), ".schema-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), name); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(name))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// compiledSchema compiles the generated schema with a real JSON Schema
// 2020-12 validator.
func compiledSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	return compileSchema(t, "plugin-v1.schema.json", JSONSchema)
}

// compileSchema compiles the schema generate returns, named name.
func compileSchema(t *testing.T, name string, generate func() ([]byte, error)) *jsonschema.Schema {
	t.Helper()
	b, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(name, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(name)
	if err != nil {
		t.Fatalf("compiling %s: %v", name, err)
	}
	return sch
}

// schemaCheck decodes src as TOML into the JSON data model and validates
// it against sch. It returns nil when the schema accepts the manifest.
func schemaCheck(sch *jsonschema.Schema, src []byte) error {
	var data map[string]any
	// A byte order mark is the file's encoding, not its document: dalo
	// reads past one, and so does an editor before it applies the schema.
	src = bytes.TrimPrefix(src, []byte(utf8BOM))
	if err := toml.Unmarshal(src, &data); err != nil {
		return fmt.Errorf("not TOML: %w", err)
	}
	if data == nil {
		data = map[string]any{}
	}
	return sch.Validate(jsonValue(data))
}

// jsonValue turns decoded TOML into the equivalent JSON value. TOML's
// datetimes and non-finite floats have no JSON counterpart; they become
// strings, as an editor working on the JSON data model sees them.
func jsonValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = jsonValue(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = jsonValue(x)
		}
		return out
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Sprint(v)
		}
		return v
	case time.Time:
		return v.Format(time.RFC3339Nano)
	case toml.LocalDate, toml.LocalTime, toml.LocalDateTime:
		return fmt.Sprint(v)
	}
	return v
}

// validManifest is the draft's complete example with an agent member and
// its inline fallback; each case below changes one thing.
const validManifest = `schema_version = 1

[plugin]
name = "design-review"
description = "Design review guidance with project context before each prompt."
id = "example.design-review"
version = "0.1.0"

[[plugin.members]]
ref = "skill:design-review"
requirement = "required"

[[plugin.members]]
ref = "instruction:design-context"
requirement = "recommended"

[[plugin.members]]
ref = "agent:reviewer"
requirement = "optional"
fallback = { kind = "inline", skill = "skill:design-review" }

[[tool]]
schema_version = 1
id = "design-context"
entry = "context.mjs"
runtime = "node"
runtime_version = ">=20"
argv = ["${input.project_dir}"]
cwd = "tool_root"
availability = "required"
capabilities = ["filesystem_read"]
platforms = ["linux", "macos"]

[[tool.inputs]]
name = "project_dir"
type = "path"

[[hook]]
schema_version = 1
id = "design-context"
tool = "design-context"
subject = "prompt"
phase = "before"
effect = "add_context"
requirement = "optional"
fallback = "omit"
timeout_ms = 5000
failure_policy = "report"
retry = "never"
error_visibility = "user"
blocking_scope = "matched_event"
bindings = [{ input = "project_dir", field = "session.cwd" }]
`

// baseSource is the rest of the source every case is validated in.
const baseSource = `
-- skills/design-review/SKILL.md --
---
name: design-review
description: Review a user interface design.
---
Review it.
-- instructions/design-context.md --
# Design context
-- agents/reviewer.md --
---
name: reviewer
description: Reviews designs in isolation.
---
Review the design.
-- plugins/design-review/context.mjs --
process.stdout.write(JSON.stringify({kind: "add_context", context: "Review contrast."}));
`

// edit returns validManifest with old replaced by new; old must occur.
func edit(pairs ...string) string {
	s := validManifest
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			panic(fmt.Sprintf("edit: %q is not in the manifest", pairs[i]))
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}

// Classifications of a manifest.
const (
	valid      = "valid"      // the schema and dalo accept it
	structural = "structural" // the schema rejects it, and so does dalo
	semantic   = "semantic"   // the schema accepts it; only dalo's local checks reject it
)

// TestSchemaClassification runs named manifests through the JSON Schema and
// through dalo, and checks the classification of each: what JSON Schema can
// say about a decoded manifest, and what only dalo's semantic checks catch.
func TestSchemaClassification(t *testing.T) {
	members := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "{ ref = \"skill:s%d\", requirement = \"optional\" },\n", i)
		}
		return b.String()
	}
	tests := []struct {
		name     string
		manifest string // plugins/design-review/PLUGIN.toml
		extra    string // more files of the source, as a txtar archive
		want     string
		code     string // the diagnostic dalo must give when it rejects
	}{
		{name: "complete example", manifest: validManifest, want: valid},
		{name: "minimal", manifest: "schema_version = 1\n[plugin]\nname = \"design-review\"\ndescription = \"d\"\n", want: valid},
		{name: "providers are inert", manifest: validManifest + "[providers.claude]\nanything = { nested = [1, \"two\"] }\n", want: valid},
		{name: "description after an ideographic space", manifest: edit(`description = "Design review guidance with project context before each prompt."`, `description = "\u3000x"`), want: valid},
		{name: "multi-byte string within 16 KiB", manifest: edit(`description = "Design review guidance with project context before each prompt."`, `description = "`+strings.Repeat("é", 8192)+`"`), want: valid},
		{name: "matcher on a tool call", manifest: edit(`subject = "prompt"`, `subject = "tool_call"`, `bindings =`, "matcher = { tool_names = [] }\nbindings ="), want: valid},

		// Structural: the schema says no, and so does dalo.
		{name: "unknown top-level field", manifest: validManifest + "colour = \"red\"\n", want: structural, code: "E020"},
		{name: "$schema key", manifest: "\"$schema\" = \"./plugin-v1.schema.json\"\n" + validManifest, want: structural, code: "E020"},
		{name: "unknown hook field", manifest: edit(`retry = "never"`, "retry = \"never\"\npriority = 1"), want: structural, code: "E020"},
		{name: "unknown fallback field", manifest: edit(`skill = "skill:design-review" }`, `skill = "skill:design-review", note = "x" }`), want: structural, code: "E020"},
		{name: "a provider's entry a datetime, not a table", manifest: validManifest + "\n[providers]\nclaude = 1979-05-27\n", want: structural, code: "E022"},
		{name: "a provider's entry an offset datetime", manifest: validManifest + "\n[providers]\nclaude = 1979-05-27T07:32:00Z\n", want: structural, code: "E022"},
		{name: "wrong type: timeout as string", manifest: edit(`timeout_ms = 5000`, `timeout_ms = "5000"`), want: structural, code: "E022"},
		{name: "wrong type: argv as shell string", manifest: edit(`argv = ["${input.project_dir}"]`, `argv = "node context.mjs"`), want: structural, code: "E022"},
		{name: "wrong type: plugin as string", manifest: "schema_version = 1\nplugin = \"design-review\"\n", want: structural, code: "E022"},
		{name: "enum: runtime", manifest: edit(`runtime = "node"`, `runtime = "ruby"`), want: structural, code: "E023"},
		{name: "enum: effect", manifest: edit(`effect = "add_context"`, `effect = "block"`), want: structural, code: "E023"},
		{name: "enum: member requirement", manifest: edit(`requirement = "recommended"`, `requirement = "suggested"`), want: structural, code: "E023"},
		{name: "pattern: plugin name", manifest: edit(`name = "design-review"`, `name = "Design_Review"`), want: structural, code: "E023"},
		{name: "pattern: reference with a slash", manifest: edit(`ref = "skill:design-review"`, `ref = "skill:design/review"`), want: structural, code: "E023"},
		{name: "pattern: env name", manifest: edit(`platforms = ["linux", "macos"]`, "platforms = [\"linux\", \"macos\"]\nenv = [\"MY VAR\"]"), want: structural, code: "E023"},
		{name: "pattern: description of Unicode white space", manifest: edit(`description = "Design review guidance with project context before each prompt."`, `description = "\u3000\u00a0\u2028"`), want: structural, code: "E023"},
		{name: "providers entry not a table", manifest: validManifest + "[providers]\nclaude = 1\n", want: structural, code: "E022"},
		{name: "pattern: blank description", manifest: edit(`description = "Design review guidance with project context before each prompt."`, `description = "   "`), want: structural, code: "E023"},
		{name: "id over 128 characters", manifest: edit(`id = "example.design-review"`, `id = "`+strings.Repeat("a", 129)+`"`), want: structural, code: "E023"},
		{name: "missing required: description", manifest: edit(`description = "Design review guidance with project context before each prompt."`+"\n", ""), want: structural, code: "E021"},
		{name: "missing required: retry", manifest: edit(`retry = "never"`+"\n", ""), want: structural, code: "E021"},
		{name: "schema_version 2", manifest: edit("schema_version = 1\n\n[plugin]", "schema_version = 2\n\n[plugin]"), want: structural, code: "E024"},
		{name: "tool schema_version 2", manifest: edit("[[tool]]\nschema_version = 1", "[[tool]]\nschema_version = 2"), want: structural, code: "E025"},
		{name: "timeout below 100", manifest: edit(`timeout_ms = 5000`, `timeout_ms = 99`), want: structural, code: "E023"},
		{name: "timeout above 120000", manifest: edit(`timeout_ms = 5000`, `timeout_ms = 120001`), want: structural, code: "E023"},
		{name: "members over 1024 entries", manifest: "schema_version = 1\n[plugin]\nname = \"design-review\"\ndescription = \"d\"\nmembers = [\n" + members(1025) + "]\n", want: structural, code: "E016"},

		// Semantic: the schema passes; dalo's local checks reject.
		{name: "combination not admitted", manifest: edit(`phase = "before"`, `phase = "stop"`), want: semantic, code: "E030"},
		{name: "effect not admitted on the row", manifest: edit(`effect = "add_context"`, `effect = "replace_output"`), want: semantic, code: "E031"},
		{name: "failure policy not admitted", manifest: edit(`failure_policy = "report"`, `failure_policy = "fail_closed"`), want: semantic, code: "E032"},
		{name: "optional hook without fallback", manifest: edit(`fallback = "omit"`+"\n", ""), want: semantic, code: "E033"},
		{name: "required hook with fallback", manifest: edit(`requirement = "optional"`+"\nfallback = \"omit\"", `requirement = "required"`+"\nfallback = \"omit\""), want: semantic, code: "E034"},
		{name: "matcher on a prompt hook", manifest: edit(`bindings =`, "matcher = { tool_names = [\"Bash\"] }\nbindings ="), want: semantic, code: "E035"},
		{name: "fallback on a skill member", manifest: edit("ref = \"skill:design-review\"\nrequirement = \"required\"", "ref = \"skill:design-review\"\nrequirement = \"required\"\nfallback = { kind = \"inline\", skill = \"skill:design-review\" }"), want: semantic, code: "E053"},
		{name: "fallback skill not a required member", manifest: edit("ref = \"skill:design-review\"\nrequirement = \"required\"", "ref = \"skill:design-review\"\nrequirement = \"optional\""), want: semantic, code: "E055"},
		{name: "recommended skill", manifest: edit("ref = \"skill:design-review\"\nrequirement = \"required\"", "ref = \"skill:design-review\"\nrequirement = \"recommended\""), want: semantic, code: "E052"},
		{name: "requires a skill", manifest: edit("[[tool]]", "[[plugin.requires]]\nref = \"skill:design-review\"\nrequirement = \"required\"\n\n[[tool]]"), want: semantic, code: "E050"},
		{name: "bindings type mismatch", manifest: edit(`field = "session.cwd"`, `field = "prompt.text"`), want: semantic, code: "E039"},
		{name: "binding to an unknown field", manifest: edit(`field = "session.cwd"`, `field = "session.colour"`), want: semantic, code: "E037"},
		{name: "required input without binding", manifest: edit(`bindings = [{ input = "project_dir", field = "session.cwd" }]`, `bindings = []`), want: semantic, code: "E041"},
		{name: "undeclared input in argv", manifest: edit(`argv = ["${input.project_dir}"]`, `argv = ["${input.project_dir}", "${input.theme}"]`), want: semantic, code: "E043"},
		{name: "embedded substitution in argv", manifest: edit(`argv = ["${input.project_dir}"]`, `argv = ["--dir=${input.project_dir}"]`), want: semantic, code: "E042"},
		{name: "entry repeated in files", manifest: edit(`entry = "context.mjs"`, "entry = \"context.mjs\"\nfiles = [\"context.mjs\"]"), want: semantic, code: "E045"},
		{name: "missing entry file", manifest: edit(`entry = "context.mjs"`, `entry = "missing.mjs"`), want: semantic, code: "E061"},
		{name: "entry escapes the package", manifest: edit(`entry = "context.mjs"`, `entry = "../other/context.mjs"`), want: semantic, code: "E060"},
		{name: "duplicate tool ids", manifest: edit("[[hook]]", "[[tool]]\nschema_version = 1\nid = \"design-context\"\nentry = \"context.mjs\"\nruntime = \"node\"\nargv = []\ncwd = \"tool_root\"\navailability = \"optional\"\n\n[[hook]]"), want: semantic, code: "E058"},
		{name: "duplicate plugin ids in a source", manifest: validManifest, extra: "-- plugins/other/PLUGIN.toml --\nschema_version = 1\n[plugin]\nname = \"other\"\ndescription = \"d\"\nid = \"example.design-review\"\n", want: semantic, code: "E076"},
		{name: "duplicate member reference", manifest: edit("[[tool]]", "[[plugin.members]]\nref = \"skill:validation:design-review\"\nrequirement = \"required\"\n\n[[tool]]"), want: semantic, code: "E057"},
		{name: "unresolved reference", manifest: edit(`ref = "skill:design-review"`, `ref = "skill:nosuch"`, `skill = "skill:design-review"`, `skill = "skill:nosuch"`), want: semantic, code: "E071"},
		{name: "cycle in requires", manifest: edit("[[tool]]", "[[plugin.requires]]\nref = \"plugin:other\"\nrequirement = \"optional\"\n\n[[tool]]"), extra: "-- plugins/other/PLUGIN.toml --\nschema_version = 1\n[plugin]\nname = \"other\"\ndescription = \"d\"\n[[plugin.requires]]\nref = \"plugin:design-review\"\nrequirement = \"optional\"\n", want: semantic, code: "E077"},
		{name: "name differs from its directory", manifest: edit(`name = "design-review"`, `name = "design-reviews"`), want: semantic, code: "E027"},
		{name: "timeout as a float", manifest: edit(`timeout_ms = 5000`, `timeout_ms = 5000.0`), want: semantic, code: "E022"},
		{name: "string over 16 KiB bytes, under 16 Ki characters", manifest: edit(`description = "Design review guidance with project context before each prompt."`, `description = "`+strings.Repeat("é", 8193)+`"`), want: semantic, code: "E015"},
	}
	sch := compiledSchema(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			writeArchive(t, root, baseSource+tc.extra)
			writeFile(t, root, "plugins/design-review/PLUGIN.toml", tc.manifest)

			schemaErr := schemaCheck(sch, []byte(tc.manifest))
			acceptAgrees(t, fuzzRules(), []byte(tc.manifest))
			rep, err := Validate(root, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := valid
			switch {
			case schemaErr != nil:
				got = structural
			case !rep.Valid:
				got = semantic
			}
			if got != tc.want {
				t.Errorf("classified %s, want %s\nschema: %v\ndalo:\n%s", got, tc.want, schemaErr, diagLines(rep))
			}
			if schemaErr != nil && rep.Valid {
				t.Errorf("the schema rejects a manifest dalo accepts: %v", schemaErr)
			}
			if tc.want == valid {
				if !rep.Valid {
					t.Errorf("dalo rejects a valid manifest:\n%s", diagLines(rep))
				}
				return
			}
			if !hasCode(rep, tc.code) {
				t.Errorf("dalo gave no %s:\n%s", tc.code, diagLines(rep))
			}
		})
	}
}

// TestSchemaAgreesWithDalo runs every PLUGIN.toml of the conformance suite
// and of examples/ through the schema and through dalo: a manifest the
// schema rejects must be one dalo rejects too. It logs the manifests only
// dalo rejects, the semantic rejections.
func TestSchemaAgreesWithDalo(t *testing.T) {
	sch := compiledSchema(t)
	type source struct{ name, root string }
	var sources []source
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
			if !filepath.IsLocal(f.Name) {
				continue
			}
			writeFile(t, dir, f.Name, string(f.Data))
		}
		sources = append(sources, source{filepath.Base(a), dir})
	}
	sources = append(sources, source{"examples", "../examples"})

	checked := 0
	for _, s := range sources {
		// A source is any directory holding plugins/<name>/PLUGIN.toml.
		manifests, err := findManifests(s.root)
		if err != nil {
			t.Fatal(err)
		}
		byRoot := map[string][]string{}
		for _, m := range manifests {
			r := filepath.Dir(filepath.Dir(filepath.Dir(m)))
			byRoot[r] = append(byRoot[r], m)
		}
		for _, r := range slices.Sorted(maps.Keys(byRoot)) {
			rep, err := Validate(r, Options{})
			if err != nil {
				t.Errorf("%s: %v", s.name, err)
				continue
			}
			validPkg := map[string]bool{}
			for _, p := range rep.Packages {
				validPkg[p.Path] = p.Valid
			}
			for _, m := range byRoot[r] {
				rel, _ := filepath.Rel(r, m)
				pkg := filepath.ToSlash(filepath.Dir(rel))
				name := s.name + ":" + strings.TrimPrefix(filepath.ToSlash(m), filepath.ToSlash(s.root)+"/")
				src, err := os.ReadFile(m)
				if err != nil {
					t.Fatal(err)
				}
				checked++
				schemaErr := schemaCheck(sch, src)
				ok, found := validPkg[pkg]
				if !found {
					// Not discovered (for instance its directory is a
					// symlink): dalo did not accept it either.
					ok = false
				}
				switch {
				case schemaErr != nil && ok:
					t.Errorf("%s: the schema rejects it but dalo accepts it: %v", name, schemaErr)
				case schemaErr == nil && !ok:
					t.Logf("%s: semantic rejection: %s", name, packageCodes(rep, pkg))
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no PLUGIN.toml found under testdata/script or examples")
	}
	t.Logf("%d manifests checked", checked)
}

func findManifests(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == "PLUGIN.toml" && d.Type().IsRegular() && filepath.Base(filepath.Dir(filepath.Dir(p))) == "plugins" {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

func packageCodes(rep *Report, pkg string) string {
	var codes []string
	for _, d := range rep.Diagnostics {
		if d.Severity == Error && strings.HasPrefix(d.File, pkg+"/") {
			codes = append(codes, d.Code)
		}
	}
	if len(codes) == 0 {
		return "a required member or reference fails"
	}
	return strings.Join(codes, ", ")
}

func writeArchive(t *testing.T, root, archive string) {
	t.Helper()
	for _, f := range txtar.Parse([]byte(archive)).Files {
		writeFile(t, root, f.Name, string(f.Data))
	}
}

func writeFile(t *testing.T, root, name, data string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func hasCode(rep *Report, code string) bool {
	for _, d := range rep.Diagnostics {
		if d.Code == code {
			return true
		}
	}
	return false
}

func diagLines(rep *Report) string {
	var b strings.Builder
	for _, d := range rep.Diagnostics {
		fmt.Fprintf(&b, "\t%s\n", d)
	}
	return b.String()
}

// The schema document itself is valid JSON with the metadata editors show.
func TestSchemaMetadata(t *testing.T) {
	b, err := JSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"$id":     SchemaID,
		"title":   schemaTitle,
	} {
		if doc[k] != want {
			t.Errorf("%s = %v, want %q", k, doc[k], want)
		}
	}
	if !bytes.HasSuffix(b, []byte("}\n")) {
		t.Error("the document does not end in a newline")
	}
	hook := doc["$defs"].(map[string]any)["Hook"].(map[string]any)["properties"].(map[string]any)
	if d, _ := hook["timeout_ms"].(map[string]any)["description"].(string); !strings.Contains(d, "100 to 120000") {
		t.Errorf("hook.timeout_ms has description %q, want its @expect text", d)
	}
}

// acceptAgrees checks, for one manifest, that the field-by-field proof of
// its shape (acceptStruct) accepts it only if unifying it whole with
// #Manifest does, and returns both verdicts.
func acceptAgrees(t *testing.T, r *Rules, src []byte) (accepted, whole bool) {
	t.Helper()
	var l diagList
	m := decodeManifest(bytes.TrimPrefix(src, []byte(utf8BOM)), &r.Limits, &l)
	if m == nil {
		return false, false
	}
	shape := shapeData(m.data)
	accepted = r.acceptStruct(r.manifest, "#Manifest", shape)
	whole = r.manifest.Unify(r.ctx.Encode(cueData(shape))).Validate(cue.Concrete(true), cue.Final()) == nil
	if accepted && !whole {
		t.Errorf("accepted field by field, refused whole:\n%s", src)
	}
	// What the walk finds, CUE refuses whole: checkShapeSlow unifies
	// the whole only when the walk finds nothing.
	var walked diagList
	r.walkStruct(r.manifest, defs.Manifest, shape, "", m, &walked)
	if len(walked.diags) > 0 && whole {
		t.Errorf("the walk found %s in a manifest CUE accepts whole:\n%s", walked.diags[0].Message, src)
	}
	return accepted, whole
}

// TestAcceptShapeAgrees runs every manifest of the conformance suite,
// of examples/ and of a generated source through acceptStruct and through
// a whole unification with #Manifest: the first never accepts what the
// second refuses, and accepts every manifest the second accepts.
func TestAcceptShapeAgrees(t *testing.T) {
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{"../examples"}
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
		dirs = append(dirs, dir)
	}
	gen := filepath.Join(t.TempDir(), "gen")
	if err := sourcegen.Write(gen, 60, 0); err != nil {
		t.Fatal(err)
	}
	dirs = append(dirs, gen)
	var n, valid int
	for _, d := range dirs {
		ms, err := findManifests(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			src, err := os.ReadFile(m)
			if err != nil {
				t.Fatal(err)
			}
			accepted, whole := acceptAgrees(t, r, src)
			if whole && !accepted {
				t.Errorf("%s: valid in shape, but not accepted field by field", m)
			}
			n++
			if whole {
				valid++
			}
		}
	}
	if valid < 100 || n-valid < 30 {
		t.Fatalf("only %d manifests, %d valid in shape", n, valid)
	}
	t.Logf("%d manifests, %d valid in shape", n, valid)
}

// TestProjectSchemaAgrees holds dalo-project-v1.schema.json to what
// #Project admits of some dalo.toml files: an editor never marks a file
// CheckDocument takes, nor passes one whose shape it refuses.
func TestProjectSchemaAgrees(t *testing.T) {
	sch := compileSchema(t, "dalo-project-v1.schema.json", ProjectJSONSchema)
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, src string
		valid     bool
	}{
		{"empty", "", true},
		{"git and path sources", "[sources.team]\ngit = \"https://h/r.git\"\nref = \"main\"\n[sources.local]\npath = \"agents\"\n[[packages]]\nref = \"team:guard\"\nproviders = [\"claude\", \"codex\"]\n", true},
		{"unknown field", "[sources.team]\ngit = \"https://h/r.git\"\nbranch = \"main\"\n", false},
		{"no providers", "[[packages]]\nref = \"team:guard\"\n", false},
		{"empty providers", "[[packages]]\nref = \"team:guard\"\nproviders = []\n", false},
		{"ref without a source", "[[packages]]\nref = \"guard\"\nproviders = [\"claude\"]\n", false},
		{"blank path", "[sources.a]\npath = \" \"\n", false},
		{"$schema key", "\"$schema\" = \"x\"\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := r.CheckDocument("dalo.toml", "#Project", []byte(tc.src))
			if got := diags == nil; got != tc.valid {
				t.Fatalf("CheckDocument valid = %v, want %v: %v", got, tc.valid, diags)
			}
			if err := schemaCheck(sch, []byte(tc.src)); (err == nil) != tc.valid {
				t.Errorf("schema valid = %v, want %v: %v", err == nil, tc.valid, err)
			}
		})
	}
}

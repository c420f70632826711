package cue

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	cuepkg "cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
)

func TestLoad(t *testing.T) {
	if _, err := Load(cuecontext.New()); err != nil {
		t.Fatal(err)
	}
}

// TestBrokenTablesFail proves that the tables check themselves: each edit
// breaks one table in a way that would otherwise pass silently, and loading
// must refuse it.
func TestBrokenTablesFail(t *testing.T) {
	tests := []struct {
		name, file, old, new string
	}{
		{"row admits an unknown effect", "hooks.cue",
			`start: {effects: {observe: true, add_context: true}, fields: {}}`,
			`start: {effects: {observe: true, add_context: true, teleport: true}, fields: {}}`},
		{"row binds an unknown field", "hooks.cue",
			`end: {effects: {observe: true}, fields: {"session.end_reason": true}}`,
			`end: {effects: {observe: true}, fields: {"session.end_reason": true, "session.mood": true}}`},
		{"field with an unknown type", "hooks.cue",
			`"prompt.text":                "string"`,
			`"prompt.text":                "text"`},
		{"result kinds without abstain", "hooks.cue",
			`observe: {observe: true, abstain: true}`,
			`observe: {observe: true}`},
		{"unknown result kind", "hooks.cue",
			`gate: {allow: true, deny: true, abstain: true}`,
			`gate: {allow: true, deny: true, abstain: true, maybe: true}`},
		{"effect without report", "hooks.cue",
			`observe: {report: true}`,
			`observe: {fail_open: true}`},
		{"unknown failure policy", "hooks.cue",
			`replace_output: {report: true}`,
			`replace_output: {report: true, fail_quietly: true}`},
		{"common field unknown", "hooks.cue",
			`"actor.id":        true`,
			`"actor.name":      true`},
		{"unknown subject", "hooks.cue",
			`prompt: before: {`,
			`message: before: {`},
		{"unknown phase", "hooks.cue",
			`workflow: stop: {`,
			`workflow: halt: {`},
		{"reference kind without a layout", "layout.cue",
			`	agent: {dir: "agents", suffix: ".md"}`,
			``},
		{"layout of an unknown kind", "layout.cue",
			`	agent: {dir: "agents", suffix: ".md"}`,
			`	agent: {dir: "agents", suffix: ".md"}
	prompt: {dir: "prompts", suffix: ".md"}`},
		{"layout dir is not one path component", "layout.cue",
			`{dir: "agents", suffix: ".md"}`,
			`{dir: "agents/x", suffix: ".md"}`},
		{"matcher on a row without a tool name", "hooks.cue",
			`fields: {"prompt.text": true, "session.permission_mode": true}`,
			`fields: {"prompt.text": true, "session.permission_mode": true}
		matcher: true`},
		{"fallback names a kind no member is", "checks.cue",
			`fallback: {skill: true}}`,
			`fallback: {plugin: true}}`},
		{"argv grammar admits an embedded substitution", "checks.cue",
			`whole:        "^\(regexp`,
			`whole:        "\(regexp`},
		{"argv grammar without the draft's example", "checks.cue",
			`prefix:       "${input."`,
			`prefix:       "${in."`},
		{"argv prefix that does not substitute", "checks.cue",
			`prefix:       "${input."`,
			`prefix:       "$input."`},
		{"syntax error", "limits.cue",
			`manifest_bytes:`,
			`manifest_bytes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := copyFS(t)
			src := string(fsys[tt.file].Data)
			if !strings.Contains(src, tt.old) {
				t.Fatalf("%s does not contain %q", tt.file, tt.old)
			}
			fsys[tt.file].Data = []byte(strings.Replace(src, tt.old, tt.new, 1))
			_, err := LoadFS(cuecontext.New(), fsys)
			if err == nil {
				t.Fatalf("LoadFS accepted the broken table")
			}
			t.Logf("refused: %v", err)
		})
	}
}

func copyFS(t *testing.T) fstest.MapFS {
	t.Helper()
	out := fstest.MapFS{}
	names, err := fs.Glob(files, "*.cue")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		b, err := fs.ReadFile(files, n)
		if err != nil {
			t.Fatal(err)
		}
		out[n] = &fstest.MapFile{Data: b}
	}
	return out
}

// TestPackageRulesStandAlone: the rules a package is validated by compile
// without the provider table schema and the tables' check, and give the
// same definitions.
func TestPackageRulesStandAlone(t *testing.T) {
	rules, err := LoadPackageRules(cuecontext.New())
	if err != nil {
		t.Fatal(err)
	}
	all, err := Load(cuecontext.New())
	if err != nil {
		t.Fatal(err)
	}
	for _, def := range []string{"#Provider", Tables} {
		if rules.LookupPath(cuepkg.ParsePath(def)).Exists() {
			t.Errorf("the package rules hold %s", def)
		}
	}
	for _, def := range []string{"#Manifest", "#HookRules", "#BindingRules", "#RefRules", "#SkillFrontMatter", "#AgentFrontMatter", "#SourceLayout", "#SourceIDRule", "#RefPositions", "#Limits", "#Combinations", "#ResultKinds", "#FailurePolicies", "#Project", "#Lock"} {
		a, b := rules.LookupPath(cuepkg.ParsePath(def)), all.LookupPath(cuepkg.ParsePath(def))
		if !a.Exists() || fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s differs without the provider schema", def)
		}
	}
}

package providers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"dalo/engine"
	"dalo/providers"
)

// A new harness version is a CUE file and nothing else: a fixture version,
// loaded through the same path as the embedded tables, is found, becomes
// the newest, and a capability it removes changes the validation report.
func TestFixtureVersionChangesReport(t *testing.T) {
	base, err := os.ReadFile("claude/2.1.233.cue")
	if err != nil {
		t.Fatal(err)
	}
	codex, err := os.ReadFile("codex/0.147.0.cue")
	if err != nil {
		t.Fatal(err)
	}
	// claude@2.1.300: as 2.1.233, but input rewriting no longer works.
	const removed = `				rewrite_input: {
					status: "unsupported"
					reason: "Fixture: this version ignores updatedInput."
					evidence: ["doc: fixture"]
				}
				_oldRewrite: {`
	fixture := strings.Replace(string(base), `version: "2.1.233"`, `version: "2.1.300"`, 1)
	fixture = strings.Replace(fixture, "\t\t\t\trewrite_input: {", removed, 1)
	if !strings.Contains(fixture, "Fixture: this version") {
		t.Fatal("fixture mutation did not apply")
	}
	ts, err := providers.LoadFS(fstest.MapFS{
		"claude/2.1.233.cue": {Data: base},
		"claude/2.1.300.cue": {Data: []byte(fixture)},
		"codex/0.147.0.cue":  {Data: codex},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := ts.Newest("claude"); n.Version != "2.1.300" {
		t.Fatalf("newest claude = %s, want the fixture 2.1.300", n.Version)
	}

	src := writeSource(t, "tool_call", "before", "rewrite_input", "required")
	s, err := engine.Load(src, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Report.Valid {
		t.Fatalf("source invalid: %v", s.Report.Diagnostics)
	}
	caps, err := engine.CapabilitiesWith(ts, s.Packages, []string{"claude@2.1.233", "claude"})
	if err != nil {
		t.Fatal(err)
	}
	old, next := caps.Of("claude@2.1.233"), caps.Of("claude@2.1.300")
	if len(old) != 1 || len(next) != 1 {
		t.Fatalf("capabilities = %+v", caps)
	}
	if old[0].Status != "supported" || old[0].NativeEvent != "PreToolUse" {
		t.Errorf("claude@2.1.233: %+v, want supported on PreToolUse", old[0])
	}
	if next[0].Status != "unsupported" || !next[0].BlocksActivation || next[0].Reason != "Fixture: this version ignores updatedInput." {
		t.Errorf("claude@2.1.300: %+v, want unsupported, blocking, with the fixture's reason", next[0])
	}
}

// writeSource writes a source with one package and one hook.
func writeSource(t *testing.T, subject, phase, effect, requirement string) string {
	t.Helper()
	root := t.TempDir()
	pkg := filepath.Join(root, "plugins", "p")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	fallback := ""
	if requirement == "optional" {
		fallback = "fallback = \"omit\"\n"
	}
	manifest := `schema_version = 1

[plugin]
name = "p"
description = "A package."

[[tool]]
schema_version = 1
id = "t"
entry = "t.mjs"
runtime = "node"
argv = []
cwd = "tool_root"
availability = "required"

[[hook]]
schema_version = 1
id = "h"
tool = "t"
subject = "` + subject + `"
phase = "` + phase + `"
effect = "` + effect + `"
requirement = "` + requirement + `"
` + fallback + `timeout_ms = 5000
failure_policy = "report"
retry = "never"
error_visibility = "user"
blocking_scope = "matched_event"
`
	for name, data := range map[string]string{"PLUGIN.toml": manifest, "t.mjs": "\n"} {
		if err := os.WriteFile(filepath.Join(pkg, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

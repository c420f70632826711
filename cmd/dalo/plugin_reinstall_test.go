package main

import (
	"os"
	"path/filepath"
	"testing"
)

// Installing again restores what dalo wrote and the user deleted: a whole
// agent file, or one file of a skill directory that is still there.
func TestReinstallRestoresMissingFiles(t *testing.T) {
	dir := t.TempDir()
	lifecycleFixture(t, dir)
	const pkg = "company:review-kit"
	mustDalo(t, dir, "source", "add", "company", "src")
	mustDalo(t, dir, "plugin", "approve", pkg, "--provider", "claude", "--all", "--yes")
	mustDalo(t, dir, "plugin", "install", pkg, "--provider", "claude")
	for _, tc := range []struct{ installed, src string }{
		{"home/.claude/skills/design-review/SKILL.md", "src/skills/design-review/SKILL.md"},
		{"home/.claude/agents/reviewer.md", "src/agents/reviewer.md"},
	} {
		if err := os.Remove(filepath.Join(dir, tc.installed)); err != nil {
			t.Fatal(err)
		}
		mustDalo(t, dir, "plugin", "install", pkg, "--provider", "claude")
		got, err := os.ReadFile(filepath.Join(dir, tc.installed))
		want, _ := os.ReadFile(filepath.Join(dir, tc.src))
		if err != nil || string(got) != string(want) {
			t.Errorf("%s after installing again: %q, %v; want the source's bytes", tc.installed, got, err)
		}
	}
	if out, err := dalo(t, dir, "", "doctor"); err != nil {
		t.Fatalf("doctor: %v\n%s", err, out)
	}
}

package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dalo/store/gitrepo"
)

// TestScratch: a scratch reads a git source at the commit its ref names,
// or at a pin, writes nothing outside its directory, and Close removes
// it, read-only snapshots included; grants computed there ignore this
// user's environment.
func TestScratch(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	os.MkdirAll(filepath.Join(work, "plugins/kit"), 0o755)
	os.MkdirAll(filepath.Join(work, "skills/review"), 0o755)
	os.WriteFile(filepath.Join(work, "plugins/kit/PLUGIN.toml"), []byte("schema_version = 1\n\n[plugin]\nname = \"kit\"\ndescription = \"A kit.\"\nversion = \"1.0.0\"\n\n[[plugin.members]]\nref = \"skill:review\"\nrequirement = \"required\"\n"), 0o644)
	os.WriteFile(filepath.Join(work, "skills/review/SKILL.md"), []byte("---\nname: review\ndescription: Review a change.\n---\nReview it.\n"), 0o644)
	gitIn(t, dir, "init", "-q", "-b", "main", "work")
	gitIn(t, work, "add", "-A")
	gitIn(t, work, "commit", "-q", "-m", "v1")
	v1 := gitIn(t, work, "rev-parse", "HEAD")
	os.WriteFile(filepath.Join(work, "skills/review/SKILL.md"), []byte("---\nname: review\ndescription: Review a change.\n---\nReview it twice.\n"), 0o644)
	gitIn(t, work, "commit", "-q", "-am", "v2")
	v2 := gitIn(t, work, "rev-parse", "HEAD")

	w, err := NewScratch()
	if err != nil {
		t.Fatal(err)
	}
	commit, head, err := w.Git("team", "file://"+work, "main", "")
	if err != nil || commit != v2 {
		t.Fatalf("Git at the ref = %s, %v; want %s", commit, err, v2)
	}
	commit, pinned, err := w.Git("team", "file://"+work, "main", v1)
	if err != nil || commit != v1 {
		t.Fatalf("Git at the pin = %s, %v; want %s", commit, err, v1)
	}
	if _, _, err := w.Git("team", "file://"+work, "main", strings.Repeat("0", 40)); !errors.Is(err, gitrepo.ErrNoCommit) {
		t.Errorf("Git at a commit nothing reaches: %v, want ErrNoCommit", err)
	}

	t.Setenv("HOME", "")
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(dir, "elsewhere"))
	digests := map[string]string{}
	for name, root := range map[string]string{"head": head, "pinned": pinned} {
		loaded, err := SelectIn(Source{ID: "team", Path: root}, map[string]string{"team": root}, "claude@2.1.332", []string{"kit"})
		if err != nil {
			t.Fatal(err)
		}
		sel, err := loaded.Pick("kit")
		if err != nil {
			t.Fatal(err)
		}
		grants, err := w.Grants(sel)
		if err != nil {
			t.Fatalf("Grants without HOME: %v", err)
		}
		d, ok := grants["claude+team+kit+skill+review"]
		if !ok || len(grants) != 1 {
			t.Fatalf("Grants at %s = %v, want the skill's alone", name, grants)
		}
		digests[name] = d
	}
	if digests["head"] == digests["pinned"] {
		t.Errorf("the skill's digest is the same at both commits: %s", digests["head"])
	}
	if _, err := os.Stat(filepath.Join(dir, "elsewhere")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Grants wrote into CLAUDE_CONFIG_DIR: %v", err)
	}

	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Close left %s: %v", w.dir, err)
	}
}

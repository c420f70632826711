package scaffold

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestTreeItems(t *testing.T) {
	var tr Tree
	tr.Add("plugins/x/PLUGIN.toml", nil, false)
	tr.Add("plugins/x/lib/a.sh", nil, true)
	tr.Add("skills/x/SKILL.md", nil, false)
	tr.Add("agents/x.md", nil, false)
	tr.Add("plugin-v1.schema.json", nil, false)
	want := []string{"plugins/x", "skills/x", "agents/x.md", "plugin-v1.schema.json"}
	if got := tr.Items(); !slices.Equal(got, want) {
		t.Errorf("Items() = %v, want %v", got, want)
	}
}

// TestTreeCommit: the files arrive whole with their modes, the staging
// directory is gone, and a second commit of the same items is refused
// before anything is written.
func TestTreeCommit(t *testing.T) {
	root := t.TempDir()
	var tr Tree
	tr.Add("plugins/x/PLUGIN.toml", []byte("manifest\n"), false)
	tr.Add("plugins/x/lib/run.sh", []byte("#!/bin/sh\n"), true)
	tr.Add("agents/x.md", []byte("agent\n"), false)
	s, err := tr.Stage(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, f := range tr.Files() {
		b, err := os.ReadFile(filepath.Join(root, f.Path))
		if err != nil || string(b) != string(f.Data) {
			t.Errorf("%s: %q, %v", f.Path, b, err)
		}
		fi, _ := os.Stat(filepath.Join(root, f.Path))
		if exec := fi.Mode()&0o100 != 0; exec != f.Exec {
			t.Errorf("%s: mode %v", f.Path, fi.Mode())
		}
	}
	noStaging(t, root)
	var again Tree
	again.Add("skills/y/SKILL.md", []byte("new\n"), false)
	again.Add("agents/x.md", []byte("other\n"), false)
	_, err = again.Stage(root)
	var ex *ExistsError
	if !errors.As(err, &ex) || !slices.Equal(ex.Items, []string{"agents/x.md"}) {
		t.Fatalf("Stage over an existing item: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "skills")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused tree wrote skills/: %v", err)
	}
	noStaging(t, root)
}

// TestTreeCommitRace: an item that appears between Stage and Commit is
// not replaced, and the items placed before it are taken back out.
func TestTreeCommitRace(t *testing.T) {
	root := t.TempDir()
	var tr Tree
	tr.Add("plugins/x/PLUGIN.toml", []byte("mine\n"), false)
	tr.Add("skills/x/SKILL.md", []byte("mine\n"), false)
	s, err := tr.Stage(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "skills/x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "skills/x/SKILL.md"), []byte("theirs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = s.Commit()
	var ex *ExistsError
	if !errors.As(err, &ex) || !slices.Equal(ex.Items, []string{"skills/x"}) {
		t.Fatalf("Commit over an item that appeared: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "skills/x/SKILL.md")); string(b) != "theirs\n" {
		t.Errorf("their file is now %q", b)
	}
	if _, err := os.Stat(filepath.Join(root, "plugins/x")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("plugins/x was left in place: %v", err)
	}
	noStaging(t, root)
}

func TestTreeRefusesPaths(t *testing.T) {
	for _, p := range []string{"../x", "/abs", "a/../b", "a//b", "", "."} {
		var tr Tree
		tr.Add(p, nil, false)
		if _, err := tr.Stage(t.TempDir()); err == nil {
			t.Errorf("Stage accepted %q", p)
		}
	}
}

func noStaging(t *testing.T, root string) {
	t.Helper()
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), StagePrefix) {
			t.Errorf("staging directory left: %s", e.Name())
		}
	}
}

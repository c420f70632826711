//go:build linux

package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWalkSource holds the walk to what it claims to do: every directory
// listed, every file counted once, the manifests decoded and only the
// members' Markdown read, no symlink followed.
func TestWalkSource(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{
		"plugins/p/PLUGIN.toml":               "schema_version = 1\n[plugin]\nname = \"p\"\n",
		"plugins/p/tools/deep/run.sh":         "#!/bin/sh\n",
		"plugins/p/NOTES.md":                  "not a member\n",
		"skills/s/SKILL.md":                   "---\nname: s\n---\n",
		"skills/s/references/notes.md":        "not a member either\n",
		"skills/s/scripts/a.py":               "",
		"agents/a.md":                         "---\nname: a\n---\n",
		"instructions/i.md":                   "Be brief.\n",
		"elsewhere/not-walked.md":             "outside the top folders\n",
		"plugins/q/PLUGIN.toml":               "schema_version = 1\n",
		"plugins/q/sub/subsub/subsubsub/x.md": "",
	}
	for name, text := range files {
		path := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../../elsewhere", filepath.Join(src, "skills/s/link")); err != nil {
		t.Fatal(err)
	}
	w, err := walkSource(src)
	if err != nil {
		t.Fatal(err)
	}
	// plugins, p, p/tools, p/tools/deep, q, q/sub, q/sub/subsub,
	// q/sub/subsub/subsubsub, skills, s, s/references, s/scripts, agents,
	// instructions.
	if w.dirs != 14 {
		t.Errorf("listed %d directories, want 14", w.dirs)
	}
	// All but the two manifests and the one outside the top folders.
	if w.files != 8 {
		t.Errorf("counted %d files, want 8", w.files)
	}
	if w.manifests != 2 || w.keys != 3 {
		t.Errorf("decoded %d manifests of %d top-level keys, want 2 of 3", w.manifests, w.keys)
	}
	member := len(files["skills/s/SKILL.md"]) + len(files["agents/a.md"]) + len(files["instructions/i.md"])
	if w.read != int64(member) {
		t.Errorf("read %d bytes of Markdown, want the members' %d", w.read, member)
	}
}

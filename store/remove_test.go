package store

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestRemoveOwnedKept removes what dalo wrote for a package and lists
// what it kept: files the user changed, a skill directory holding the
// user's files, and files whose removal failed.
func TestRemoveOwnedKept(t *testing.T) {
	dir := t.TempDir()
	write := func(p, data string) string {
		t.Helper()
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return sha256Hex([]byte(data))
	}
	skill := func(name string) OwnedTree {
		p := filepath.Join(dir, "skills", name)
		return OwnedTree{Ref: "skill:" + name, Path: p, Files: map[string]string{
			"SKILL.md":     write(filepath.Join(p, "SKILL.md"), "skill "+name),
			"ref/notes.md": write(filepath.Join(p, "ref", "notes.md"), "notes"),
		}}
	}
	clean, stuck, shared := skill("clean"), skill("stuck"), skill("shared")
	write(filepath.Join(shared.Path, "mine.md"), "the user's")
	agentPath := filepath.Join(dir, "agents", "helper.md")
	agent := OwnedTree{Ref: "agent:helper", Path: agentPath, Files: map[string]string{"": write(agentPath, "agent")}}
	edited := filepath.Join(dir, "agents", "edited.md")
	editedAgent := OwnedTree{Ref: "agent:edited", Path: edited, Files: map[string]string{"": write(edited, "agent")}}
	write(edited, "the user's version")

	failing := filepath.Join(stuck.Path, "ref", "notes.md")
	removeFile = func(p string) error {
		if p == failing {
			return &os.PathError{Op: "remove", Path: p, Err: syscall.EPERM}
		}
		return os.Remove(p)
	}
	defer func() { removeFile = os.Remove }()

	kept := removeOwnedKept(&InstalledPackage{Skills: []OwnedTree{clean, stuck, shared}, Agents: []OwnedTree{agent, editedAgent}})
	want := []string{
		edited + " (changed since dalo wrote it)",
		shared.Path + " (holds files dalo did not write)",
		failing + " (could not be removed: " + syscall.EPERM.Error() + ")",
	}
	slices.Sort(kept)
	slices.Sort(want)
	if !slices.Equal(kept, want) {
		t.Fatalf("kept:\n  %s\nwant:\n  %s", strings.Join(kept, "\n  "), strings.Join(want, "\n  "))
	}
	for _, gone := range []string{clean.Path, agentPath, filepath.Join(shared.Path, "SKILL.md"), filepath.Join(stuck.Path, "SKILL.md")} {
		if _, err := os.Lstat(gone); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there: %v", gone, err)
		}
	}
	for _, stays := range []string{failing, edited, filepath.Join(shared.Path, "mine.md")} {
		if _, err := os.Lstat(stays); err != nil {
			t.Errorf("%s: %v", stays, err)
		}
	}
}

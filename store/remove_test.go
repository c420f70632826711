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
// what it removed and what it kept, and why: files the user changed, a
// skill directory holding them or the user's own files, and files whose
// removal failed. A path is never both removed and kept.
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
	clean, stuck, shared, touched := skill("clean"), skill("stuck"), skill("shared"), skill("touched")
	write(filepath.Join(shared.Path, "mine.md"), "the user's")
	write(filepath.Join(touched.Path, "SKILL.md"), "the user's edit")
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

	removed, kept := removeOwned(&InstalledPackage{Skills: []OwnedTree{clean, stuck, shared, touched}, Agents: []OwnedTree{agent, editedAgent}})
	want := []string{
		edited + " (changed since dalo wrote it)",
		shared.Path + " (it holds files dalo did not write: mine.md)",
		failing + " (could not be removed: " + syscall.EPERM.Error() + ")",
		filepath.Join(touched.Path, "SKILL.md") + " (changed since dalo wrote it)",
		touched.Path + " (it holds the files kept above)",
	}
	wantRemoved := []string{
		clean.Path,
		agentPath,
		filepath.Join(stuck.Path, "SKILL.md"),
		filepath.Join(shared.Path, "SKILL.md"),
		filepath.Join(shared.Path, "ref", "notes.md"),
		filepath.Join(touched.Path, "ref", "notes.md"),
	}
	for _, l := range []struct {
		name      string
		got, want []string
	}{{"kept", kept, want}, {"removed", removed, wantRemoved}} {
		slices.Sort(l.got)
		slices.Sort(l.want)
		if !slices.Equal(l.got, l.want) {
			t.Errorf("%s:\n  %s\nwant:\n  %s", l.name, strings.Join(l.got, "\n  "), strings.Join(l.want, "\n  "))
		}
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

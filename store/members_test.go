package store

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestMoveTreeAcrossFileSystems: where a rename cannot move a member into
// the store (another file system), the tree is copied whole, files, modes,
// subdirectories and links, and the original is gone.
func TestMoveTreeAcrossFileSystems(t *testing.T) {
	defer func(r func(string, string) error) { renameTree = r }(renameTree)
	renameTree = func(string, string) error { return &os.LinkError{Op: "rename", Err: syscall.EXDEV} }
	dir := t.TempDir()
	from, to := filepath.Join(dir, "skills", "deploy"), filepath.Join(dir, "store", "revoked", "deploy")
	for name, mode := range map[string]os.FileMode{"SKILL.md": 0o644, "bin/run.sh": 0o755} {
		p := filepath.Join(from, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(name), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("SKILL.md", filepath.Join(from, "link")); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(to), 0o700)
	if err := moveTree(from, to); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(from); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", from, err)
	}
	for name, mode := range map[string]os.FileMode{"SKILL.md": 0o644, "bin/run.sh": 0o755} {
		p := filepath.Join(to, filepath.FromSlash(name))
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(p); string(b) != name || fi.Mode().Perm() != mode {
			t.Errorf("%s: %q, mode %v; want %q, %v", name, b, fi.Mode().Perm(), name, mode)
		}
	}
	if l, err := os.Readlink(filepath.Join(to, "link")); err != nil || l != "SKILL.md" {
		t.Errorf("link: %q, %v", l, err)
	}
}

package store

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dalo/plan"
)

// TestStageReuse alters a staged tree behind dalo's back, one way per case:
// Stage must not reuse it, but stage the approved files again, and the
// tree it returns must then hold exactly them, with their modes.
func TestStageReuse(t *testing.T) {
	for _, tc := range []struct {
		name  string
		alter func(dir string)
	}{
		{"extra-module", func(dir string) { os.WriteFile(filepath.Join(dir, "json.py"), []byte("import os\n"), 0o644) }},
		{"pycache", func(dir string) {
			os.Mkdir(filepath.Join(dir, "__pycache__"), 0o755)
			os.WriteFile(filepath.Join(dir, "__pycache__", "main.cpython-312.pyc"), []byte{0}, 0o644)
		}},
		{"empty-dir", func(dir string) { os.Mkdir(filepath.Join(dir, "lib", "extra"), 0o755) }},
		{"symlink", func(dir string) { os.Symlink("/etc/passwd", filepath.Join(dir, "lib", "link")) }},
		{"exec-bit", func(dir string) { os.Chmod(filepath.Join(dir, "lib", "util.py"), 0o555) }},
		{"changed", func(dir string) {
			os.Chmod(filepath.Join(dir, "main.py"), 0o755)
			os.WriteFile(filepath.Join(dir, "main.py"), []byte("print('changed')\n"), 0o755)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := t.TempDir()
			writeSized(t, src, "main.py", 12)
			writeSized(t, src, "lib/util.py", 7)
			os.Chmod(filepath.Join(src, "main.py"), 0o755)
			files, err := hashFiles(src, []string{"main.py", "lib/util.py"})
			if err != nil {
				t.Fatal(err)
			}
			s := &Store{Dir: t.TempDir()}
			t.Cleanup(func() { removeTree(s.path("staged")) })
			dir, err := s.Stage(src, files)
			if err != nil {
				t.Fatal(err)
			}
			if bad := verifyStaged(dir, files, true); len(bad) > 0 {
				t.Fatalf("freshly staged tree: %v", bad)
			}
			filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					os.Chmod(p, 0o755)
				}
				return nil
			})
			tc.alter(dir)
			if bad := verifyStaged(dir, files, true); len(bad) == 0 {
				t.Fatalf("altered tree verifies")
			}
			again, err := s.Stage(src, files)
			if err != nil || again != dir {
				t.Fatalf("Stage again: %s, %v; want %s", again, err, dir)
			}
			if bad := verifyStaged(again, files, true); len(bad) > 0 {
				t.Fatalf("restaged tree: %v", bad)
			}
			if err := plan.CheckTree(again, files); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(filepath.Join(again, "main.py")); err != nil || fi.Mode().Perm() != 0o555 {
				t.Fatalf("main.py: %v, %v; want mode 0555", fi, err)
			}
			if fi, err := os.Stat(again); err != nil || fi.Mode().Perm() != 0o555 || strings.Contains(again, plan.TempMark) {
				t.Fatalf("staged root %s: %v, %v", again, fi, err)
			}
		})
	}
}

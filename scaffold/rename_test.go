package scaffold

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestRenameNew: an item is renamed into place only where nothing is, not
// over a file, nor over a directory, even an empty one (which rename(2)
// alone would replace), that appeared since the check.
func TestRenameNew(t *testing.T) {
	for _, c := range []struct {
		name  string
		there func(dst string) error
	}{
		{"nothing", nil},
		{"empty directory", func(dst string) error { return os.Mkdir(dst, 0o755) }},
		{"file", func(dst string) error { return os.WriteFile(dst, []byte("theirs\n"), 0o644) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			src, dst := filepath.Join(dir, "new"), filepath.Join(dir, "item")
			if err := os.Mkdir(src, 0o755); err != nil {
				t.Fatal(err)
			}
			if c.there != nil {
				if err := c.there(dst); err != nil {
					t.Fatal(err)
				}
			}
			err := renameNew(src, dst)
			if c.there == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, fs.ErrExist) {
				t.Errorf("renameNew over an existing %s: %v, want fs.ErrExist", c.name, err)
			}
			if _, err := os.Stat(src); err != nil {
				t.Errorf("the new item is gone: %v", err)
			}
		})
	}
}

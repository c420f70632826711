package store

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"dalo/engine"
)

// TestListFilesLimits checks what install copies of a skill directory: the
// package limits hold (a skill of another source was never walked by
// validation), and symlinks and special files are left out, as validation
// warns, instead of being followed or blocking on a FIFO.
func TestListFilesLimits(t *testing.T) {
	lim := engine.Limits{PackageEntries: 8, DirectoryDepth: 2, FileBytes: 100, PackageBytes: 150}
	tests := []struct {
		name    string
		build   func(t *testing.T, dir string)
		want    []string // files digested
		wantErr string
	}{
		{"regular files", func(t *testing.T, dir string) {
			writeSized(t, dir, "SKILL.md", 10)
			writeSized(t, dir, "ref/notes.md", 10)
		}, []string{"SKILL.md", "ref/notes.md"}, ""},
		{"symlink and FIFO left out", func(t *testing.T, dir string) {
			writeSized(t, dir, "SKILL.md", 10)
			if err := os.Symlink("/etc/passwd", filepath.Join(dir, "link")); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
				t.Skip("mkfifo:", err)
			}
		}, []string{"SKILL.md"}, ""},
		{"file over the limit", func(t *testing.T, dir string) {
			writeSized(t, dir, "SKILL.md", 101)
		}, nil, "more than the 100-byte file limit"},
		{"package over the limit", func(t *testing.T, dir string) {
			writeSized(t, dir, "SKILL.md", 80)
			writeSized(t, dir, "b.md", 80)
		}, nil, "holds more than 150 bytes"},
		{"too many entries", func(t *testing.T, dir string) {
			for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"} {
				writeSized(t, dir, n, 1)
			}
		}, nil, "more than 8 entries"},
		{"too deep", func(t *testing.T, dir string) {
			writeSized(t, dir, "a/b/c/SKILL.md", 1)
		}, nil, "nested deeper than 2 directories"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.build(t, dir)
			got, err := listFiles(dir, true, &lim)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("digested %v, want %v", got, tt.want)
			}
			for _, w := range tt.want {
				if _, ok := got[w]; !ok {
					t.Fatalf("digested %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func writeSized(t *testing.T, dir, rel string, size int) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Repeat("x", size)), 0o644); err != nil {
		t.Fatal(err)
	}
}

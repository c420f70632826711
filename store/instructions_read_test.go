package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readInstructionFile reads a regular file within the limit it is given
// (the selection's loaded limit) and refuses anything else, naming it.
func TestReadInstructionFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	exact := write("exact.md", "12345678")
	over := write("over.md", "123456789")
	link := filepath.Join(dir, "link.md")
	if err := os.Symlink(exact, link); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub.md")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file, want string // want: the content, or "error: " and part of the message
	}{
		{exact, "12345678"},
		{over, "error: " + over + " is larger than the 8-byte file limit"},
		{link, "error: reading " + link},
		{sub, "error: " + sub + " is a directory, not a regular file"},
		{filepath.Join(dir, "missing.md"), "error: reading " + filepath.Join(dir, "missing.md")},
	} {
		data, err := readInstructionFile(tc.file, 8)
		got := string(data)
		if err != nil {
			got = "error: " + err.Error()
		}
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: got %q, want %q", filepath.Base(tc.file), got, tc.want)
		}
	}
}

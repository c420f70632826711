package store

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
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

// TestReadUserFileOnce: a user's file is read into one buffer of its
// size. bytes.Buffer.ReadFrom wants 512 bytes free before each read, and
// a buffer of the size and a byte more was doubled and copied at the end
// of every large settings.json: a sixth of an install with one of 50 MB.
func TestReadUserFileOnce(t *testing.T) {
	name := filepath.Join(t.TempDir(), "settings.json")
	// 16 MiB less 100 bytes: what the allocator rounds a buffer of its
	// size and a byte more up to leaves less than 512 bytes free.
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<20)[:16<<20-100]
	if err := os.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, _, err := readUserFile(name, "", nil)
	runtime.ReadMemStats(&after)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes, %v; want the file's %d", len(got), err, len(data))
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > uint64(len(data))*5/4 {
		t.Errorf("reading %d bytes allocated %d", len(data), n)
	}
}

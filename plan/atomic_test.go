package plan

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteFileSyncs: WriteFile syncs the new bytes before they replace
// the old, and the directory after: without the first, a crash can leave
// the name pointing at an empty or partial file; without the second, the
// rename itself can be lost. A crash test cannot see either (the page
// cache survives a killed process), so the syncs are watched.
func TestWriteFileSyncs(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "grant.json")
	if err := os.WriteFile(name, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	var events []string
	syncFile = func(f *os.File) error {
		data, err := os.ReadFile(f.Name())
		cur, _ := os.ReadFile(name)
		if err != nil || string(data) != "new bytes" || string(cur) != "old" {
			t.Errorf("file synced holding %q (%v) while %s holds %q: want the whole new bytes, not yet in place", data, err, name, cur)
		}
		events = append(events, "file")
		return f.Sync()
	}
	syncDir = func(d string) error {
		if cur, _ := os.ReadFile(name); d == dir && string(cur) != "new bytes" {
			t.Errorf("directory synced before the rename: %s holds %q", name, cur)
		}
		if d == dir {
			events = append(events, "dir")
		}
		return SyncDir(d)
	}
	t.Cleanup(func() { syncFile, syncDir = (*os.File).Sync, SyncDir })
	if err := WriteFile(name, ".grant.json", []byte("new bytes"), 0o600, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Join(events, " ") != "file dir" {
		t.Errorf("WriteFile synced %v, want the file, then its directory", events)
	}
}

// TestWriteFileFails: a write that fails leaves the old bytes, and no
// temporary file behind; hold's error is the write's.
func TestWriteFileFails(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "grant.json")
	if err := os.WriteFile(name, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	held := os.ErrDeadlineExceeded
	if err := WriteFile(name, ".grant.json", []byte("new"), 0o600, func(*os.File) error { return held }); err != held {
		t.Fatalf("WriteFile with hold failing: %v, want hold's error", err)
	}
	syncFile = func(*os.File) error { return os.ErrClosed }
	t.Cleanup(func() { syncFile = (*os.File).Sync })
	if err := WriteFile(name, ".grant.json", []byte("new"), 0o600, nil); err != os.ErrClosed {
		t.Fatalf("WriteFile with the sync failing: %v, want its error", err)
	}
	entries, _ := os.ReadDir(dir)
	if data, _ := os.ReadFile(name); string(data) != "old" || len(entries) != 1 {
		t.Errorf("after failed writes %s holds %q beside %d entries, want the old bytes alone", name, data, len(entries)-1)
	}
}

// TestCreateFile: a file is created whole and synced, never over one.
func TestCreateFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "a.json")
	var synced []string
	syncFile = func(f *os.File) error {
		data, _ := os.ReadFile(f.Name())
		synced = append(synced, string(data))
		return f.Sync()
	}
	t.Cleanup(func() { syncFile = (*os.File).Sync })
	if err := CreateFile(name, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if strings.Join(synced, ",") != "{}" {
		t.Errorf("CreateFile synced %q, want the whole file once", synced)
	}
	if err := CreateFile(name, []byte("[]"), 0o644); !errors.Is(err, fs.ErrExist) {
		t.Errorf("CreateFile over a file: %v, want it to exist", err)
	}
}

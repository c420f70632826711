package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dalo/plan"
)

// TestWriteFileSyncs: writeFile syncs the new bytes before they replace
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
		return plan.SyncDir(d)
	}
	t.Cleanup(func() { syncFile, syncDir = (*os.File).Sync, plan.SyncDir })
	if err := writeFile(name, []byte("new bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	if strings.Join(events, " ") != "file dir" {
		t.Errorf("writeFile synced %v, want the file, then its directory", events)
	}
}

// TestWriteConfigChangedWhileEditing: a harness configuration that
// changed since dalo read it is not written over: the user may be editing
// it, and their edit wins. Created or deleted meanwhile counts too.
func TestWriteConfigChangedWhileEditing(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, now []byte // now nil: the file is gone
	}{
		{"edited", []byte(`{"model": "opus"}`), []byte(`{"model": "sonnet"}`)},
		{"created", nil, []byte(`{"model": "sonnet"}`)},
		{"deleted", []byte(`{"model": "opus"}`), nil},
	} {
		for _, data := range [][]byte{[]byte(`{"hooks": {}}`), nil} {
			file := filepath.Join(t.TempDir(), "settings.json")
			if tc.now != nil {
				if err := os.WriteFile(file, tc.now, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := writeConfig(file, tc.old, data)
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "changed while dalo was editing it") {
				t.Errorf("%s, writing %q: %v, want a ConfigError saying the file changed", tc.name, data, err)
			}
			got, rerr := os.ReadFile(file)
			if tc.now == nil && !errors.Is(rerr, os.ErrNotExist) || tc.now != nil && string(got) != string(tc.now) {
				t.Errorf("%s, writing %q: the file holds %q (%v), want the user's %q", tc.name, data, got, rerr, tc.now)
			}
		}
	}
	// Unchanged: written.
	file := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(file, []byte("{}"), 0o600)
	if err := writeConfig(file, []byte("{}"), []byte(`{"hooks": {}}`)); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(file); string(got) != `{"hooks": {}}` {
		t.Errorf("unchanged file: holds %q after writeConfig", got)
	}
}

// TestWriteFileRenameFails: a write whose rename fails (here a directory
// is where the file goes) is an error, not a success that wrote nothing,
// and leaves no temporary file behind.
func TestWriteFileRenameFails(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "grant.json")
	if err := os.MkdirAll(filepath.Join(name, "held"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(name, []byte("{}\n"), 0o600); err == nil || !strings.Contains(err.Error(), "writing "+name) {
		t.Fatalf("writeFile over a directory: %v, want its error", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != "grant.json" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("the directory holds %q, want only grant.json", names)
	}
}

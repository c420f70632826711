package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dalo/hooksfile"
)

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
			var ce *hooksfile.Error
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "changed while dalo was editing it") {
				t.Errorf("%s, writing %q: %v, want a hooksfile.Error saying the file changed", tc.name, data, err)
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

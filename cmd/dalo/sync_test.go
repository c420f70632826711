package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dalo/project"
	"dalo/store"
)

// TestSyncUndoSaysWhatItCouldNot: when sync takes back the sources it
// registered (a refusal, a lock that does not hold, a failed approval)
// and cannot, the user is told which and why, rather than left with a
// registry sync half changed and an exit status that says only "refused".
func TestSyncUndoSaysWhatItCouldNot(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"agents/plugins", "agents/skills", "agents/instructions", "agents/agents"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s, err := store.Open(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	undo, err := registerLocked(s, root, []project.LockedSource{{ID: "local", Path: "agents"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.LookupSource("local"); err != nil {
		t.Fatalf("registerLocked did not register the source: %v", err)
	}
	// The registry can no longer be read: taking the source back fails.
	if err := os.WriteFile(filepath.Join(s.Dir, "sources.json"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = undo()
	if err == nil {
		t.Fatal("undo could not take source local back, and said nothing")
	}
	if !strings.Contains(err.Error(), "taking back source local, which sync registered: ") {
		t.Errorf("undo's error does not say what it could not take back: %v", err)
	}
	// A registry that reads: undo takes the source back, and says nothing.
	if err := os.Remove(filepath.Join(s.Dir, "sources.json")); err != nil {
		t.Fatal(err)
	}
	undo, err = registerLocked(s, root, []project.LockedSource{{ID: "local", Path: "agents"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := undo(); err != nil {
		t.Fatalf("undo: %v", err)
	}
	if _, err := s.LookupSource("local"); err == nil {
		t.Error("undo left source local registered")
	}
}

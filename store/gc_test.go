package store

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"dalo/plan"
)

// Digests of staged trees in the collector's tests.
var (
	usedTree   = strings.Repeat("a", 64)
	unusedTree = strings.Repeat("b", 64)
)

// gcStore is a store with two staged trees, read-only as staging leaves
// them, and an install record of provider naming the first.
func gcStore(t *testing.T, provider string) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.Lock() // an empty store: creates it and its dispatch lock
	if err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	for _, d := range []string{usedTree, unusedTree} {
		dir := s.StagedDir(d)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\n"), 0o555); err != nil {
			t.Fatal(err)
		}
		os.Chmod(dir, 0o555)
	}
	in := &Installed{Schema: 1, Provider: provider, Packages: []InstalledPackage{{Package: "company:kit", Source: "company", Staged: []string{usedTree}}}}
	if err := s.putInstalled(in); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeTree(s.path("staged")) })
	return s
}

// staged lists the staged trees left.
func staged(t *testing.T, s *Store) []string {
	t.Helper()
	ents, err := os.ReadDir(s.path("staged"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// The collector keeps what any install record names, whether or not this
// dalo still has a table for its provider, and deletes nothing when it
// cannot read every record.
func TestGCStagedInstallRecords(t *testing.T) {
	tests := []struct {
		name     string
		provider string               // of the install record naming usedTree
		spoil    func(s *Store) error // then, before the next write
		want     []string
	}{
		{"known provider", "claude", nil, []string{usedTree}},
		{"provider without a table", "retired-harness", nil, []string{usedTree}},
		{"corrupt record", "claude", func(s *Store) error {
			return os.WriteFile(s.installsPath("retired-harness"), []byte("{"), 0o600)
		}, []string{usedTree, unusedTree}},
		{"unreadable installs", "claude", func(s *Store) error {
			if err := os.Rename(s.path("installs"), s.path("installs.old")); err != nil {
				return err
			}
			return os.WriteFile(s.path("installs"), nil, 0o600)
		}, []string{usedTree, unusedTree}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := gcStore(t, tt.provider)
			if tt.spoil != nil {
				if err := tt.spoil(s); err != nil {
					t.Fatal(err)
				}
			}
			l, err := s.Lock()
			if err != nil {
				t.Fatal(err)
			}
			err = s.gcStaged()
			l.Unlock()
			if got := staged(t, s); !slices.Equal(got, tt.want) {
				t.Fatalf("staged trees left: %v, want %v", got, tt.want)
			}
			if tt.spoil != nil && err == nil {
				t.Fatal("gcStaged: no error, with install records it cannot read")
			}
			if tt.spoil == nil && err != nil {
				t.Fatal(err)
			}
		})
	}
}

// What is installed is what the install records say: a provider whose
// table is gone still has its packages, for the source check and doctor.
func TestInstalledProviders(t *testing.T) {
	s := gcStore(t, "retired-harness")
	os.WriteFile(filepath.Join(s.path("installs"), ".claude.json.dalo-tmp-123"), []byte("{"), 0o600)
	os.WriteFile(filepath.Join(s.path("installs"), "notes.txt"), nil, 0o600)
	got, err := s.InstalledProviders()
	if err != nil || !slices.Equal(got, []string{"retired-harness"}) {
		t.Fatalf("InstalledProviders: %v, %v; want [retired-harness]", got, err)
	}

	src := t.TempDir()
	if _, err := s.AddSource("company", src, ""); err != nil {
		t.Fatal(err)
	}
	err = s.RemoveSource("company")
	if err == nil || !strings.Contains(err.Error(), "company:kit installed on retired-harness") {
		t.Fatalf("RemoveSource of a source with a package installed: %v", err)
	}

	var found bool
	findings, err := s.Doctor(DoctorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		if f.Subject == "retired-harness" && f.Status == "problem" {
			found = true
		}
		if f.Subject == "staged "+usedTree {
			t.Errorf("doctor: %s: %s", f.Subject, f.Message)
		}
	}
	if !found {
		t.Fatal("doctor says nothing of the install record of retired-harness")
	}
}

// A dispatch that read the plan before a writer switched it may still run
// handlers from a tree the switch left unused: while it holds its shared
// lock, writers keep every staged tree; the first write after it released
// collects the unused one.
func TestGCStagedWaitsForDispatch(t *testing.T) {
	s := gcStore(t, "claude")
	release := plan.HoldDispatch(s.Dir)
	l, err := s.Lock() // a writer's collection, as every write starts
	if err != nil {
		t.Fatal(err)
	}
	if err := s.gcStaged(); err != nil { // as install and remove end
		t.Fatal(err)
	}
	l.Unlock()
	if got, want := staged(t, s), []string{usedTree, unusedTree}; !slices.Equal(got, want) {
		t.Fatalf("while a dispatch runs, staged trees left: %v, want %v", got, want)
	}
	release()
	l, err = s.Lock()
	if err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	if got, want := staged(t, s), []string{usedTree}; !slices.Equal(got, want) {
		t.Fatalf("after the dispatch, staged trees left: %v, want %v", got, want)
	}
}

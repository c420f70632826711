package project

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func diagStrings[T interface{ String() string }](ds []T) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.String()
	}
	return out
}

// TestDrift: what dalo.toml says and the lock does not, found without a
// fetch, each at the lock's field.
func TestDrift(t *testing.T) {
	l, err := ParseLock([]byte(sampleLockText))
	if err != nil {
		t.Fatal(err)
	}
	same := &Project{
		Sources:  []Source{{ID: "local", Path: "tools/agents"}, {ID: "team", Git: "https://example.com/team/agent-packages.git", Ref: "main"}},
		Packages: []Package{{Source: "team", Name: "guard", Providers: []string{"codex", "claude"}}, {Source: "local", Name: "notes", Providers: []string{"claude"}}},
	}
	if d := Drift(same, l); len(d) != 0 {
		t.Fatalf("Drift of the project the lock was made from: %v", diagStrings(d))
	}
	moved := &Project{
		Sources:  []Source{{ID: "team", Git: "https://example.com/team/agent-packages.git", Ref: "release"}, {ID: "new", Path: "x"}},
		Packages: []Package{{Source: "team", Name: "guard", Providers: []string{"claude"}}, {Source: "new", Name: "n", Providers: []string{"claude"}}},
	}
	want := []string{
		"dalo.lock: error E116: package new:n of dalo.toml is not locked: run 'dalo lock'",
		"dalo.lock: error E116: source new of dalo.toml is not locked: run 'dalo lock'",
		"dalo.lock:7:3: error E116 source[0]: source local is locked, and dalo.toml no longer declares it: run 'dalo lock'",
		"dalo.lock:11:3: error E116 source[1]: source team is locked as git https://example.com/team/agent-packages.git ref main, and dalo.toml now declares git https://example.com/team/agent-packages.git ref release: run 'dalo lock'",
		"dalo.lock:17:3: error E116 package[0]: package local:notes is locked, and dalo.toml no longer lists it: run 'dalo lock'",
		"dalo.lock:30:13: error E116 package[1].providers: package team:guard is locked for claude, codex, and dalo.toml now asks for claude: run 'dalo lock'",
	}
	if got := diagStrings(Drift(moved, l)); !slices.Equal(got, want) {
		t.Errorf("Drift:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCompareAndChanges: a lock against what its pins hold now, each
// difference at the lock's field, and the same difference as Changes
// prints it.
func TestCompareAndChanges(t *testing.T) {
	l, err := ParseLock([]byte(sampleLockText))
	if err != nil {
		t.Fatal(err)
	}
	now, _ := ParseLock([]byte(sampleLockText))
	if d := Compare(l, now); len(d) != 0 {
		t.Fatalf("Compare of a lock with itself: %v", diagStrings(d))
	}
	if c := Changes(l, now); len(c) != 0 {
		t.Fatalf("Changes of a lock to itself: %v", c)
	}
	now.Sources[1].Commit = strings.Repeat("b", 40)
	g := &now.Packages[1]
	g.Version = "1.3.0"
	g.Grants[1].Digest = strings.Repeat("4", 64) // claude hook gate on claude@2.1.332
	g.Grants = slices.Delete(g.Grants, 3, 4)     // codex tool check
	g.Grants = append(g.Grants, LockedGrant{ID: "claude+team+guard+skill+lint", Digest: strings.Repeat("5", 64), Tables: []string{"claude@2.1.332"}})
	wantCompare := []string{
		"dalo.lock:15:10: error E116 source[1].commit: source team is locked at aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, and https://example.com/team/agent-packages.git resolved to bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
		"dalo.lock:26:3: error E116 package[1]: package team:guard asks for grant claude+team+guard+skill+lint on claude@2.1.332 (555555555555), which the lock does not hold",
		"dalo.lock:29:11: error E116 package[1].version: package team:guard is locked at version \"1.2.0\", and its manifest declares \"1.3.0\"",
		"dalo.lock:39:10: error E116 package[1].grant[1].digest: grant claude+team+guard+hook+gate binds 444444444444 on claude@2.1.332, not the locked 222222222222",
		"dalo.lock:48:6: error E116 package[1].grant[3].id: grant codex+team+guard+tool+check on codex@0.147.0, codex@0.171.0 is locked, and package team:guard no longer asks for it there",
	}
	if got := diagStrings(Compare(l, now)); !slices.Equal(got, wantCompare) {
		t.Errorf("Compare:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantCompare, "\n"))
	}
	wantChanges := []string{
		"source team: aaaaaaaaaaaa -> bbbbbbbbbbbb",
		"team:guard: version 1.2.0 -> 1.3.0",
		"team:guard: claude hook:gate 222222222222 -> 444444444444 on claude@2.1.332",
		"team:guard: claude skill:lint added (555555555555)",
		"team:guard: codex tool:check removed (was 111111111111)",
	}
	if got := Changes(l, now); !slices.Equal(got, wantChanges) {
		t.Errorf("Changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantChanges, "\n"))
	}
}

// TestPathSourceStaysInside: a path source that a symlink takes out of
// the project is refused before anything of it is read.
func TestPathSourceStaysInside(t *testing.T) {
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(outside, "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "agents")); err != nil {
		t.Fatal(err)
	}
	p, err := Parse(root, []byte("[sources.local]\npath = \"agents\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Resolve(p, nil, Options{})
	if err == nil || !strings.Contains(err.Error(), "sources.local.path: agents leads out of the project") {
		t.Fatalf("Resolve = %v, want the path refused", err)
	}
	if _, err := Resolve(p, nil, Options{Update: true, Only: "local"}); err == nil || !strings.Contains(err.Error(), "source local is a directory of the project: it has no pin to move") {
		t.Errorf("Resolve --update local = %v", err)
	}
	if _, err := Resolve(p, nil, Options{Update: true, Only: "nope"}); err == nil || !strings.Contains(err.Error(), "dalo.toml declares no source nope") {
		t.Errorf("Resolve --update nope = %v", err)
	}
}

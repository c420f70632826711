package store

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"dalo/providers"
)

// verifiedQwen writes into s the local table 'dalo providers verify qwen'
// would write for Qwen Code 0.25.0, from the shipped 0.24.4 table, with a
// recording beside it; and a harness that prints that version, named with
// 'dalo providers use'. It returns the table's path.
func verifiedQwen(t *testing.T, s *Store) string {
	t.Helper()
	src, err := os.ReadFile("../providers/qwen/0.24.4.cue")
	if err != nil {
		t.Fatal(err)
	}
	table := strings.NewReplacer(`version: "0.24.4"`, `version: "0.25.0"`, `text: "0.24.4"`, `text: "0.25.0"`,
		"\ninstall:", "\nverified: {date: \"2026-12-02\", dalo: \"devel\"}\ninstall:").Replace(string(src))
	table = regexp.MustCompile(`"test: internal/live (\S+)"`).ReplaceAllString(table, `"verified: $1 2026-12-02"`)
	file := filepath.Join(s.LocalTablesDir(), "qwen", "0.25.0.cue")
	for p, data := range map[string]string{file: table, filepath.Join(s.LocalTablesDir(), "qwen", "0.25.0", "SessionStart.json"): "{}"} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return file
}

func useHarness(t *testing.T, s *Store, name, output string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho '"+output+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ts, err := s.Tables()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.UseHarness(ts, name, bin); err != nil {
		t.Fatal(err)
	}
}

// A store without local tables answers with the tables dalo ships, as
// they are; one with a table verify wrote adds it, and install finds it
// for the harness that reports its version.
func TestStoreTables(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	shipped, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	if ts, err := s.Tables(); err != nil || ts != shipped {
		t.Fatalf("Tables() = %p, %v; want the shipped tables %p", ts, err, shipped)
	}
	useHarness(t, s, "qwen", "0.25.0")
	var nt *NoTableError
	if _, _, err := s.HarnessTable(shipped, "qwen"); !errors.As(err, &nt) || !strings.Contains(err.Error(), "prove this version on this machine with 'dalo providers verify qwen'") {
		t.Errorf("no table: error %v, want a *NoTableError naming 'dalo providers verify qwen'", err)
	}

	verifiedQwen(t, s)
	s.forgetTables()
	ts, err := s.Tables()
	if err != nil {
		t.Fatal(err)
	}
	tb, h, err := s.HarnessTable(ts, "qwen")
	if err != nil {
		t.Fatal(err)
	}
	if tb.Key() != "qwen@0.25.0" || !tb.LocalTable() || h.Version != "0.25.0" {
		t.Errorf("HarnessTable = %s (local %v), harness %s", tb.Key(), tb.LocalTable(), h.Version)
	}
	if again, _ := s.Tables(); again != ts {
		t.Error("Tables read the local tables twice")
	}
}

// A broken local table of the version found is why install refuses it,
// named with its file, rather than that dalo has no table.
func TestStoreTablesBroken(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	file := verifiedQwen(t, s)
	if err := os.WriteFile(file, []byte("name: \"qwen\"\nversion: \"0.25.0\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	useHarness(t, s, "qwen", "0.25.0")
	ts, err := s.Tables()
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.HarnessTable(ts, "qwen")
	var nt *NoTableError
	if !errors.As(err, &nt) || nt.Broken == nil || !strings.Contains(err.Error(), "the local table of qwen@0.25.0 cannot be used: provider table "+file+" does not satisfy #Provider") {
		t.Errorf("error %v, want one naming the broken local table", err)
	}
	findings := localTableFindings(ts)
	if len(findings) != 1 || findings[0].Status != StatusProblem || findings[0].Subject != "local table qwen@0.25.0" {
		t.Errorf("doctor's findings %+v", findings)
	}
}

// A local table of a version dalo ships is not used, and doctor notes it.
func TestStoreTablesShadowed(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	file := verifiedQwen(t, s)
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	shadowed := strings.NewReplacer(`version: "0.25.0"`, `version: "0.24.4"`, `text: "0.25.0"`, `text: "0.24.4"`).Replace(string(src))
	if err := os.WriteFile(filepath.Join(filepath.Dir(file), "0.24.4.cue"), []byte(shadowed), 0o600); err != nil {
		t.Fatal(err)
	}
	ts, err := s.Tables()
	if err != nil {
		t.Fatal(err)
	}
	if tb, ok := ts.Lookup("qwen", "0.24.4"); !ok || tb.LocalTable() {
		t.Errorf("qwen@0.24.4 is not the shipped table")
	}
	findings := localTableFindings(ts)
	if len(findings) != 1 || findings[0].Status != StatusNote || !strings.Contains(findings[0].Message, "this dalo ships a table for qwen@0.24.4, which it uses instead of "+filepath.Join(filepath.Dir(file), "0.24.4.cue")) {
		t.Errorf("doctor's findings %+v", findings)
	}
	// It goes at any time, installed or not: the shipped table is used.
	if err := s.putInstalled(&Installed{Schema: 1, Provider: "qwen", Version: "0.24.4", Packages: []InstalledPackage{{Package: "company:kit"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RemoveLocalTable("qwen", "0.24.4"); err != nil {
		t.Errorf("removing the shadowed table: %v", err)
	}
}

// Remove takes a local table and its recordings away, and the directories
// left empty; it refuses while an install was planned from it.
func TestRemoveLocalTable(t *testing.T) {
	none := &Store{Dir: filepath.Join(t.TempDir(), "store")}
	if _, err := none.RemoveLocalTable("qwen", "0.25.0"); !errors.Is(err, ErrNoLocalTable) {
		t.Errorf("no store: error %v, want ErrNoLocalTable", err)
	}
	if _, err := os.Stat(none.Dir); !os.IsNotExist(err) {
		t.Errorf("removing nothing made the store: %v", err)
	}
	s := &Store{Dir: t.TempDir()}
	file := verifiedQwen(t, s)
	if _, err := s.RemoveLocalTable("qwen", "0.26.0"); !errors.Is(err, ErrNoLocalTable) {
		t.Errorf("absent: error %v, want ErrNoLocalTable", err)
	}
	for _, bad := range [][2]string{{"qwen", "../x"}, {"", "0.25.0"}, {"qwen/x", "1"}, {"..", "plans"}, {".", "qwen"}, {"nosuch", "1.0"}} {
		if _, err := s.RemoveLocalTable(bad[0], bad[1]); err == nil {
			t.Errorf("RemoveLocalTable(%q, %q) accepted", bad[0], bad[1])
		}
	}
	// A name that is no harness never reaches outside the local tables.
	if err := os.MkdirAll(filepath.Join(s.Dir, "plans"), 0o755); err != nil {
		t.Fatal(err)
	}
	s.RemoveLocalTable("..", "plans")
	s.RemoveLocalTable(".", "qwen")
	if _, err := os.Stat(filepath.Join(s.Dir, "plans")); err != nil {
		t.Errorf("RemoveLocalTable(\"..\", \"plans\") removed the store's plans: %v", err)
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("RemoveLocalTable(\".\", \"qwen\") removed qwen's tables: %v", err)
	}

	in := &Installed{Schema: 1, Provider: "qwen", Version: "0.25.0", Packages: []InstalledPackage{{Package: "company:kit"}}}
	if err := s.putInstalled(in); err != nil {
		t.Fatal(err)
	}
	var inUse *LocalTableInUseError
	if _, err := s.RemoveLocalTable("qwen", "0.25.0"); !errors.As(err, &inUse) || !strings.Contains(err.Error(), "qwen@0.25.0: the install of company:kit was planned from this table") {
		t.Errorf("in use: error %v", err)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("refused, yet: %v", err)
	}

	in.Version = "0.24.4"
	if err := s.putInstalled(in); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Tables(); err != nil { // read once before: remove must make it read again
		t.Fatal(err)
	}
	removed, err := s.RemoveLocalTable("qwen", "0.25.0")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{file, strings.TrimSuffix(file, ".cue")}; strings.Join(removed, "\n") != strings.Join(want, "\n") {
		t.Errorf("removed %q, want %q", removed, want)
	}
	if _, err := os.Stat(s.LocalTablesDir()); !os.IsNotExist(err) {
		t.Errorf("%s left behind: %v", s.LocalTablesDir(), err)
	}
	if ts, _ := s.Tables(); func() bool { _, ok := ts.Lookup("qwen", "0.25.0"); return ok }() {
		t.Error("the removed table is still used")
	}
}

// verify writes a local table and its recordings under the store's lock:
// while another writer (a remove, another verify) holds it, nothing is
// written; once released, the recordings and then the table are there.
func TestWriteLocalTableLocks(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	l, err := s.Lock()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	var file string
	go func() {
		var err error
		file, err = s.WriteLocalTable("qwen", "0.25.0", []byte("// table\n"), func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "harness.stdout"), []byte("ran\n"), 0o644)
		})
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("WriteLocalTable returned while the store was locked (err %v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := os.Stat(filepath.Join(s.LocalTablesDir(), "qwen")); !os.IsNotExist(err) {
		t.Errorf("wrote under another writer's lock: %v", err)
	}
	l.Unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "// table\n" {
		t.Errorf("table %s: %q (err %v)", file, b, err)
	}
	if _, err := os.Stat(filepath.Join(s.LocalTablesDir(), "qwen", "0.25.0", "harness.stdout")); err != nil {
		t.Errorf("recordings: %v", err)
	}
	for _, bad := range [][2]string{{"qwen", "../x"}, {"..", "plans"}, {"", "1"}} {
		if _, err := s.WriteLocalTable(bad[0], bad[1], nil, func(string) error { return nil }); err == nil {
			t.Errorf("WriteLocalTable(%q, %q) accepted", bad[0], bad[1])
		}
	}
}

package plan

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestStopPasses records, reads and clears one session's count, and
// checks that a write leaves no temporary file and removes the counts no
// session wrote for a day.
func TestStopPasses(t *testing.T) {
	home := t.TempDir()
	if n, err := StopPasses(home, "codex", "s1"); n != 0 || err != nil {
		t.Fatalf("nothing recorded: %d, %v; want 0, nil", n, err)
	}
	for _, n := range []int{1, 2, 3} {
		if err := SetStopPasses(home, "codex", "s1", n); err != nil {
			t.Fatal(err)
		}
		if got, err := StopPasses(home, "codex", "s1"); got != n || err != nil {
			t.Fatalf("after recording %d: %d, %v", n, got, err)
		}
	}
	// Sessions and providers are counted apart.
	if n, _ := StopPasses(home, "claude", "s1"); n != 0 {
		t.Errorf("claude s1 = %d, want 0: counted with codex s1", n)
	}
	if n, _ := StopPasses(home, "codex", "s2"); n != 0 {
		t.Errorf("codex s2 = %d, want 0: counted with s1", n)
	}
	dir := filepath.Join(home, StopsDir, "codex")
	stale := filepath.Join(dir, "stale")
	tmp := filepath.Join(dir, "."+TempMark+"left")
	fresh := filepath.Join(dir, "fresh")
	for _, f := range []string{stale, tmp, fresh} {
		if err := os.WriteFile(f, []byte("1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-25 * time.Hour)
	for _, f := range []string{stale, tmp} {
		if err := os.Chtimes(f, old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := SetStopPasses(home, "codex", "s2", 1); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
		if strings.Contains(e.Name(), TempMark) {
			t.Errorf("temporary file %s left", e.Name())
		}
	}
	if len(names) != 3 || !slices.Contains(names, "fresh") || slices.Contains(names, "stale") {
		t.Errorf("after a write the directory holds %q, want fresh and the counts of s1 and s2", names)
	}
	if err := SetStopPasses(home, "codex", "s1", 0); err != nil {
		t.Fatal(err)
	}
	if n, err := StopPasses(home, "codex", "s1"); n != 0 || err != nil {
		t.Errorf("after clearing: %d, %v; want 0, nil", n, err)
	}
	if err := SetStopPasses(home, "codex", "never-written", 0); err != nil {
		t.Errorf("clearing a count never written: %v", err)
	}
}

// TestStopPassesDurable: a count is synced before it replaces the old one,
// and a failed sync records nothing.
func TestStopPassesDurable(t *testing.T) {
	home := t.TempDir()
	var synced []string
	syncFile = func(f *os.File) error {
		data, err := os.ReadFile(f.Name())
		synced = append(synced, filepath.Base(f.Name())+":"+string(data))
		return err
	}
	syncDir = func(dir string) error {
		data, err := os.ReadFile(stopsFile(home, "codex", "s1"))
		synced = append(synced, "dir "+filepath.Base(dir)+":"+string(data))
		return err
	}
	t.Cleanup(func() { syncFile, syncDir = (*os.File).Sync, SyncDir })
	if err := SetStopPasses(home, "codex", "s1", 3); err != nil {
		t.Fatal(err)
	}
	if len(synced) != 2 || !strings.HasPrefix(synced[0], "."+TempMark) || !strings.HasSuffix(synced[0], ":3\n") || synced[1] != "dir codex:3\n" {
		t.Fatalf("synced %q, want the temporary file holding 3, then its directory once renamed", synced)
	}
	syncFile = func(*os.File) error { return errors.New("disk gone") }
	if err := SetStopPasses(home, "codex", "s1", 4); err == nil || !strings.Contains(err.Error(), "disk gone") {
		t.Fatalf("a failed sync: %v, want its error", err)
	}
	if n, err := StopPasses(home, "codex", "s1"); n != 3 || err != nil {
		t.Errorf("after a failed sync: %d, %v; want the old count 3", n, err)
	}
}

// TestStopPassesNegative: a file holding a negative number is not a count.
func TestStopPassesNegative(t *testing.T) {
	home := t.TempDir()
	if err := SetStopPasses(home, "codex", "s1", 1); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stopsFile(home, "codex", "s1"), []byte("-5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := StopPasses(home, "codex", "s1"); err == nil || !strings.Contains(err.Error(), "not a count") {
		t.Errorf("-5: %d, %v; want an error: not a count", n, err)
	}
}

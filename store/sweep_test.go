package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A writer killed half way leaves its temporary file beside a user's file
// (a kill -9 during instruction enable leaves .CLAUDE.md.dalo-tmp-* in the
// config directory): the next writer removes it, wherever dalo writes,
// but only once its writer is provably gone. Another store's writer may be
// writing the same directory now, and holds its temporary file's lock.
func TestSweepUserTemps(t *testing.T) {
	home := t.TempDir()
	claude := filepath.Join(home, ".claude")
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", claude)
	t.Setenv("CODEX_HOME", filepath.Join(home, ".codex"))
	if err := os.MkdirAll(claude, 0o755); err != nil {
		t.Fatal(err)
	}
	abandoned := filepath.Join(claude, ".CLAUDE.md.dalo-tmp-123")
	live := filepath.Join(claude, ".settings.json.dalo-tmp-456")
	mine := filepath.Join(claude, ".notes.md.dalo-tmp-789") // not a name dalo writes there
	for _, p := range []string{abandoned, live, mine} {
		if err := os.WriteFile(p, []byte("half"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	held, err := os.Open(live)
	if err != nil {
		t.Fatal(err)
	}
	if err := lockTemp(held); err != nil {
		t.Fatal(err)
	}
	s, err := Open(filepath.Join(home, "store"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.Lock()
	if err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	if _, err := os.Stat(abandoned); err == nil {
		t.Errorf("the abandoned %s was kept", abandoned)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the temporary file of a writer at work was removed: %v", err)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("a file of the user's was removed: %v", err)
	}
	held.Close() // the other writer is gone
	if l, err = s.Lock(); err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	if _, err := os.Stat(live); err == nil {
		t.Errorf("%s was kept after its writer was gone", live)
	}
}

// A long file name's temporary names are hashed, so that they fit in a
// file name: a skill selector may be as long as the file system allows.
func TestTempPrefixFits(t *testing.T) {
	long := string(make([]byte, 255))
	if p := tempPrefix(long); len(p)+len(".dalo-tmp-")+20 > 255 {
		t.Errorf("tempPrefix of a 255-byte name is %d bytes", len(p))
	}
	if got := tempPrefix("CLAUDE.md"); got != ".CLAUDE.md" {
		t.Errorf("tempPrefix(CLAUDE.md) = %q", got)
	}
}

// Doctor and plugin status read under the store's shared lock: while a
// writer holds it they wait, a bounded time, then say so; readers do not
// exclude each other.
func TestReadLock(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	if l, err := s.ReadLock(0); err != nil { // no store yet: nothing half done
		t.Fatal(err)
	} else {
		l.Unlock()
	}
	w, err := s.Lock()
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.ReadLock(50 * time.Millisecond)
	var busy *BusyError
	if !errors.As(err, &busy) || !strings.Contains(err.Error(), "another dalo command has held the store's lock") {
		t.Fatalf("ReadLock while a writer holds the lock: %v, want a BusyError", err)
	}
	w.Unlock()
	r1, err := s.ReadLock(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := s.ReadLock(0)
	if err != nil {
		t.Fatalf("a second reader: %v", err)
	}
	r1.Unlock()
	r2.Unlock()
}

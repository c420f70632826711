package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"dalo/plan"
	"dalo/providers"
)

// ErrNoLocalTable is wrapped by RemoveLocalTable's error when the store
// holds no local table of that version.
var ErrNoLocalTable = errors.New("no local table")

// LocalTableKeys lists the name@version of every local table file of the
// store, usable or not, from the file names alone: no CUE is evaluated.
func (s *Store) LocalTableKeys() []string {
	files, _ := filepath.Glob(filepath.Join(s.LocalTablesDir(), "*", "*.cue"))
	var out []string
	for _, f := range files {
		out = append(out, filepath.Base(filepath.Dir(f))+"@"+strings.TrimSuffix(filepath.Base(f), ".cue"))
	}
	return out
}

// A LocalTableInUseError says installed entries were planned from the
// local table remove was asked to take away.
type LocalTableInUseError struct {
	Key      string
	Packages []string
}

// Error names the table, the packages installed from it, and what to do.
func (e *LocalTableInUseError) Error() string {
	name, _, _ := strings.Cut(e.Key, "@")
	what := "dalo's entries"
	if len(e.Packages) > 0 {
		what = "the install of " + strings.Join(e.Packages, ", ")
	}
	return fmt.Sprintf("%s: %s was planned from this table, and doctor checks it against it: remove it first ('dalo plugin remove PACKAGE --provider %s'), or plan it for another version with 'dalo plugin install PACKAGE --provider %s@VERSION'", e.Key, what, name, name)
}

// RemoveLocalTable removes the local table of name@version that 'dalo
// providers verify' wrote, and the recordings of its run: what it removed,
// the table file first. A broken local table is removed the same way. It
// refuses, with *LocalTableInUseError, while an install of name was
// planned from that version's table and dalo ships none for it: the
// entries' dispatch plan would still work (it holds the native protocol),
// but doctor, update and remove could no longer check them against the
// table they were planned from. A version dalo now ships a table for goes
// at any time, since the shipped table is the one used.
func (s *Store) RemoveLocalTable(name, version string) ([]string, error) {
	key := name + "@" + version
	if name == "" || version == "" || strings.ContainsAny(name+version, `/\`) || strings.HasPrefix(version, ".") {
		return nil, fmt.Errorf("%s: want NAME@VERSION", key)
	}
	// Only a harness dalo ships tables for has local ones: any other name
	// ("..", ".") would name a directory outside them.
	shipped, err := providers.Load()
	if err != nil {
		return nil, err
	}
	if len(Versions(shipped, name)) == 0 {
		return nil, fmt.Errorf("%s: dalo has no tables for a harness named %q", key, name)
	}
	dir := filepath.Join(s.LocalTablesDir(), name)
	file := filepath.Join(dir, version+".cue")
	recordings := filepath.Join(dir, version)
	// Nothing to remove takes no lock, which would create the store.
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w %s in %s", ErrNoLocalTable, key, s.LocalTablesDir())
	}
	l, err := s.Lock()
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	if _, err := os.Lstat(file); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if _, rerr := os.Lstat(recordings); rerr != nil {
			return nil, fmt.Errorf("%w %s in %s", ErrNoLocalTable, key, s.LocalTablesDir())
		}
		file = "" // recordings left without their table
	}
	if _, ok := shipped.Lookup(name, version); !ok {
		in, err := s.Installed(name)
		if err != nil {
			return nil, err
		}
		if in.Version == version && (len(in.Packages) > 0 || len(in.Harness.Entries) > 0) {
			e := &LocalTableInUseError{Key: key}
			for _, ip := range in.Packages {
				e.Packages = append(e.Packages, ip.Package)
			}
			return nil, e
		}
	}
	var removed []string
	if file != "" {
		if err := os.Remove(file); err != nil {
			return nil, err
		}
		removed = append(removed, file)
	}
	if _, err := os.Lstat(recordings); err == nil {
		if err := removeTree(recordings); err != nil {
			return removed, err
		}
		removed = append(removed, recordings)
	}
	// The harness's directory goes when nothing is left in it, and the
	// local tables' directory with it.
	for _, d := range []string{dir, s.LocalTablesDir()} {
		if os.Remove(d) != nil {
			plan.SyncDir(d)
			break
		}
		plan.SyncDir(filepath.Dir(d))
	}
	s.forgetTables()
	return removed, nil
}

// WriteLocalTable writes the local table of name@version that 'dalo
// providers verify' drafted, and the recordings of its run beside it
// (record fills the directory it is given, which starts empty), under the
// store's lock: a remove or another verify of the same store waits, so
// that neither sees half of the other's table and recordings. It returns
// the table's file. The table is written last, atomically, so that a
// table never stands without its recordings.
func (s *Store) WriteLocalTable(name, version string, table []byte, record func(dir string) error) (string, error) {
	key := name + "@" + version
	if name == "" || version == "" || strings.ContainsAny(name+version, `/\`) || strings.HasPrefix(name, ".") || strings.HasPrefix(version, ".") {
		return "", fmt.Errorf("%s: want NAME@VERSION", key)
	}
	l, err := s.Lock()
	if err != nil {
		return "", err
	}
	defer l.Unlock()
	dir := filepath.Join(s.LocalTablesDir(), name)
	recordings := filepath.Join(dir, version)
	if err := os.RemoveAll(recordings); err != nil {
		return "", err
	}
	if err := os.MkdirAll(recordings, 0o755); err != nil {
		return "", err
	}
	if err := record(recordings); err != nil {
		return "", fmt.Errorf("recording the run of %s: %w", key, err)
	}
	file := filepath.Join(dir, version+".cue")
	if err := WriteFile(file, table, 0o644); err != nil {
		return "", err
	}
	return file, nil
}

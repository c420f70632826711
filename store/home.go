package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"dalo/store/plan"
)

// A Store is the state under one directory. Its methods that change state
// take the store's advisory lock; the ones that only read do not, since
// every file is replaced atomically.
type Store struct {
	Dir string
}

// Open returns the store at dir. It creates nothing: a store that does not
// exist yet reads as empty and is created by its first write. A path that
// exists but is not a directory is an error naming it.
func Open(dir string) (*Store, error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("store %s: %w", dir, err)
	case !fi.IsDir():
		return nil, fmt.Errorf("store %s: not a directory", dir)
	}
	return &Store{Dir: dir}, nil
}

func (s *Store) path(elem ...string) string {
	return filepath.Join(append([]string{s.Dir}, elem...)...)
}

// Lock takes the store's writer lock, creating the store and its dispatch
// lock if needed, and removes what a writer killed half way left behind:
// temporary files and directories are never part of the state, in the
// store or beside what dalo writes in the harness's directories.
func (s *Store) Lock() (*Lock, error) {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating store %s: %w", s.Dir, err)
	}
	l, err := lockFile(s.path("lock"))
	if err != nil {
		return nil, err
	}
	if err := s.makeDispatchLock(); err != nil {
		l.Unlock()
		return nil, err
	}
	for _, d := range []string{s.Dir, s.path("grants"), s.path("plans"), s.path("installs"), s.path("staged"), s.path(dispatchersDir)} {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if isTemp(e.Name()) {
				removeTree(filepath.Join(d, e.Name()))
			}
		}
	}
	s.sweepHarnessTemps()
	// Staged trees no installed package uses (a run killed between
	// recording a removal and unstaging leaves them) go too. Failing to
	// collect them does not stop this writer: gcStaged deletes nothing
	// unless it read every install record, and the command reports a
	// record it cannot read when it reads it.
	s.gcStaged()
	// So do dispatcher copies no entry calls (a run killed between
	// recording its new entries and collecting them leaves them).
	s.gcDispatchers()
	return l, nil
}

// sweepHarnessTemps removes the temporary files and directories a writer
// killed half way left beside what dalo writes in the harness's
// directories: a skill directory being copied, an agent file or the
// harness configuration being replaced. The harness might load a hidden
// skill copy. It removes only names dalo makes there, "." then the base
// name of a path an install record names then plan.TempMark, in the
// directory of that path: never anything else of the user's. A record it
// cannot read leaves its directories as they are.
func (s *Store) sweepHarnessTemps() {
	names, err := s.InstalledProviders()
	if err != nil {
		return
	}
	bases := map[string]map[string]bool{} // directory → base names dalo writes there
	add := func(p string) {
		if p == "" || !filepath.IsAbs(p) {
			return
		}
		d := filepath.Dir(p)
		if bases[d] == nil {
			bases[d] = map[string]bool{}
		}
		bases[d][filepath.Base(p)] = true
	}
	for _, p := range names {
		in, err := s.Installed(p)
		if err != nil {
			continue
		}
		add(in.Harness.File)
		for _, ip := range in.Packages {
			for _, o := range append(append([]OwnedTree(nil), ip.Skills...), ip.Agents...) {
				add(o.Path)
			}
		}
	}
	for d, bs := range bases {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		swept := false
		for _, e := range ents {
			base, _, ok := strings.Cut(strings.TrimPrefix(e.Name(), "."), plan.TempMark)
			if ok && strings.HasPrefix(e.Name(), ".") && bs[base] {
				if removeTree(filepath.Join(d, e.Name())) == nil {
					swept = true
				}
			}
		}
		if swept {
			plan.SyncDir(d)
		}
	}
}

// makeDispatchLock creates the file dispatches hold a shared lock on (see
// [plan.DispatchLock]) if it is missing, before this writer changes a plan:
// a dispatch that started before it existed could not hold it. It is never
// replaced, since a dispatch holds its lock on the file it opened.
func (s *Store) makeDispatchLock() error {
	name := s.path(plan.DispatchLock)
	fi, err := os.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return writeFile(name, nil, 0o644)
	case err != nil:
		return fmt.Errorf("dispatch lock: %w", err)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("dispatch lock %s is not a regular file (%s); remove it", name, fi.Mode().Type())
	}
	return nil
}

// isTemp says whether name is a temporary file of WriteFile or of staging.
func isTemp(name string) bool {
	return strings.Contains(name, plan.TempMark)
}

// removeTree removes a tree that staging made read-only.
func removeTree(dir string) error {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// CrashHook, when set, is called at each named step of a state change. Only
// the crash test sets it (in a _test.go file of the command), to kill the
// process there and prove that every step leaves the store consistent.
var CrashHook func(step string)

func step(name string) {
	if CrashHook != nil {
		CrashHook(name)
	}
}

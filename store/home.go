package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"dalo/hooktrust"
	"dalo/plan"
	"dalo/providers"
)

// A Store is the state under one directory. Its methods that change state
// take the store's advisory lock; the ones that only read do not, since
// every file is replaced atomically.
type Store struct {
	Dir string
	// Progress, when set, is told of work that can take seconds (a git
	// fetch) as it starts, in words ("fetching URL"); the function it
	// returns is called when that work ends. The CLI shows it on a
	// terminal.
	Progress func(what string) (done func())

	// TablesCache, when set, opens the cache that keeps the store's local
	// tables checked and decoded between commands (cmd/dalo's is
	// internal/cache); Tables opens it only when there are local tables,
	// and closes it once it has read them. It may return nil.
	TablesCache func() TablesCache

	tablesMu sync.Mutex
	tables   *providers.Tables // Tables, once read

	// project is the project scope this value of the store installs into,
	// removes from and checks (see [Store.InProject]); nil for the user's
	// own.
	project *projectScope
}

// A TablesCache is a providers.Cache whose answers are written when it is
// closed.
type TablesCache interface {
	providers.Cache
	Close()
}

// LocalTablesDir is where 'dalo providers verify' writes the local
// tables of this store: <name>/<version>.cue, the recordings of its run in
// <name>/<version>/.
func (s *Store) LocalTablesDir() string { return s.path(LocalTablesDir) }

// LocalTablesDir is the directory of the store's local tables.
const LocalTablesDir = "providers"

// Tables returns the provider tables the commands on this store install
// and explain with: the ones dalo ships and the local tables of
// LocalTablesDir (providers.WithLocalCache, with TablesCache), read once.
// Without local tables it costs a directory read; validation never uses
// it.
func (s *Store) Tables() (*providers.Tables, error) {
	s.tablesMu.Lock()
	defer s.tablesMu.Unlock()
	if s.tables != nil {
		return s.tables, nil
	}
	var c providers.Cache
	if s.TablesCache != nil && len(s.LocalTableKeys()) > 0 {
		if tc := s.TablesCache(); tc != nil {
			defer tc.Close()
			c = tc
		}
	}
	ts, err := providers.WithLocalCache(s.LocalTablesDir(), c)
	if err != nil {
		return nil, err
	}
	s.tables = ts
	return ts, nil
}

// forgetTables makes the next Tables read the local tables again.
func (s *Store) forgetTables() {
	s.tablesMu.Lock()
	s.tables = nil
	s.tablesMu.Unlock()
}

// working tells s.Progress that what starts, and returns what to call
// when it ends.
func (s *Store) working(what string) (done func()) {
	if s.Progress == nil {
		return func() {}
	}
	return s.Progress(what)
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
	dirs := []string{s.Dir, s.path("grants"), s.path(plan.PendingDir), s.path("plans"), s.path("installs"), s.path("staged"), s.path(dispatchersDir)}
	if scopes, err := s.projectScopes(); err == nil {
		for _, sc := range scopes {
			dirs = append(dirs, sc.scopePath(), sc.scopePath("plans"), sc.scopePath("installs"))
		}
	}
	for _, d := range dirs {
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
	// An update killed part way is finished or undone before anything
	// else reads the ledger.
	s.settlePending()
	// Staged trees no installed package uses (a run killed between
	// recording a removal and unstaging leaves them) go too. Failing to
	// collect them does not stop this writer: gcStaged deletes nothing
	// unless it read every install record, and the command reports a
	// record it cannot read when it reads it.
	s.gcStaged()
	// So do dispatcher copies no entry calls (a run killed between
	// recording its new entries and collecting them leaves them).
	s.gcDispatchers()
	// And git sources' repositories and snapshots no pin names.
	s.gcSources()
	return l, nil
}

// sweepHarnessTemps removes the temporary files and directories a writer
// killed half way left beside what dalo writes in the user's directories:
// a skill directory being copied, an agent file, an instruction target,
// the harness configuration or its trust file being replaced. The harness
// might load a hidden skill copy, and they are litter in the user's
// directory. It looks beside every file dalo writes or may write there:
// what an install record names, every instruction file it enabled a block
// in, and every file the provider tables name. It removes only names dalo
// makes there (tempName of the base name of such a file), never anything
// else of the user's, and only once their writer is provably gone: a
// writer holds an exclusive lock on its temporary file or directory while
// it exists, and another store's writer may be writing the same directory
// at this moment. A record it cannot read leaves its directories as they
// are.
func (s *Store) sweepHarnessTemps() {
	bases := map[string]map[string]bool{} // directory → temp prefixes of the names dalo writes there
	add := func(p string) {
		if p == "" || !filepath.IsAbs(p) {
			return
		}
		d := filepath.Dir(p)
		if bases[d] == nil {
			bases[d] = map[string]bool{}
		}
		bases[d][tempPrefix(filepath.Base(p))] = true
	}
	scopes, _ := s.allScopes()
	for _, sc := range scopes {
		names, err := sc.InstalledProviders()
		if err != nil {
			continue
		}
		for _, p := range names {
			in, err := sc.Installed(p)
			if err != nil {
				continue
			}
			add(in.Harness.File)
			for _, ip := range in.Packages {
				for _, o := range ip.owned() {
					add(o.Path)
				}
			}
		}
	}
	if recs, err := s.Instructions(); err == nil {
		for _, r := range recs {
			add(r.File)
		}
	}
	for _, p := range userFiles() {
		add(p)
	}
	sweepTemps(bases)
}

// sweepBeside removes the abandoned temporary files of file (a project's
// instruction file a writer was killed writing before any record named
// it), as sweepHarnessTemps does.
func sweepBeside(file string) {
	sweepTemps(map[string]map[string]bool{filepath.Dir(file): {tempPrefix(filepath.Base(file)): true}})
}

// sweepTemps removes, in each directory, the abandoned temporary files and
// directories whose names start with one of its prefixes.
func sweepTemps(bases map[string]map[string]bool) {
	for d, prefixes := range bases {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		swept := false
		for _, e := range ents {
			prefix, _, ok := strings.Cut(e.Name(), plan.TempMark)
			if ok && prefixes[prefix] && removeAbandoned(filepath.Join(d, e.Name())) {
				swept = true
			}
		}
		if swept {
			plan.SyncDir(d)
		}
	}
}

// userFiles are the files of the user's that the provider tables say dalo
// writes: each harness's hook file, trust file and user-wide instruction
// file, where the environment puts them now.
func userFiles() []string {
	ts, err := providers.Load()
	if err != nil {
		return nil
	}
	var out []string
	for _, t := range ts.All() {
		for _, l := range []providers.Location{t.Config.Hooks.Location, t.Config.Instructions} {
			if p, err := t.Path(l, os.Getenv); err == nil {
				out = append(out, p)
			}
		}
		if p, err := hooktrust.File(t, os.Getenv); err == nil && p != "" {
			out = append(out, p)
		}
	}
	return out
}

// tempPrefix is how the temporary names of a file or directory named base
// start: "." and base, or the hash of a base too long to leave room in a
// file name for the rest.
func tempPrefix(base string) string {
	if len(base) > 100 {
		base = plan.HashedName(base)
	}
	return "." + base
}

// removeAbandoned removes the temporary file or directory p if its writer
// is gone: it can take the exclusive lock its writer holds on it while it
// exists (lockTemp). It says whether it removed it.
func removeAbandoned(p string) bool {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := plan.Flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return false // a writer is at work
	}
	return removeTree(p) == nil
}

// lockTemp takes the exclusive lock on a temporary file or directory its
// writer holds until it is renamed into place or removed, so that a
// sweeper (removeAbandoned) can tell an abandoned one from one in use.
func lockTemp(f *os.File) error {
	return plan.Flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
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

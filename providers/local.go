package providers

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	defs "dalo/cue"
)

// Local tables are the tables `dalo providers verify` writes on the
// user's machine, for a harness version dalo ships no table for: the same
// #Provider, in <dir>/<name>/<version>.cue, with verified set and each
// claim that held citing verified: evidence. WithLocal adds them to the
// shipped tables for the commands that install and explain (install,
// review, approve, doctor, providers); validation never sees them, so a
// bare provider name means the same in CI as anywhere.

// A LocalError is a local table that could not be used: the file, as the
// user finds it, the name@version its path says, and why. A broken local
// table takes nothing from the others, and nothing from the shipped ones:
// commands report it where that version is asked for (see Broken).
type LocalError struct {
	File string
	Key  string // name@version, from the file's path
	Err  error
}

// Error is why the table cannot be used; it names the file.
func (e *LocalError) Error() string { return e.Err.Error() }

// Unwrap returns the error loading the table gave.
func (e *LocalError) Unwrap() error { return e.Err }

// LocalTable reports whether t is a local table, one WithLocal read from
// the user's machine rather than one dalo ships.
func (t *Table) LocalTable() bool { return t.local }

// WithLocal returns the shipped tables (Load) with the local tables in dir
// added: <dir>/<name>/<version>.cue. When dir holds none, it is Load's own
// value and costs a directory read: no CUE is evaluated. Otherwise each
// local table is compiled from CUE, as LoadFS compiles a table, and added
// unless
//
//   - it is broken (does not parse, does not satisfy #Provider, its path
//     and contents disagree), or lacks verified: a local table is one
//     verify proved, never a hand-made claim;
//   - it describes a harness dalo ships no table for, or speaks a native
//     protocol this build's dispatcher cannot (a native event no shipped
//     table of its harness names, another blocking exit status or
//     already-continued key): entries installed under it could not be
//     dispatched;
//
// in which case it is one of Broken's, the error naming its file (and,
// from CUE, the position). A shipped table of the same version wins: the
// local one is then Shadowed, and never read for anything. A local table
// never changes what a bare name means: Newest and Resolve("NAME") keep
// answering with the newest shipped version.
//
// Only the shipped tables' error is returned: one broken file in the
// user's store must not stop every command.
func WithLocal(dir string) (*Tables, error) { return WithLocalCache(dir, nil) }

// A Cache keeps local tables between runs, checked and decoded, so that a
// command reads a verified version without evaluating CUE. Get returns nil
// on a miss; Put may drop what it is given. Its answers must be of this
// dalo's build, which its rules and its Table type are part of: dalo's is
// internal/cache, one file per build.
type Cache interface {
	Get(key []byte) []byte
	Put(key, data []byte)
}

// localKeyVersion opens the key of a local table in a Cache: the table's
// path below the directory and its bytes' sha256 follow.
const localKeyVersion = "dalo local table 1"

// WithLocalCache is WithLocal, keeping in c (which may be nil) each local
// table #Provider accepted, decoded: a table whose bytes are unchanged is
// taken from it, and compiled from CUE only when a question needs the rules
// (Capability, MemberInstall outside what the table says itself). What
// admits a local table beside the shipped ones is checked every time.
func WithLocalCache(dir string, c Cache) (*Tables, error) {
	shipped, err := Load()
	if err != nil {
		return nil, err
	}
	if dir == "" {
		return shipped, nil
	}
	fsys := os.DirFS(dir)
	names, err := fs.Glob(fsys, "*/*.cue")
	if err != nil || len(names) == 0 {
		return shipped, nil
	}
	ts := &Tables{
		byKey:    maps.Clone(shipped.byKey),
		all:      slices.Clone(shipped.all),
		compiled: shipped.compiled,
		fromCUE:  shipped.fromCUE,
		memo:     map[string]Capability{},
	}
	// The rules are compiled once a table is not in the cache.
	type rules struct {
		ctx     *cue.Context
		provDef cue.Value
		local   *Tables
	}
	compile := sync.OnceValues(func() (rules, error) {
		ctx := cuecontext.New()
		root, err := defs.Load(ctx)
		if err != nil {
			return rules{}, err
		}
		return rules{ctx, root.LookupPath(cue.ParsePath(defs.Provider)), &Tables{
			byKey:     map[string]*Table{},
			capDef:    root.LookupPath(cue.ParsePath(defs.Capability)),
			memberDef: root.LookupPath(cue.ParsePath(defs.MemberInstall)),
			memo:      map[string]Capability{},
		}}, nil
	})
	// load compiles the table file from CUE.
	load := func(file, shown string) (*Table, error) {
		r, err := compile()
		if err != nil {
			return nil, err
		}
		return loadTable(r.ctx, r.provDef, fsys, file, shown)
	}
	var files, cached []string // the tables used, and those of them from c
	for _, file := range names {
		shown := filepath.Join(dir, filepath.FromSlash(file))
		key := path.Dir(file) + "@" + strings.TrimSuffix(path.Base(file), ".cue")
		var t *Table
		src, err := fs.ReadFile(fsys, file)
		ckey := []byte(localKeyVersion + "\x00" + file + "\x00" + digest(src))
		if err == nil && c != nil {
			if t = cachedTable(c.Get(ckey), shown); t != nil {
				cached = append(cached, file)
			}
		}
		if t == nil && err == nil {
			if t, err = load(file, shown); err == nil && c != nil {
				if b, err := json.Marshal(t); err == nil {
					c.Put(ckey, b)
				}
			}
		}
		if err == nil {
			err = shipped.admitLocal(t)
		}
		if err != nil {
			ts.broken = append(ts.broken, &LocalError{File: shown, Key: key, Err: err})
			continue
		}
		t.local = true
		if _, ok := ts.byKey[key]; ok {
			ts.shadowed = append(ts.shadowed, t)
			continue
		}
		files = append(files, file)
		ts.add(t)
	}
	ts.sort()
	// The local tables answer questions from the rules: those compiled
	// here from their own CUE values; those taken from the cache from the
	// same files compiled again, on the first question that needs it.
	ts.local = &Tables{byKey: map[string]*Table{}, memo: map[string]Capability{}}
	if len(cached) == 0 && len(files) > 0 {
		r, err := compile()
		if err != nil {
			return nil, err
		}
		ts.local = r.local
	} else if len(files) > 0 {
		ts.local.fromCUE = sync.OnceValues(func() (*Tables, error) {
			r, err := compile()
			if err != nil {
				return nil, err
			}
			for _, file := range files {
				t, err := load(file, filepath.Join(dir, filepath.FromSlash(file)))
				if err != nil {
					return nil, err
				}
				r.local.add(t)
			}
			return r.local, nil
		})
	}
	for _, t := range ts.all {
		if t.local {
			ts.local.add(t)
		}
	}
	return ts, nil
}

// cachedTable decodes a table a Cache kept, or returns nil.
func cachedTable(data []byte, shown string) *Table {
	if data == nil {
		return nil
	}
	t := &Table{}
	if json.Unmarshal(data, t) != nil {
		return nil
	}
	t.File = shown
	if t.compilePatterns() != nil {
		return nil
	}
	return t
}

// admitLocal says why the local table t cannot be used beside ts, the
// shipped tables, or nil.
func (ts *Tables) admitLocal(t *Table) error {
	if t.Verified == nil {
		return fmt.Errorf("provider table %s: no verified field: a local table is one 'dalo providers verify %s' wrote and says when it proved the version; run it again", t.File, t.Name)
	}
	var events []string
	var nearest *Table
	for _, s := range ts.all {
		if s.Name == t.Name {
			events = append(events, slices.Collect(maps.Keys(s.Events))...)
			nearest = s
		}
	}
	if nearest == nil {
		return fmt.Errorf("provider table %s: dalo ships no table for %s (it has %s): a local table adds a version of a harness dalo knows", t.File, t.Name, strings.Join(ts.names(), ", "))
	}
	for _, ev := range slices.Sorted(maps.Keys(t.Events)) {
		if !slices.Contains(events, ev) {
			return fmt.Errorf("provider table %s: events.%s: no table this dalo ships for %s names that native event, so its dispatcher could not answer it; a later dalo may", t.File, ev, t.Name)
		}
	}
	if t.Blocking.Exit != nearest.Blocking.Exit {
		return fmt.Errorf("provider table %s: blocking.exit: %d, where this dalo's dispatcher blocks %s with %d", t.File, t.Blocking.Exit, t.Name, nearest.Blocking.Exit)
	}
	if a, b := continuedKeys(t), continuedKeys(nearest); !maps.Equal(a, b) {
		return fmt.Errorf("provider table %s: the payload keys of workflow.already_continued (%v) differ from those this dalo's dispatcher reads for %s (%v)", t.File, a, t.Name, b)
	}
	return nil
}

// continuedKeys is the payload key of workflow.already_continued on each
// event of t that has one: what the dispatcher reads without a table.
func continuedKeys(t *Table) map[string]string {
	out := map[string]string{}
	for ev, e := range t.Events {
		if f, ok := e.Payload.Fields["workflow.already_continued"]; ok {
			out[ev] = f.Key
		}
	}
	return out
}

// names lists the harness names of ts, sorted.
func (ts *Tables) names() []string {
	var out []string
	for _, t := range ts.all {
		if !slices.Contains(out, t.Name) {
			out = append(out, t.Name)
		}
	}
	return out
}

// Broken returns the local tables WithLocal could not use, by file.
func (ts *Tables) Broken() []*LocalError { return slices.Clone(ts.broken) }

// BrokenFor returns the error of the broken local table of exactly
// name@version, or nil: what a command asked for that version says, rather
// than that dalo has no table.
func (ts *Tables) BrokenFor(name, version string) *LocalError {
	for _, e := range ts.broken {
		if e.Key == name+"@"+version {
			return e
		}
	}
	return nil
}

// Shadowed returns the local tables of a version dalo now ships a table
// for: the shipped one is used; the local one can be removed.
func (ts *Tables) Shadowed() []*Table { return slices.Clone(ts.shadowed) }

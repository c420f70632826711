package providers

import (
	"cmp"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/parser"

	defs "dalo/cue"
)

// The tables, one per harness version, in a directory per harness. A new
// harness version is a new file here and nothing else; so is a new harness
// (a new directory), since the table also carries the harness's native
// protocol that dispatch renders (install copies it into the plan).
//
//go:embed */*.cue
var embedded embed.FS

// Tables is every loaded provider table, with the means to answer
// #Capability and #MemberInstall on a table: the compiled rules (tables from LoadFS), or the
// answers compiled ahead of time (tables from Load).
type Tables struct {
	byKey     map[string]*Table
	all       []*Table // by name, then version, oldest first
	capDef    cue.Value
	memberDef cue.Value

	// compiled holds the answers Compile computed (tables from Load).
	compiled *compiled
	// fromCUE, for compiled tables, compiles the same tables from CUE; a
	// question outside the compiled domain asks them (see Capability).
	fromCUE func() (*Tables, error)

	mu   sync.Mutex
	memo map[string]Capability

	// local holds the local tables WithLocal added, compiled from CUE in
	// their own context: their questions go there.
	local    *Tables
	broken   []*LocalError
	shadowed []*Table
}

var loadEmbedded = sync.OnceValues(func() (*Tables, error) {
	return loadCompiled(compiledTables(), embedded)
})

// Load returns the tables embedded in the binary, loaded once per process.
// They come from compiled_tables.go, which go generate writes from the
// CUE tables and rules (see Compile), so that a command pays no CUE
// evaluation for them; if it does not match the embedded tables, Load
// compiles them from CUE instead. A broken table is an error naming its
// file.
func Load() (*Tables, error) { return loadEmbedded() }

// LoadFS loads the tables <name>/<version>.cue found in fsys. It compiles
// the rules of package dalo/cue, compiles each table in the same context,
// unifies it with #Provider and validates it concretely. The name and
// version in the path must equal those in the table. Compile and tests use
// it: a fixture version loads through the same path as the embedded ones.
func LoadFS(fsys fs.FS) (*Tables, error) {
	ts, _, err := compileTables(fsys, false)
	return ts, err
}

// loadShipped is LoadFS for the tables dalo ships, which never say they
// were verified on a user's machine (checkShipped).
func loadShipped(fsys fs.FS) (*Tables, error) {
	ts, _, err := compileTables(fsys, true)
	return ts, err
}

// compileTables is LoadFS, also returning the compiled rules. shipped
// says the tables are dalo's own, each checked by checkShipped.
func compileTables(fsys fs.FS, shipped bool) (*Tables, cue.Value, error) {
	ctx := cuecontext.New()
	root, err := defs.Load(ctx)
	if err != nil {
		return nil, cue.Value{}, err
	}
	provDef := root.LookupPath(cue.ParsePath(defs.Provider))
	ts := &Tables{
		byKey:     map[string]*Table{},
		capDef:    root.LookupPath(cue.ParsePath(defs.Capability)),
		memberDef: root.LookupPath(cue.ParsePath(defs.MemberInstall)),
		memo:      map[string]Capability{},
	}
	if err := provDef.Err(); err != nil {
		return nil, cue.Value{}, fmt.Errorf("provider tables: #Provider: %w", err)
	}
	names, err := fs.Glob(fsys, "*/*.cue")
	if err != nil {
		return nil, cue.Value{}, err
	}
	for _, file := range names {
		t, err := loadTable(ctx, provDef, fsys, file, file)
		if err != nil {
			return nil, cue.Value{}, err
		}
		if shipped {
			if err := t.checkShipped(); err != nil {
				return nil, cue.Value{}, err
			}
		}
		ts.add(t)
	}
	if len(ts.all) == 0 {
		return nil, cue.Value{}, fmt.Errorf("provider tables: no <name>/<version>.cue file found")
	}
	ts.sort()
	return ts, root, nil
}

func (ts *Tables) add(t *Table) {
	t.key = t.Name + "@" + t.Version
	ts.byKey[t.Key()] = t
	ts.all = append(ts.all, t)
}

func (ts *Tables) sort() {
	slices.SortFunc(ts.all, func(a, b *Table) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), CompareVersions(a.Version, b.Version))
	})
}

// loadTable loads the table file of fsys; shown is how errors, positions
// and Table.File name it (the path a user finds it at, for a local table).
func loadTable(ctx *cue.Context, provDef cue.Value, fsys fs.FS, file, shown string) (*Table, error) {
	name := path.Dir(file)
	version := strings.TrimSuffix(path.Base(file), ".cue")
	src, err := fs.ReadFile(fsys, file)
	if err != nil {
		return nil, fmt.Errorf("provider table %s: %w", shown, err)
	}
	file = shown
	f, err := parser.ParseFile(file, src, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("provider table %s: %s", file, details(file, err))
	}
	data := ctx.BuildFile(f)
	if err := data.Err(); err != nil {
		return nil, fmt.Errorf("provider table %s: %s", file, details(file, err))
	}
	v := provDef.Unify(data)
	if err := v.Validate(cue.Concrete(true), cue.Final()); err != nil {
		return nil, fmt.Errorf("provider table %s does not satisfy #Provider:\n%s", file, details(file, err))
	}
	t := &Table{value: v, File: file}
	if err := v.Decode(t); err != nil {
		return nil, fmt.Errorf("provider table %s: %w", file, err)
	}
	if t.Name != name || t.Version != version {
		return nil, fmt.Errorf("provider table %s says %s@%s; its path says %s@%s", file, t.Name, t.Version, name, version)
	}
	if err := t.checkEntry(); err != nil {
		return nil, fmt.Errorf("provider table %s: config.hooks.entry: %w", file, err)
	}
	if err := t.compilePatterns(); err != nil {
		return nil, fmt.Errorf("provider table %s: %w", file, err)
	}
	return t, nil
}

// details writes every error of err, one per line, each with its
// positions in file (the table at fault) or, when it has none there, in the
// rules.
func details(file string, err error) string {
	var b strings.Builder
	for _, e := range cueerrors.Errors(err) {
		b.WriteString("    ")
		b.WriteString(strings.TrimPrefix(strings.TrimSpace(e.Error()), defs.Provider+"."))
		var here, there []string
		for _, p := range cueerrors.Positions(e) {
			switch {
			case !p.IsValid():
			case p.Filename() == file:
				here = append(here, p.String())
			default:
				there = append(there, p.String())
			}
		}
		if len(here) == 0 && len(there) > 0 {
			here = there[:1]
		}
		for _, p := range here {
			fmt.Fprintf(&b, "\n        %s", p)
		}
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

// All returns every table, by name and then version, oldest first.
func (ts *Tables) All() []*Table { return slices.Clone(ts.all) }

// Keys returns the name@version of every table, in the order of All.
func (ts *Tables) Keys() []string {
	keys := make([]string, len(ts.all))
	for i, t := range ts.all {
		keys[i] = t.Key()
	}
	return keys
}

// Lookup returns the table of exactly name@version. A version nobody added
// is unknown: compatibility is never inferred from a nearby version.
func (ts *Tables) Lookup(name, version string) (*Table, bool) {
	t, ok := ts.byKey[name+"@"+version]
	return t, ok
}

// Newest returns the newest known version of name that dalo ships: a local
// table (WithLocal) never changes what a bare name means.
func (ts *Tables) Newest(name string) (*Table, bool) {
	var newest *Table
	for _, t := range ts.all {
		if t.Name == name && !t.local {
			newest = t
		}
	}
	return newest, newest != nil
}

// Nearest returns the table of name closest to version, version's own
// excepted: of the newest older and the oldest newer table, the one that
// shares more leading components with version, then the one whose first
// differing component is nearer, then the older. It is where proving a
// version starts (dalo providers verify, the probe): its claims are what a
// run tries, never what the version inherits.
func (ts *Tables) Nearest(name, version string) (*Table, bool) {
	var older, newer *Table
	for _, t := range ts.all {
		if t.Name != name || t.Version == version {
			continue
		}
		if CompareVersions(t.Version, version) < 0 {
			older = t
		} else if newer == nil {
			newer = t
		}
	}
	switch {
	case older == nil:
		return newer, newer != nil
	case newer == nil:
		return older, true
	}
	po, do := versionDistance(older.Version, version)
	pn, dn := versionDistance(newer.Version, version)
	if pn > po || pn == po && dn < do {
		return newer, true
	}
	return older, true
}

// versionDistance returns how many leading components a and b share, and
// how far apart the first one that differs is.
func versionDistance(a, b string) (shared, apart int) {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < min(len(as), len(bs)); i++ {
		x, _ := strconv.Atoi(as[i])
		y, _ := strconv.Atoi(bs[i])
		if x != y {
			return i, max(x-y, y-x)
		}
	}
	return min(len(as), len(bs)), 0
}

// Source returns the CUE source of an embedded table (t.File).
func Source(t *Table) ([]byte, error) {
	return fs.ReadFile(embedded, t.File)
}

// Resolve turns NAME@VERSION, or a bare NAME meaning its newest version,
// into a table. The error lists the known versions.
func (ts *Tables) Resolve(arg string) (*Table, error) {
	name, version, exact := strings.Cut(arg, "@")
	var t *Table
	var ok bool
	if exact {
		t, ok = ts.Lookup(name, version)
	} else {
		t, ok = ts.Newest(name)
	}
	if !ok {
		return nil, fmt.Errorf("%w %s; known: %s", ErrUnknownProvider, arg, strings.Join(ts.Keys(), ", "))
	}
	return t, nil
}

// ErrUnknownProvider is wrapped by the error of Resolve for a provider no
// table describes: a command given one was used wrongly (exit status 2).
var ErrUnknownProvider = errors.New("unknown provider")

// CompareVersions orders dotted numeric versions (2.1.233 < 2.1.1000).
func CompareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if c := cmp.Compare(x, y); c != 0 {
			return c
		}
	}
	return cmp.Compare(a, b)
}

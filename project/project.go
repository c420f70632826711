// Package project holds a project's dalo.toml, the packages a project
// uses, from which sources, on which providers, and its dalo.lock, what
// they resolved to: each git source's commit and the digest of every grant
// a teammate approves. Both are TOML, read with the positions and the CUE
// rules (#Project, #Lock in cue/project.cue) a manifest is read with.
package project

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"

	defs "dalo/cue"
	"dalo/engine"
	"dalo/internal/regular"
	"dalo/plan"
	"dalo/providers"
	"dalo/store/gitrepo"
)

// File and LockFile are the names of a project's files, at its root;
// SchemaFile is the JSON Schema of File for editors ('dalo schema
// --project').
const (
	File       = "dalo.toml"
	LockFile   = "dalo.lock"
	SchemaFile = "dalo-project-v1.schema.json"
)

// ErrNoProject is wrapped by Find's error when no directory holds dalo.toml.
var ErrNoProject = errors.New("no dalo.toml")

// Find returns the project root for dir: dir or the nearest directory
// above it holding dalo.toml, as git finds .git and cargo Cargo.toml. A
// dalo.toml that is a directory does not count.
func Find(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; {
		fi, err := os.Stat(filepath.Join(d, File))
		switch {
		case err == nil && fi.Mode().IsRegular():
			return d, nil
		case err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscallNotDir):
			return "", fmt.Errorf("looking for %s: %w", File, err)
		}
		up := filepath.Dir(d)
		if up == d {
			return "", fmt.Errorf("%w in %s or any directory above it; a project states the packages it uses in %s at its root", ErrNoProject, abs, File)
		}
		d = up
	}
}

// A Project is a dalo.toml that passed its checks.
type Project struct {
	Root     string    // the directory holding dalo.toml
	Sources  []Source  // by id
	Packages []Package // as dalo.toml lists them

	doc *engine.Document // where each field is, when read from a file
}

// errorf is an *Error of one finding about field of dalo.toml, at its
// position when it was read from a file.
func (p *Project) errorf(code, field, format string, args ...any) error {
	if p.doc != nil {
		return &Error{[]engine.Diagnostic{p.doc.Errorf(code, field, format, args...)}}
	}
	return &Error{[]engine.Diagnostic{{Severity: engine.Error, Code: code, File: File, Field: field, Message: fmt.Sprintf(format, args...)}}}
}

// A Source is one [sources.<id>] of dalo.toml: a git URL, as written, and
// the ref it follows, or a directory inside the project.
type Source struct {
	ID   string
	Git  string // as written: the lock copies it
	Ref  string // the branch or tag followed; "" the remote's default branch
	Path string // slash-separated, relative to the root, cleaned
}

// Dir is where a path source's packages are read on this machine.
func (p *Project) Dir(s Source) string { return filepath.Join(p.Root, filepath.FromSlash(s.Path)) }

// Source returns the source id declares.
func (p *Project) Source(id string) (Source, bool) {
	i := slices.IndexFunc(p.Sources, func(s Source) bool { return s.ID == id })
	if i < 0 {
		return Source{}, false
	}
	return p.Sources[i], true
}

// A Package is one [[packages]] of dalo.toml.
type Package struct {
	Source, Name string
	Providers    []string // as written, each once
	field        string   // packages[i], for findings
}

// Ref is SOURCE:NAME.
func (p Package) Ref() string { return p.Source + ":" + p.Name }

// An Error holds the findings that refused a file, each at its line,
// column and field, sorted.
type Error struct {
	Diagnostics []engine.Diagnostic
}

// Error is the findings, one a line, as the human report prints them.
func (e *Error) Error() string {
	lines := make([]string, len(e.Diagnostics))
	for i, d := range e.Diagnostics {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

var rules = sync.OnceValues(engine.LoadRules)

// Load reads and checks root's dalo.toml.
func Load(root string) (*Project, error) {
	src, err := readFile(filepath.Join(root, File))
	if err != nil {
		return nil, err
	}
	return Parse(root, src)
}

// readFile reads name, refusing what is not a regular file (a symlink
// included) or is larger than a manifest may be, before reading it whole.
func readFile(name string) ([]byte, error) {
	lim := int64(plan.DraftLimits.ManifestBytes)
	data, tooBig, err := regular.ReadLimited(name, lim)
	switch {
	case err != nil:
		return nil, err
	case tooBig:
		return nil, fmt.Errorf("%s is larger than %d bytes", name, lim)
	}
	return data, nil
}

// Parse checks src as root's dalo.toml: its shape (#Project), then what
// relates its fields: a source has git or path, a git URL is one 'dalo
// source add' takes and holds no credentials, a path stays inside the
// project, a package names a declared source, once, and known providers.
func Parse(root string, src []byte) (*Project, error) {
	r, err := rules()
	if err != nil {
		return nil, err
	}
	doc, diags := r.CheckDocument(File, defs.Project, src)
	if diags != nil {
		return nil, &Error{diags}
	}
	var raw struct {
		Sources map[string]struct {
			Git, Path, Ref *string
		} `toml:"sources"`
		Packages []struct {
			Ref       string   `toml:"ref"`
			Providers []string `toml:"providers"`
		} `toml:"packages"`
	}
	if err := toml.Unmarshal(src, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", File, err) // the shape passed: a bug
	}
	p := &Project{Root: root, doc: doc}
	var bad []engine.Diagnostic
	for _, id := range slices.Sorted(maps.Keys(raw.Sources)) {
		s := raw.Sources[id]
		field := engine.Field("sources", id)
		out := Source{ID: id}
		switch {
		case engine.CheckSourceID(id) != nil:
			bad = append(bad, doc.KeyErrorf("E110", field, "%v", engine.CheckSourceID(id)))
			continue
		case s.Git != nil && s.Path != nil:
			bad = append(bad, doc.Errorf("E110", engine.Field(field, "path"), "source %s has both git and path; it is one or the other", id))
			continue
		case s.Git == nil && s.Path == nil:
			bad = append(bad, doc.KeyErrorf("E110", field, "source %s has neither git nor path: give git = URL or path = DIR", id))
			continue
		case s.Path != nil && s.Ref != nil:
			bad = append(bad, doc.Errorf("E110", engine.Field(field, "ref"), "source %s is a directory: ref is for a git source", id))
			continue
		case s.Git != nil:
			if err := checkGit(*s.Git); err != nil {
				bad = append(bad, doc.Errorf("E111", engine.Field(field, "git"), "%v", err))
				continue
			}
			out.Git = *s.Git
			if s.Ref != nil {
				if err := gitrepo.CheckRef(*s.Ref); err != nil {
					bad = append(bad, doc.Errorf("E111", engine.Field(field, "ref"), "%v", err))
					continue
				}
				out.Ref = *s.Ref
			}
		default:
			clean, err := checkPath(*s.Path)
			if err != nil {
				bad = append(bad, doc.Errorf("E112", engine.Field(field, "path"), "%v", err))
				continue
			}
			out.Path = clean
		}
		p.Sources = append(p.Sources, out)
	}
	ts, err := providers.Load()
	if err != nil {
		return nil, err
	}
	seen := map[string]int{}
	for i, pk := range raw.Packages {
		field := engine.Index("packages", i)
		srcID, name, _ := strings.Cut(pk.Ref, ":") // #PackageRef: SOURCE:NAME
		if _, ok := raw.Sources[srcID]; !ok {
			bad = append(bad, doc.Errorf("E113", engine.Field(field, "ref"), "package %s names source %s, which [sources] does not declare", pk.Ref, srcID))
			continue
		}
		if j, ok := seen[pk.Ref]; ok {
			bad = append(bad, doc.Errorf("E113", engine.Field(field, "ref"), "package %s is listed twice (packages[%d] lists it too): list it once, with every provider", pk.Ref, j))
			continue
		}
		seen[pk.Ref] = i
		ok := true
		for j, name := range pk.Providers {
			pf := engine.Index(engine.Field(field, "providers"), j)
			// Each once is #ProjectPackage's rule (cue/project.cue).
			if _, known := ts.Newest(name); !known {
				bad = append(bad, doc.Errorf("E114", pf, "unknown provider %s; known: %s", name, strings.Join(providerNames(ts), ", ")))
				ok = false
			}
		}
		if ok {
			p.Packages = append(p.Packages, Package{Source: srcID, Name: name, Providers: pk.Providers, field: field})
		}
	}
	if len(bad) > 0 {
		engine.SortDiagnostics(bad)
		return nil, &Error{bad}
	}
	return p, nil
}

// checkGit refuses a git URL 'dalo source add' would not fetch, and one
// with credentials: dalo.toml is committed, and a credential belongs to
// git's credential helper or ssh's keys, never to a project.
func checkGit(s string) error {
	u, isGit, err := gitrepo.ParseURL(s)
	switch {
	case err != nil:
		return err
	case !isGit:
		return fmt.Errorf("%s is not a git URL (https://, ssh://, git@host:path or file://); a directory of the project is path = DIR", s)
	case u.HasCredentials():
		return fmt.Errorf("git URL %s holds credentials, and dalo.toml is committed: leave them to git's credential helper or ssh", u)
	}
	return nil
}

// checkPath cleans a path source's directory, refusing one that is
// absolute or leaves the project: a teammate's clone has the project and
// nothing around it.
func checkPath(s string) (string, error) {
	if strings.Contains(s, `\`) {
		return "", fmt.Errorf("path %q: write it with forward slashes", s)
	}
	if path.IsAbs(s) || filepath.IsAbs(s) || filepath.VolumeName(s) != "" {
		return "", fmt.Errorf("path %q is absolute: a source path is relative to dalo.toml, inside the project", s)
	}
	clean := path.Clean(s)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("path %q leaves the project: a source path stays inside the directory of dalo.toml", s)
	}
	return clean, nil
}

func providerNames(ts *providers.Tables) []string {
	var names []string
	for _, t := range ts.All() {
		if !slices.Contains(names, t.Name) {
			names = append(names, t.Name)
		}
	}
	sort.Strings(names)
	return names
}

package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"

	"dalo/engine"
	"dalo/internal/regular"
	"dalo/jsonedit"
	"dalo/store/gitrepo"
)

// A Source is a registered source: an identity the user chose and the
// directory it names, or the git repository it is fetched from and the
// commit it is pinned to. The registry is the user's alone: a package
// cannot add or trust a source by naming it.
type Source struct {
	ID string `json:"id"`
	// Path is the directory the source's packages are read from: the
	// user's directory, or for a git source the snapshot of its pinned
	// commit in the store (not recorded: it follows from the pin).
	Path string  `json:"path,omitempty"`
	Git  *GitPin `json:"git,omitempty"`
}

type sourcesFile struct {
	Schema  int      `json:"schema"`
	Sources []Source `json:"sources"`
}

// Sources lists the registry, sorted by id.
func (s *Store) Sources() ([]Source, error) {
	var f sourcesFile
	if err := readJSON(s.path("sources.json"), &f); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	if f.Schema != 1 {
		// A newer dalo's registry: reading it as schema 1 and writing it
		// back would drop what this dalo does not know.
		return nil, fmt.Errorf("%s has schema %d; this dalo reads schema 1", s.path("sources.json"), f.Schema)
	}
	for i, x := range f.Sources {
		if x.Git != nil {
			if !validObject.MatchString(x.Git.Tree) || !validObject.MatchString(x.Git.Commit) {
				return nil, fmt.Errorf("%s is corrupt: source %s pins commit %q, tree %q", s.path("sources.json"), x.ID, x.Git.Commit, x.Git.Tree)
			}
			f.Sources[i].Path = s.sourceRoot(x)
		}
	}
	return f.Sources, nil
}

// validObject is what a pinned commit or tree id must be: the tree names
// a directory, and both are given to git.
var validObject = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// putSources writes the registry, sorted by id, under the lock the
// caller holds. A git source's path is not recorded: it follows from the
// pin.
func (s *Store) putSources(srcs []Source) error {
	out := make([]Source, len(srcs))
	for i, x := range srcs {
		out[i] = x
		if x.Git != nil {
			out[i].Path = ""
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return writeJSON(s.path("sources.json"), sourcesFile{Schema: 1, Sources: out})
}

// lockUnregistered takes the store's lock and reads the registry, in
// which id must not be registered yet.
func (s *Store) lockUnregistered(id string) (*Lock, []Source, error) {
	l, err := s.Lock()
	if err != nil {
		return nil, nil, err
	}
	srcs, err := s.Sources()
	if err == nil && slices.ContainsFunc(srcs, func(x Source) bool { return x.ID == id }) {
		err = s.alreadyRegistered(id)
	}
	if err != nil {
		l.Unlock()
		return nil, nil, err
	}
	return l, srcs, nil
}

func (s *Store) alreadyRegistered(id string) error {
	src, err := s.LookupSource(id)
	if err != nil {
		return err
	}
	where := src.Path
	if src.Git != nil {
		where = src.Git.URL
	}
	return fmt.Errorf("source %s is already registered as %s; remove it first", id, where)
}

// Registry is the registry as engine.Options.Registry wants it.
func (s *Store) Registry() (map[string]string, error) {
	srcs, err := s.Sources()
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(srcs))
	for _, x := range srcs {
		m[x.ID] = x.Path
	}
	return m, nil
}

// LookupSource returns the registered source id.
func (s *Store) LookupSource(id string) (Source, error) {
	srcs, err := s.Sources()
	if err != nil {
		return Source{}, err
	}
	for _, x := range srcs {
		if x.ID == id {
			return x, nil
		}
	}
	return Source{}, fmt.Errorf("no source %s in the registry (%s); add it with 'dalo source add %s PATH|URL'", id, s.path("sources.json"), id)
}

// AddSource registers loc under id: a git URL (see gitrepo.ParseURL),
// fetched and pinned to the commit ref names (a branch or tag; "" the
// remote's default branch), or else a directory.
func (s *Store) AddSource(id, loc, ref string) (Source, error) {
	// The id is a reference atom and a part of the grant file names
	// (GrantID): #SourceID says which ids are both.
	if err := engine.CheckSourceID(id); err != nil {
		return Source{}, err
	}
	u, isGit, err := gitrepo.ParseURL(loc)
	switch {
	case err != nil:
		return Source{}, err
	case isGit:
		return s.addGitSource(id, u, ref)
	case ref != "":
		return Source{}, fmt.Errorf("--ref is for a git URL; %s is a directory", loc)
	}
	return s.addDirSource(id, loc)
}

// addDirSource registers the directory dir under id.
func (s *Store) addDirSource(id, dir string) (Source, error) {
	// The same check, and words, as validate's: the error wraps
	// engine.ErrNoSource, a usage error on the command line.
	if err := engine.CheckSourceDir(dir); err != nil {
		return Source{}, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Source{}, err
	}
	l, srcs, err := s.lockUnregistered(id)
	if err != nil {
		return Source{}, err
	}
	defer l.Unlock()
	src := Source{ID: id, Path: abs}
	return src, s.putSources(append(srcs, src))
}

// RemoveSource unregisters id. It refuses while grants or installations
// of its packages exist: they would name a source that no longer resolves.
func (s *Store) RemoveSource(id string) error {
	l, err := s.Lock()
	if err != nil {
		return err
	}
	defer l.Unlock()
	srcs, err := s.Sources()
	if err != nil {
		return err
	}
	i := -1
	for n, x := range srcs {
		if x.ID == id {
			i = n
		}
	}
	if i < 0 {
		return fmt.Errorf("no source %s in the registry", id)
	}
	grants, err := s.Grants()
	if err != nil {
		return err
	}
	for _, g := range grants {
		if g.Source == id {
			return fmt.Errorf("source %s still has grants (%s); revoke them first with 'dalo plugin revoke %s'", id, g.ID, g.Package)
		}
	}
	scopes, err := s.allScopes()
	if err != nil {
		return fmt.Errorf("removing source %s: %w", id, err)
	}
	for _, sc := range scopes {
		installed, err := sc.InstalledProviders()
		if err != nil {
			return fmt.Errorf("removing source %s: %w", id, err)
		}
		for _, p := range installed {
			in, err := sc.Installed(p)
			if err != nil {
				return err
			}
			for _, ip := range in.Packages {
				if ip.Source == id && sc.project != nil {
					return fmt.Errorf("source %s still has %s installed on %s in the project %s; remove it from the project's dalo.toml and run 'dalo sync' there first", id, ip.Package, p, sc.project.Root)
				}
				if ip.Source == id {
					return fmt.Errorf("source %s still has %s installed on %s; remove it first with 'dalo plugin remove %s --provider %s'", id, ip.Package, p, ip.Package, p)
				}
			}
		}
	}
	gone := srcs[i]
	srcs = append(srcs[:i], srcs[i+1:]...)
	if err := s.putSources(srcs); err != nil {
		return err
	}
	if gone.Git != nil {
		// Its repository and snapshot go too; if a fetch holds them,
		// the next writer collects them once it ends.
		if release, busy, err := lockSource(s.sourceDir(id), false); err == nil && !busy {
			removeTree(s.sourceDir(id))
			release()
		}
	}
	return nil
}

// maxStateFile bounds the read of one store file dalo decodes: a grant,
// an install record, the registry, a dispatch plan. dalo wrote each, and
// the largest, an install record or plan, lists each hook's tool files
// (at most package_entries, 4096, of about 100 bytes) once per hook: a few
// MiB for a large package. Reading is done under the store lock, so a file
// replaced by something huge must fail with its name rather than fill
// memory; 64 MiB leaves room for many such packages on one provider.
const maxStateFile = 64 << 20

// readJSON decodes the JSON file name into v; a file that does not decode
// is an error naming it (a corrupt store is never read as empty). It opens
// the file as dispatch does (package regular): a symlink, FIFO or device
// put in its place is an error at once, never a read elsewhere or one
// that blocks, and it reads at most maxStateFile bytes. A missing file is
// an error fs.ErrNotExist matches.
func readJSON(name string, v any) error {
	f, fi, err := regular.Open(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return err
	case errors.Is(err, regular.ErrSymlink):
		return fmt.Errorf("%s is a symlink, not a regular file; dalo writes its state files itself", name)
	case err != nil:
		return fmt.Errorf("reading state file: %w", err)
	}
	defer f.Close()
	if fi.Size() > maxStateFile {
		return fmt.Errorf("%s is %d bytes, more than the %d bytes dalo reads of a state file", name, fi.Size(), maxStateFile)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxStateFile+1))
	if err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	if len(data) > maxStateFile {
		return fmt.Errorf("%s is more than the %d bytes dalo reads of a state file", name, maxStateFile)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s is corrupt: %v%s", name, err, syntaxAt(data, err))
	}
	return nil
}

// syntaxAt is where in data the JSON syntax error err is, as ", at line
// L, column C" (1-based; columns count bytes), or "" for another error or
// one at the end of data, which its message says.
func syntaxAt(data []byte, err error) string {
	var se *json.SyntaxError
	if !errors.As(err, &se) || se.Offset < 1 || se.Offset > int64(len(data)) {
		return ""
	}
	at := int(se.Offset) - 1 // the offending byte
	if len(bytes.TrimSpace(data[at:])) == 0 {
		return ""
	}
	line, col := jsonedit.Position(data, at)
	return fmt.Sprintf(", at line %d, column %d", line, col)
}

// writeJSON writes v as indented JSON to name, atomically.
func writeJSON(name string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return writeFile(name, append(data, '\n'), 0o600)
}

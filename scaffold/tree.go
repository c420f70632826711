package scaffold

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"dalo/plan"
)

// A Tree is a set of new files for a source, by slash-separated path
// relative to the source root.
type Tree struct {
	files []File
}

// A File is one file of a Tree.
type File struct {
	Path string // slash-separated, relative to the source root
	Data []byte
	Exec bool // mode 0777 &^ umask instead of 0666 &^ umask
}

// Add adds a file to t.
func (t *Tree) Add(p string, data []byte, exec bool) {
	t.files = append(t.files, File{Path: p, Data: data, Exec: exec})
}

// Files returns the files of t, in the order they were added.
func (t *Tree) Files() []File { return t.files }

// Items returns the items of t: what Commit renames into place, each a
// whole. A file directly in the root is its own item; any other file
// belongs to the item made of its first two path elements (plugins/x,
// skills/y, agents/z.md), so that a package or a skill arrives whole.
func (t *Tree) Items() []string {
	var items []string
	for _, f := range t.files {
		it := item(f.Path)
		if !slices.Contains(items, it) {
			items = append(items, it)
		}
	}
	return items
}

func item(p string) string {
	parts := strings.SplitN(p, "/", 3)
	if len(parts) == 1 {
		return parts[0]
	}
	return parts[0] + "/" + parts[1]
}

// An ExistsError says that items of a tree are already in the source.
type ExistsError struct {
	Items []string // slash paths relative to the source root, sorted
}

// Error names every item in the way, so that one run says all the user
// must move aside.
func (e *ExistsError) Error() string {
	if len(e.Items) == 1 {
		return e.Items[0] + " exists already"
	}
	return strings.Join(e.Items, ", ") + " exist already"
}

// StagePrefix starts the name of the staging directory Stage makes in a
// source; a crash can leave one behind, and nothing reads it.
const StagePrefix = ".dalo-new-"

// Stage writes t into a new staging directory inside root and syncs it.
// It refuses, writing nothing, a path that is not a clean relative path,
// and an item that already exists in root (an *ExistsError).
func (t *Tree) Stage(root string) (*Staged, error) {
	seen := map[string]bool{}
	for _, f := range t.files {
		if !fs.ValidPath(f.Path) || f.Path == "." || path.Clean(f.Path) != f.Path {
			return nil, fmt.Errorf("scaffold: %q is not a clean relative path", f.Path)
		}
		if seen[f.Path] {
			return nil, fmt.Errorf("scaffold: %s is written twice", f.Path)
		}
		seen[f.Path] = true
	}
	items := t.Items()
	exists := &ExistsError{}
	for _, it := range items {
		_, err := os.Lstat(filepath.Join(root, filepath.FromSlash(it)))
		switch {
		case err == nil:
			exists.Items = append(exists.Items, it)
		case !errors.Is(err, fs.ErrNotExist):
			return nil, err
		}
	}
	if len(exists.Items) > 0 {
		slices.Sort(exists.Items)
		return nil, exists
	}
	dir, err := os.MkdirTemp(root, StagePrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("staging in %s: %w", root, err)
	}
	s := &Staged{root: root, dir: dir, items: items}
	if err := s.write(t.files); err != nil {
		s.Discard()
		return nil, err
	}
	return s, nil
}

// A Staged tree is written and synced in its staging directory, ready to
// be validated (Dir is a source holding only the new files) and then
// committed or discarded.
type Staged struct {
	root, dir string
	items     []string
}

// Dir is the staging directory: a source root holding only the new files.
func (s *Staged) Dir() string { return s.dir }

func (s *Staged) write(files []File) error {
	dirs := map[string]bool{s.dir: true}
	for _, f := range files {
		name := filepath.Join(s.dir, filepath.FromSlash(f.Path))
		for d := filepath.Dir(name); !dirs[d]; d = filepath.Dir(d) {
			dirs[d] = true
		}
		if err := os.MkdirAll(filepath.Dir(name), 0o777); err != nil {
			return err
		}
		perm := os.FileMode(0o666)
		if f.Exec {
			perm = 0o777
		}
		if err := plan.CreateFile(name, f.Data, perm); err != nil {
			return err
		}
	}
	for d := range dirs {
		if err := plan.SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// Commit renames each item into place in the source, never over an
// existing one, and removes the staging directory. If an item cannot be
// placed, the items placed before it are taken back out and the error
// says which: the source ends as it was. (A crash between two renames
// leaves the items renamed so far, each of them whole.)
func (s *Staged) Commit() error {
	defer s.Discard()
	var placed []string
	undo := func(err error) error {
		for _, it := range slices.Backward(placed) {
			os.Rename(filepath.Join(s.root, filepath.FromSlash(it)), filepath.Join(s.dir, filepath.FromSlash(it)))
		}
		return err
	}
	parents := map[string]bool{s.root: true}
	for _, it := range s.items {
		dst := filepath.Join(s.root, filepath.FromSlash(it))
		parent := filepath.Dir(dst)
		if err := os.MkdirAll(parent, 0o777); err != nil {
			return undo(err)
		}
		if err := renameNew(filepath.Join(s.dir, filepath.FromSlash(it)), dst); err != nil {
			if errors.Is(err, fs.ErrExist) {
				err = &ExistsError{Items: []string{it}}
			}
			return undo(err)
		}
		placed = append(placed, it)
		parents[parent] = true
	}
	for p := range parents {
		if err := plan.SyncDir(p); err != nil {
			return err
		}
	}
	return nil
}

// Discard removes the staging directory and what is left in it.
func (s *Staged) Discard() {
	os.RemoveAll(s.dir)
}

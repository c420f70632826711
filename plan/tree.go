package plan

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	"dalo/internal/regular"
)

// CheckTree reports the first entry of the staged tree root that is not
// one of files (slash-separated paths relative to root) or a directory
// above one: an extra file (a module the entry would import, a
// __pycache__ an interpreter wrote), a symlink, a FIFO, a directory no
// planned file is in. Hashing the planned files finds a missing or changed
// one; with CheckTree, the tree holds exactly what was approved. Dispatch
// runs it before every run, and install before it reuses a staged tree.
//
// It reads each directory in small batches and stops at the first entry
// that is not planned, so a directory someone filled with entries costs
// no more than one batch past the planned ones.
func CheckTree[V any](root string, files map[string]V) error {
	dirs := map[string]bool{}
	for rel := range files {
		for d := path.Dir(rel); d != "."; d = path.Dir(d) {
			if dirs[d] {
				break
			}
			dirs[d] = true
		}
	}
	fi, err := os.Lstat(root)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is %s, not a directory", root, regular.Describe(fi.Mode()))
	}
	return checkDir(root, "", files, dirs)
}

func checkDir[V any](root, rel string, files map[string]V, dirs map[string]bool) error {
	name := filepath.Join(root, filepath.FromSlash(rel))
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		ents, err := f.ReadDir(32)
		for _, e := range ents {
			p := e.Name()
			if rel != "" {
				p = rel + "/" + p
			}
			t := e.Type()
			switch {
			case t.IsDir() && dirs[p]:
				if err := checkDir(root, p, files, dirs); err != nil {
					return err
				}
				continue
			case t.IsRegular():
				if _, ok := files[p]; ok {
					continue
				}
				return fmt.Errorf("%s holds %s, which is not one of its approved files", root, p)
			}
			if t.IsDir() {
				return fmt.Errorf("%s holds the directory %s, in which no approved file is", root, p)
			}
			return fmt.Errorf("%s holds %s, %s, not one of its approved files", root, p, regular.Describe(t))
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", name, err)
		}
	}
}

package scaffold

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"dalo/engine"
	"dalo/plan"
)

// Init makes dir a source: the directory of each reference kind of the
// layout (plugins, skills, instructions, agents), and the JSON Schema of
// PLUGIN.toml at its root, where a new manifest's #:schema line points.
// It creates what is missing and changes nothing that exists; created
// lists, slash-separated and relative to dir, what it made, "." for dir
// itself.
func Init(r *engine.Rules, dir string, schema []byte) (created []string, err error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return nil, err
		}
		if err := plan.SyncDir(filepath.Dir(filepath.Clean(dir))); err != nil {
			return nil, err
		}
		created = append(created, ".")
	case err != nil:
		return nil, err
	case !fi.IsDir():
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	var dirs []string
	for _, e := range r.Layout {
		if !slices.Contains(dirs, e.Dir) {
			dirs = append(dirs, e.Dir)
		}
	}
	slices.Sort(dirs)
	// Whatever is in the way is found before anything is made, so that a
	// refusal leaves the directory as it was.
	for _, d := range dirs {
		switch fi, err := os.Lstat(filepath.Join(dir, d)); {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return created, err
		case fi.Mode()&fs.ModeSymlink != 0:
			return created, fmt.Errorf("%s is a symlink: validation reads a source's directories only where they are, never through a link", filepath.Join(dir, d))
		case !fi.IsDir():
			return created, fmt.Errorf("%s is not a directory", filepath.Join(dir, d))
		}
	}
	for _, d := range dirs {
		err := os.Mkdir(filepath.Join(dir, d), 0o777)
		if errors.Is(err, fs.ErrExist) {
			if fi, serr := os.Stat(filepath.Join(dir, d)); serr == nil && !fi.IsDir() {
				return created, fmt.Errorf("%s is not a directory", filepath.Join(dir, d))
			}
			continue
		}
		if err != nil {
			return created, err
		}
		created = append(created, d)
	}
	t := &Tree{}
	t.Add(SchemaFile, schema, false)
	s, err := t.Stage(dir)
	var exists *ExistsError
	switch {
	case errors.As(err, &exists):
	case err != nil:
		return created, err
	default:
		if err := s.Commit(); err != nil {
			return created, err
		}
		created = append(created, SchemaFile)
	}
	return created, plan.SyncDir(dir)
}

// WriteSchema writes schema to dir/plugin-v1.schema.json, replacing the
// file there, if any, atomically: a reader sees the old bytes or the new.
func WriteSchema(dir string, schema []byte) (string, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	name := filepath.Join(dir, SchemaFile)
	if err := plan.WriteFile(name, "."+SchemaFile, schema, 0o644, nil); err != nil {
		return "", fmt.Errorf("writing %s: %w", name, err)
	}
	return name, nil
}

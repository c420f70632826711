//go:build !linux

package engine

import (
	"errors"
	"os"
	"path/filepath"
)

// pathDir is a directory of the walk, read by its path.
type pathDir struct{ path string }

// openWalkDir opens nothing: listing the directory says what is wrong.
func openWalkDir(path string) (walkDir, error) { return pathDir{path}, nil }

func (d pathDir) sub(name string) (walkDir, error) { return pathDir{filepath.Join(d.path, name)}, nil }

func (d pathDir) close() {}

func (d pathDir) entries() ([]dirEntry, error) {
	des, err := os.ReadDir(d.path)
	if err != nil {
		return nil, err
	}
	ents := make([]dirEntry, len(des))
	for i, e := range des {
		ents[i] = dirEntry{name: e.Name(), typ: e.Type()}
	}
	return ents, nil
}

func (d pathDir) info(name string) (statInfo, error) {
	fi, err := os.Lstat(filepath.Join(d.path, name))
	if err != nil {
		return statInfo{}, err
	}
	return statInfo{name: fi.Name(), size: fi.Size(), mode: fi.Mode(), mtime: fi.ModTime()}, nil
}

// openRealDir leaves a skill's directory to lstatInside and walkTree,
// which read it by its path.
func openRealDir(path string) (walkDir, error) { return nil, errors.ErrUnsupported }

// readHead leaves the file to the caller, which reads it by its path.
func (d pathDir) readHead(name string, limit int64, check func(yaml string) ([]fmFinding, bool)) (statInfo, fmText, error) {
	return statInfo{}, fmText{}, errors.ErrUnsupported
}

// readFileHead leaves the file to the caller, which reads it by its path.
func readFileHead(path string, limit int64) (statInfo, fmText, error) {
	return statInfo{}, fmText{}, errors.ErrUnsupported
}

// An fdFile is never opened here: openRegular leaves the file to the
// caller, which opens it by its path.
type fdFile int

func (f fdFile) Read(b []byte) (int, error) { return 0, errors.ErrUnsupported }

func (f fdFile) close() {}

// openRegular leaves the file to the caller, which opens it by its path.
func (d pathDir) openRegular(name string) (fdFile, statInfo, error) {
	return -1, statInfo{}, errors.ErrUnsupported
}

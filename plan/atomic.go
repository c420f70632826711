package plan

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile replaces name with data atomically: it writes a temporary
// file in the same directory (named prefix, TempMark and a random part),
// gives it mode perm, syncs it, renames it over name and syncs the
// directory, so that a reader or a crash sees the old bytes or the new
// ones, never half of either. hold, unless nil, is called with the
// temporary file as soon as it exists: the store locks it there, so that
// a sweeper tells it from an abandoned one. On an error nothing is
// renamed and the temporary file is gone. Every file dalo replaces whole,
// in the store or the user's, is written here.
func WriteFile(name, prefix string, data []byte, perm os.FileMode, hold func(*os.File) error) error {
	dir := filepath.Dir(name)
	f, err := os.CreateTemp(dir, prefix+TempMark+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if hold != nil {
		// Held until the file is renamed into place and closed.
		if err := hold(f); err != nil {
			return err
		}
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if err := syncFile(f); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		return err
	}
	ok = true
	return syncDir(dir)
}

// CreateFile creates name, which must not exist, with data and mode perm,
// and syncs it: a file of a tree that is renamed into place whole once
// every file and directory in it is durable.
func CreateFile(name string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = syncFile(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

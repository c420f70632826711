package plan

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// OpenRegular opens name for reading if it is a regular file, without
// following a symlink and without blocking: a FIFO, device or symlink
// swapped in for a file (after any earlier check of it) is an error here,
// never a read that waits forever. It returns the file's size as fstat
// read it; the caller bounds its read by what it expects.
func OpenRegular(name string) (*os.File, int64, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s is not a regular file", name)
	}
	return f, fi.Size(), nil
}

// SyncDir makes a rename or removal in dir durable. Package store uses it
// too: it lives here, in the leaf package, so that there is one.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}

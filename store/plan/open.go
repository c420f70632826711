package plan

import (
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

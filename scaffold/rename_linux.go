package scaffold

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// renameNew renames src to dst unless dst exists (fs.ErrExist): an item
// written by someone else between the check and the rename is never
// replaced. A file system without RENAME_NOREPLACE gets the check alone.
func renameNew(src, dst string) error {
	err := unix.Renameat2(unix.AT_FDCWD, src, unix.AT_FDCWD, dst, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return renameChecked(src, dst)
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: src, New: dst, Err: err}
	}
	return nil
}

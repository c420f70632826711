package scaffold

import (
	"fmt"
	"io/fs"
	"os"
)

// renameChecked renames src to dst after checking that dst does not
// exist: what renameNew falls back to where the system cannot refuse the
// replacement itself.
func renameChecked(src, dst string) error {
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("rename %s: %w", dst, fs.ErrExist)
	}
	return os.Rename(src, dst)
}

package plan

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// syncFile makes a file's bytes durable, and syncDir a directory's
// renames. The writes that use them through these variables are those
// whose syncing a test checks by replacing them: a missing sync loses data
// only when the machine stops, which no test sees.
var (
	syncFile = (*os.File).Sync
	syncDir  = SyncDir
)

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

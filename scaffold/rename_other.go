//go:build !linux && !darwin

package scaffold

// renameNew renames src to dst unless dst exists (fs.ErrExist). Without an
// atomic no-replace rename, it checks first.
func renameNew(src, dst string) error { return renameChecked(src, dst) }

//go:build !linux

package engine

import (
	"os"

	"golang.org/x/sys/unix"
)

// dirNames reads the names in the directory open as fd, which stays open.
func dirNames(fd int) ([]string, error) {
	dup, err := unix.Dup(fd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), "")
	defer f.Close()
	return f.Readdirnames(-1)
}

// localFS reports whether dir is on a file system whose stat alone tells
// a changed file from an unchanged one; dalo knows none off Linux, where
// the cache reads what a stat could otherwise stand for.
func localFS(dir string) bool { return false }

package engine

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// dirNames reads the names in the directory open as fd, which stays open,
// with the system call alone: no *os.File, whose making asks for the
// descriptor's flags, once per directory of every package a cached run
// walks.
func dirNames(fd int) ([]string, error) {
	var names []string
	buf := make([]byte, 8<<10)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = syscall.ParseDirent(buf[:n], -1, names)
	}
}

package regular

import (
	"syscall"

	"dalo/internal/rawsys"
)

// ReadLimited's system calls, raw: a validation reads a manifest and more
// files of each package (see rawsys).

func open(name string, flags int) (int, error) {
	return rawsys.Openat(rawsys.AtFDCWD, name, flags, 0)
}

func fstat(fd int, st *syscall.Stat_t) error { return rawsys.Fstat(fd, st) }

func read(fd int, b []byte) (int, error) { return rawsys.Read(fd, b) }

func closeFD(fd int) { rawsys.Close(fd) }

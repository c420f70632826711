//go:build linux && !amd64 && !arm64 && !riscv64

package rawsys

import "syscall"

// On the other architectures the calls go through the scheduler, as
// package syscall makes them: their stat system calls and layouts differ
// (fstatat64, statx), and no one runs dalo's benchmarks there.

// Openat opens name relative to the directory dirfd, as openat(2).
func Openat(dirfd int, name string, flags int, mode uint32) (int, error) {
	return syscall.Openat(dirfd, name, flags, mode)
}

// Fstat states the open file fd, as fstat(2).
func Fstat(fd int, st *syscall.Stat_t) error { return syscall.Fstat(fd, st) }

// Fstatat states name relative to dirfd, not following a symlink when
// flags says so, through a descriptor of the path itself (O_PATH), which
// fstat describes: package syscall has no Fstatat on every architecture.
func Fstatat(dirfd int, name string, st *syscall.Stat_t, flags int) error {
	const oPath = 0x200000 // O_PATH, which package syscall does not name everywhere
	open := oPath | syscall.O_CLOEXEC
	if flags&AtSymlinkNoFollow != 0 {
		open |= syscall.O_NOFOLLOW
	}
	fd, err := syscall.Openat(dirfd, name, open, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	return syscall.Fstat(fd, st)
}

// Read reads fd into b, as read(2).
func Read(fd int, b []byte) (int, error) { return syscall.Read(fd, b) }

// Getdents reads records of the directory fd into b, as getdents64(2).
func Getdents(fd int, b []byte) (int, error) { return syscall.Getdents(fd, b) }

// Close closes fd, as close(2).
func Close(fd int) error { return syscall.Close(fd) }

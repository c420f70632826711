//go:build linux && (amd64 || arm64 || riscv64)

package rawsys

import (
	"strings"
	"syscall"
	"unsafe"
)

// Openat opens name relative to the directory dirfd (AtFDCWD: the working
// directory), as openat(2).
func Openat(dirfd int, name string, flags int, mode uint32) (int, error) {
	var buf nameBuf
	p, err := buf.cstring(name)
	if err != nil {
		return -1, err
	}
	fd, _, e := syscall.RawSyscall6(syscall.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(flags), uintptr(mode), 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

// Fstat states the open file fd, as fstat(2).
func Fstat(fd int, st *syscall.Stat_t) error {
	if _, _, e := syscall.RawSyscall(syscall.SYS_FSTAT, uintptr(fd), uintptr(unsafe.Pointer(st)), 0); e != 0 {
		return e
	}
	return nil
}

// Fstatat states name relative to the directory dirfd, as fstatat(2).
func Fstatat(dirfd int, name string, st *syscall.Stat_t, flags int) error {
	var buf nameBuf
	p, err := buf.cstring(name)
	if err != nil {
		return err
	}
	if _, _, e := syscall.RawSyscall6(sysFstatat, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(st)), uintptr(flags), 0, 0); e != 0 {
		return e
	}
	return nil
}

// Read reads fd into b, as read(2); b must not be empty.
func Read(fd int, b []byte) (int, error) {
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// Getdents reads records of the directory fd into b, as getdents64(2);
// b must not be empty.
func Getdents(fd int, b []byte) (int, error) {
	n, _, e := syscall.RawSyscall(syscall.SYS_GETDENTS64, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// Close closes fd, as close(2).
func Close(fd int) error {
	if _, _, e := syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0); e != 0 {
		return e
	}
	return nil
}

// A nameBuf holds a name NUL-terminated for a call, on the caller's
// stack: syscall.BytePtrFromString allocated each, a tenth of the
// allocations of validating a source of small skills (some 30 names a
// package), which with the collector off (cmd/dalo) are pages faulted
// in. The pointer reaches the kernel as a uintptr in a call to
// syscall.RawSyscall6, which keeps it alive (go:uintptrkeepalive) and,
// nosplit, cannot move the stack before the kernel reads it.
type nameBuf [256]byte

// cstring returns name NUL-terminated, in b when it fits, else in a new
// slice; EINVAL when it holds a NUL, as syscall.BytePtrFromString.
func (b *nameBuf) cstring(name string) (*byte, error) {
	if strings.IndexByte(name, 0) >= 0 {
		return nil, syscall.EINVAL
	}
	if len(name) >= len(b) {
		return syscall.BytePtrFromString(name)
	}
	copy(b[:], name)
	b[len(name)] = 0
	return &b[0], nil
}

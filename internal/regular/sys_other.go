//go:build !linux

package regular

import "syscall"

func open(name string, flags int) (int, error) { return syscall.Open(name, flags, 0) }

func fstat(fd int, st *syscall.Stat_t) error { return syscall.Fstat(fd, st) }

func read(fd int, b []byte) (int, error) { return syscall.Read(fd, b) }

func closeFD(fd int) { syscall.Close(fd) }

//go:build linux && (arm64 || riscv64)

package rawsys

import "syscall"

// The generic system call table names fstatat(2) as it is.
const sysFstatat = syscall.SYS_FSTATAT

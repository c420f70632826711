// Package rawsys makes the short system calls on files of dalo's walks
// and reads raw (syscall.RawSyscall), on Linux, where the package has its
// calls: on amd64, arm64 and riscv64 (rawsys_linux.go); on Linux's other
// architectures it makes them through package syscall.
//
// syscall.Open, Read and the rest enter the scheduler, for a call that
// may block. A call on a local file system takes microseconds, and while
// calls kept coming the runtime's monitor woke every 20 µs to take the P
// of a goroutine it found in one and hand it to another thread, which the
// goroutine then waited to get back: validating 1,000 packages of
// bench/sourcegen's toolbox shape (130 calls a package) made 16,025
// nanosleep and 1,352 futex calls that way, 2,122 and 200 raw (strace -c).
// A raw call that blocks (a hung network mount) keeps its thread's P until
// it returns; the callers wait for it either way.
package rawsys

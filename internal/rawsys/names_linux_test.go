//go:build linux && (amd64 || arm64 || riscv64)

package rawsys

import (
	"strings"
	"syscall"
	"testing"
)

// TestNamesOnTheStack: Openat and Fstatat make a name NUL-terminated
// without allocating when it fits their buffer, and still take a longer
// one. Each allocated a copy of every name.
func TestNamesOnTheStack(t *testing.T) {
	dfd := dirOfF(t)
	var st syscall.Stat_t
	if n := testing.AllocsPerRun(100, func() {
		if err := Fstatat(dfd, "f", &st, AtSymlinkNoFollow); err != nil {
			t.Fatal(err)
		}
		fd, err := Openat(dfd, "f", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		Close(fd)
	}); n != 0 {
		t.Errorf("Fstatat and Openat of a short name made %v allocations, want 0", n)
	}
	// A name longer than the buffer: the same file through as many
	// "./" as it takes.
	long := strings.Repeat("./", 200) + "f"
	if err := Fstatat(dfd, long, &st, AtSymlinkNoFollow); err != nil || st.Size != 5 {
		t.Errorf("Fstatat of a %d-byte name: size %d, %v; want 5, nil", len(long), st.Size, err)
	}
	fd, err := Openat(dfd, long, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("Openat of a %d-byte name: %v", len(long), err)
	}
	Close(fd)
	for _, name := range []string{strings.Repeat("x", 255) + "\x00", "a\x00b", long + "\x00"} {
		if _, err := Openat(dfd, name, syscall.O_RDONLY, 0); err != syscall.EINVAL {
			t.Errorf("Openat of a %d-byte name holding NUL: %v, want EINVAL", len(name), err)
		}
	}
}

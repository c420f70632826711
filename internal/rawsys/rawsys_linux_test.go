package rawsys

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestCalls: each call does what its system call does, errors included.
func TestCalls(t *testing.T) {
	dfd := dirOfF(t)
	var st syscall.Stat_t
	if err := Fstatat(dfd, "f", &st, AtSymlinkNoFollow); err != nil || st.Size != 5 {
		t.Fatalf("Fstatat: size %d, %v; want 5, nil", st.Size, err)
	}
	if err := Fstatat(dfd, "missing", &st, 0); err != syscall.ENOENT {
		t.Errorf("Fstatat of a missing file: %v, want ENOENT", err)
	}
	if _, err := Openat(dfd, "missing", syscall.O_RDONLY, 0); err != syscall.ENOENT {
		t.Errorf("Openat of a missing file: %v, want ENOENT", err)
	}
	if _, err := Openat(dfd, "f\x00", syscall.O_RDONLY, 0); err != syscall.EINVAL {
		t.Errorf("Openat of a name holding NUL: %v, want EINVAL", err)
	}
	fd, err := Openat(dfd, "f", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		t.Errorf("Fstat: mode %o, %v; want a regular file", st.Mode, err)
	}
	buf := make([]byte, 16)
	if n, err := Read(fd, buf); err != nil || string(buf[:n]) != "hello" {
		t.Errorf("Read: %q, %v; want hello", buf[:n], err)
	}
	if n, err := Read(fd, buf); err != nil || n != 0 {
		t.Errorf("Read at the end: %d, %v; want 0, nil", n, err)
	}
	if err := Close(fd); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := Close(fd); err != syscall.EBADF {
		t.Errorf("Close again: %v, want EBADF", err)
	}
	if _, err := Read(fd, buf); err != syscall.EBADF {
		t.Errorf("Read of a closed file: %v, want EBADF", err)
	}
	dents := make([]byte, 4096)
	n, err := Getdents(dfd, dents)
	if err != nil || n == 0 {
		t.Fatalf("Getdents: %d, %v", n, err)
	}
	if n, err := Getdents(dfd, dents); err != nil || n != 0 {
		t.Errorf("Getdents at the end: %d, %v; want 0, nil", n, err)
	}
}

// dirOfF opens a new directory holding the file f of five bytes, closed
// when the test ends.
func dirOfF(t *testing.T) int {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	dfd, err := Openat(AtFDCWD, dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Close(dfd) })
	return dfd
}

// TestCallsRaw holds the package to raw calls: every function it calls of
// package syscall is RawSyscall, RawSyscall6 or BytePtrFromString.
func TestCallsRaw(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "rawsys_linux.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	raw := map[string]bool{"RawSyscall": true, "RawSyscall6": true, "BytePtrFromString": true}
	calls := 0
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "syscall" {
				calls++
				if !raw[sel.Sel.Name] {
					t.Errorf("%s: syscall.%s enters the scheduler", fset.Position(call.Pos()), sel.Sel.Name)
				}
			}
		}
		return true
	})
	if calls == 0 {
		t.Fatal("rawsys_linux.go calls nothing of package syscall")
	}
}

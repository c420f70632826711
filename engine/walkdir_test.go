package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWalkDirAgreesWithOS holds the walk's own listing and stat to
// os.ReadDir and os.Lstat: names in order, types, sizes and modes, over a
// directory of more entries than one read of them returns.
func TestWalkDirAgreesWithOS(t *testing.T) {
	dir := t.TempDir()
	for i := range 300 {
		name := filepath.Join(dir, fmt.Sprintf("file-%03d-%s", i, strings.Repeat("x", 40)))
		if err := os.WriteFile(name, make([]byte, i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, mk := range []func() error{
		func() error { return os.Mkdir(filepath.Join(dir, "sub"), 0o755) },
		func() error { return os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\n"), 0o755) },
		func() error { return os.Symlink("sub", filepath.Join(dir, "link")) },
		func() error { return syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600) },
		func() error { return os.WriteFile(filepath.Join(dir, "é ü"), nil, 0o600) },
	} {
		if err := mk(); err != nil {
			t.Fatal(err)
		}
	}
	d, err := openWalkDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	got, err := d.entries()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].name != w.Name() || got[i].typ != w.Type() {
			t.Errorf("entry %d: %q %v, want %q %v", i, got[i].name, got[i].typ, w.Name(), w.Type())
			continue
		}
		fi, err := d.info(w.Name())
		if err != nil {
			t.Fatal(err)
		}
		wfi, err := os.Lstat(filepath.Join(dir, w.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != wfi.Mode() || (wfi.Mode().IsRegular() && fi.Size() != wfi.Size()) {
			t.Errorf("%s: %v %d bytes, want %v %d", w.Name(), fi.Mode(), fi.Size(), wfi.Mode(), wfi.Size())
		}
	}
	sub, err := d.sub("link")
	if err == nil {
		sub.close()
		t.Error("a symlink opened as a directory of the walk")
	}
}

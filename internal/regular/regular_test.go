package regular

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		make func(p string) error
		want string // "" opens; else the error's text after the path
		is   error
	}{
		{"file", nil, "", nil},
		{"missing", func(string) error { return nil }, "no such file or directory", fs.ErrNotExist},
		{"symlink", func(p string) error { return os.Symlink(file, p) }, "is a symlink", ErrSymlink},
		{"directory", func(p string) error { return os.Mkdir(p, 0o755) }, " is a directory, not a regular file", nil},
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }, " is a FIFO, not a regular file", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := file
			if tc.make != nil {
				p = filepath.Join(dir, tc.name)
				if err := tc.make(p); err != nil {
					t.Skip(err)
				}
			}
			f, fi, err := Open(p)
			data, tooBig, rerr := ReadLimited(p, 4)
			if tc.want == "" {
				if err != nil || fi.Size() != 5 {
					t.Fatalf("Open = %v, %v", fi, err)
				}
				f.Close()
				if rerr != nil || string(data) != "byte" || !tooBig {
					t.Fatalf("ReadLimited to 4 bytes = %q, %t, %v; want the first 4 bytes and tooBig", data, tooBig, rerr)
				}
				if data, tooBig, err := ReadLimited(p, 5); err != nil || string(data) != "bytes" || tooBig {
					t.Fatalf("ReadLimited to 5 bytes = %q, %t, %v; want the file", data, tooBig, err)
				}
				return
			}
			if err == nil {
				f.Close()
				t.Fatalf("Open opened %s", tc.name)
			}
			if rerr == nil {
				t.Fatalf("ReadLimited read %s", tc.name)
			}
			for _, err := range []error{err, rerr} {
				if got := err.Error(); len(got) < len(tc.want) || got[len(got)-len(tc.want):] != tc.want {
					t.Errorf("error %q, want it to end %q", got, tc.want)
				}
				if tc.is != nil && !errors.Is(err, tc.is) {
					t.Errorf("error %v is not %v", err, tc.is)
				}
			}
		})
	}
}

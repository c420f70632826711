package store

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"dalo/engine"
	"dalo/plan"
)

// TestReadChecked swaps a digested file for something else, as a user or
// another process may between approve and install: the read must fail
// promptly, naming the file, without blocking or reading without bound.
func TestReadChecked(t *testing.T) {
	tests := []struct {
		name    string
		swap    func(t *testing.T, p string)
		wantErr string
	}{
		{"unchanged", func(t *testing.T, p string) {}, ""},
		{"fifo", func(t *testing.T, p string) {
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skip("no FIFOs here:", err)
			}
		}, "is a FIFO, not a regular file"},
		{"symlink to /dev/zero", func(t *testing.T, p string) {
			os.Remove(p)
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Fatal(err)
			}
		}, "is a symlink"},
		{"symlink to a regular file", func(t *testing.T, p string) {
			other := p + ".other"
			os.WriteFile(other, []byte("approved bytes\n"), 0o644)
			os.Remove(p)
			os.Symlink(other, p)
		}, "is a symlink"},
		{"grown", func(t *testing.T, p string) {
			os.WriteFile(p, []byte(strings.Repeat("approved bytes\n", 1000)), 0o644)
		}, "changed since it was digested"},
		{"same size, other bytes", func(t *testing.T, p string) {
			os.WriteFile(p, []byte("APPROVED bytes\n"), 0o644)
		}, "changed since it was digested"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "agent.md")
			os.WriteFile(p, []byte("approved bytes\n"), 0o644)
			want, err := hashFile(p)
			if err != nil {
				t.Fatal(err)
			}
			tt.swap(t, p)
			data, err := readWithin(t, p, want)
			if tt.wantErr == "" {
				if err != nil || string(data) != "approved bytes\n" {
					t.Fatalf("got %q, %v", data, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), p) {
				t.Fatalf("err = %v, want %q naming %s", err, tt.wantErr, p)
			}
		})
	}
}

// readWithin runs readChecked, failing the test if it blocks.
func readWithin(t *testing.T, p string, want plan.FileDigest) ([]byte, error) {
	t.Helper()
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		d, err := readChecked(p, want)
		done <- result{d, err}
	}()
	select {
	case r := <-done:
		return r.data, r.err
	case <-time.After(5 * time.Second):
		t.Fatalf("readChecked(%s) blocked", p)
		return nil, nil
	}
}

// TestWriteMemberSwapped installs a skill one of whose files became a FIFO
// after it was digested: install fails naming it and writes no skill.
func TestWriteMemberSwapped(t *testing.T) {
	src := filepath.Join(t.TempDir(), "skill")
	writeSized(t, src, "SKILL.md", 10)
	writeSized(t, src, "ref/notes.md", 10)
	lim := engine.Limits{PackageEntries: 8, DirectoryDepth: 2, FileBytes: 100, PackageBytes: 150}
	files, err := listFiles(src, true, &lim)
	if err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(src, "ref", "notes.md")
	os.Remove(notes)
	if err := syscall.Mkfifo(notes, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	dest := filepath.Join(t.TempDir(), "skills", "demo")
	mb := member{ref: "skill:demo", src: src, dest: dest, dir: true}
	err = writeMember(mb, files)
	if err == nil || !strings.Contains(err.Error(), notes) || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("err = %v, want one naming %s", err, notes)
	}
	if _, err := os.Lstat(dest); !os.IsNotExist(err) {
		t.Fatalf("%s was written: %v", dest, err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(dest)); len(ents) != 0 {
		t.Fatalf("left behind %v", ents)
	}

	// The same skill intact installs.
	os.Remove(notes)
	writeSized(t, src, "ref/notes.md", 10)
	if err := writeMember(mb, files); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(dest, "ref", "notes.md")); err != nil || string(got) != strings.Repeat("x", 10) {
		t.Fatalf("installed %q, %v", got, err)
	}
}

// TestCopyChecked: staging copies a file only with the approved digest; a
// file changed since approval (even to other bytes of the same size) is
// refused, and what is staged is read-only, executable as approved.
func TestCopyChecked(t *testing.T) {
	const approved = "#!/bin/sh\necho approved\n"
	for _, c := range []struct{ name, now, err string }{
		{"unchanged", approved, ""},
		{"same size, other bytes", "#!/bin/sh\necho APPROVED\n", "changed while it was staged"},
		{"grown", approved + "#\n", "changed while it was staged"},
		{"shrunk", approved[:len(approved)-1], "changed while it was staged"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			src, dst := filepath.Join(dir, "a.sh"), filepath.Join(dir, "staged", "a.sh")
			os.WriteFile(src, []byte(approved), 0o755)
			want, err := hashFile(src)
			if err != nil {
				t.Fatal(err)
			}
			want.Executable = true
			os.WriteFile(src, []byte(c.now), 0o755)
			err = copyChecked(src, dst, want)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("copyChecked: %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(dst)
			if err != nil || fi.Mode().Perm() != 0o555 {
				t.Errorf("staged %v %v, want mode 0555", fi.Mode(), err)
			}
		})
	}
}
